"""The reliability diagram: stated confidence against observed accuracy, with Wilson intervals.

Bins come from :func:`dabench_analysis.stats.calibration.calibration_table`, so the diagram, the
calibration table and the ECE in its title share the package's one binning rule.
"""

from __future__ import annotations

import matplotlib as mpl
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from dabench_analysis import schema
from dabench_analysis.figures.theme import OKABE_ITO, RC_PARAMS, _ci_label, _err, _note
from dabench_analysis.figures.theme import axes_or_new as _axes
from dabench_analysis.schema import require_columns
from dabench_analysis.stats import calibration, check_threshold


def reliability_diagram(
    tasks: pd.DataFrame,
    *,
    confidence: str = "confidence_score",
    threshold: float = schema.SUCCESS_THRESHOLD,
    n_bins: int | None = None,
    ci: float = 0.95,
    ax: Axes | None = None,
) -> Figure:
    """Reliability diagram over the seed's five calibration buckets (or equal-width bins), with
    Wilson intervals.

    Parameters
    ----------
    tasks : DataFrame
        With ``confidence`` ([0, 1]) and ``final_score``; correct = final_score ≥ threshold.
    confidence : str
        Confidence column.
    threshold : float
        Correctness threshold, in (0, 1].
    n_bins : int or None
        None: the seed's five buckets; an integer: that many equal-width bins.
    ci : float
        Level of the Wilson intervals, in (0, 1); the legend names it ("90% CI" for 0.9).
    ax : Axes, optional
        Draw here; default a new one-column figure.

    Returns
    -------
    Figure
        Accuracy per bucket (bars at the bucket, error bars = Wilson CI), mean confidence
        (markers), the diagonal of perfect calibration; ECE and n in the title; empty buckets
        are labelled n = 0.

    Raises
    ------
    ValueError
        For a missing column, a ``threshold`` outside (0, 1] or a ``ci`` outside (0, 1).

    Notes
    -----
    Bars, n and ECE come from one :func:`~dabench_analysis.stats.calibration.calibration_table`
    ([lo, hi) bins, the last closed, edges decided exactly): ECE = Σ_b (n_b/N)|acc_b − conf_b|.

    Examples
    --------
    >>> df = pd.DataFrame({"confidence_score": [0.7, 0.7, 0.3], "final_score": [1.0, 0.0, 0.0]})
    >>> reliability_diagram(df, n_bins=10).axes[0].get_title()
    'Reliability (ECE = 0.233, n = 3)'
    """
    require_columns(tasks, [confidence, "final_score"])
    threshold = check_threshold(threshold)
    label = _ci_label(ci)
    ax = _axes(ax)
    table = calibration.calibration_table(tasks, confidence=confidence, threshold=threshold,
                                          n_bins=n_bins, ci=ci)
    if table["n"].sum() == 0:
        return _note(ax, "no tasks with a confidence score")
    ece = calibration.expected_calibration_error(tasks, confidence=confidence,
                                                 threshold=threshold, n_bins=n_bins)
    mid = ((table["lower"] + table["upper"]) / 2).to_numpy()
    has = table["n"].to_numpy() > 0
    with mpl.rc_context(RC_PARAMS):
        ax.plot([0, 1], [0, 1], color="0.5", linestyle="--", linewidth=0.8, label="perfect")
        width = 0.9 * (table["upper"] - table["lower"]).to_numpy()[has]
        ax.bar(mid[has], table["accuracy"][has], width=width, color=OKABE_ITO[0], alpha=0.8,
               yerr=_err(table["accuracy"][has], table["ci_low"][has], table["ci_high"][has]),
               capsize=2, label=f"accuracy ({label})")
        ax.plot(table["mean_confidence"][has], table["accuracy"][has], "o", color=OKABE_ITO[1],
                markersize=3, label="mean confidence")
        for x, n in zip(mid, table["n"], strict=True):
            ax.text(x, 1.0, f"n={n}", ha="center", va="bottom", fontsize=5.5, color="0.2",
                    transform=ax.get_xaxis_transform())
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1.05)
        ax.set_xlabel("Confidence")
        ax.set_ylabel(f"Accuracy (final_score ≥ {threshold})")
        ax.set_title(f"Reliability (ECE = {ece:.3f}, n = {int(table['n'].sum())})", pad=10)
        ax.legend(loc="upper left", frameon=False)
    return ax.figure
