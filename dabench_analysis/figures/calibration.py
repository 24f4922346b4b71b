"""The reliability diagram: stated confidence against observed accuracy, with Wilson intervals.

Bins come from :func:`dabench_analysis.stats.calibration.calibration_table`, so the diagram, the
calibration table and the ECE in its title share the package's one binning rule. Bins holding
fewer than ``min_n`` tasks are drawn in grey: their accuracy is 0 or 1 by construction more often
than not, and would otherwise dominate the eye (their weight in the ECE is n_b / N).
"""

from __future__ import annotations

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from dabench_analysis import schema
from dabench_analysis.figures._theme import OKABE_ITO, RC_PARAMS, _ci_label, _err, _note
from dabench_analysis.figures._theme import axes_or_new as _axes
from dabench_analysis.schema.needs import needs
from dabench_analysis.schema.numbers import format_estimate
from dabench_analysis.stats import calibration
from dabench_analysis.tables._common import takes_run


@needs("confidence_score", "final_score")
@takes_run(named=("confidence",))
def reliability_diagram(
    tasks: pd.DataFrame,
    *,
    confidence: str = "confidence_score",
    threshold: float = schema.SUCCESS_THRESHOLD,
    n_bins: int | None = None,
    ci: float = 0.95,
    min_n: int = 5,
    ax: Axes | None = None,
) -> Axes:
    """Reliability diagram over the seed's five calibration buckets (or equal-width bins), with
    Wilson intervals.

    Parameters
    ----------
    tasks : DataFrame, Run or Runs
        With ``confidence`` ([0, 1]) and ``final_score``; correct = final_score ≥ threshold.
        A Run or Runs gives its ``tasks``.
    confidence : str
        Confidence column.
    threshold : float
        Correctness threshold, in (0, 1].
    n_bins : int or None
        None: the seed's five buckets; an integer: that many equal-width bins.
    ci : float
        Level of the Wilson intervals, in (0, 1); the legend names it ("90% CI" for 0.9).
    min_n : int
        Bins with fewer tasks than this are drawn in light grey (legend "n < min_n"); 0 draws
        every bin alike.
    ax : Axes, optional
        Draw here; default a new one-column figure.

    Returns
    -------
    Axes
        Accuracy per bucket (bars at the bucket, error bars = Wilson CI; blue for bins with at
        least ``min_n`` tasks, light grey below), mean confidence (markers), the diagonal of
        perfect calibration; ECE and n in the title; every bucket's n above it (empty buckets
        "n=0", no bar).

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
    >>> reliability_diagram(df, n_bins=10).get_title()
    'Reliability (ECE = 0.233, n = 3)'
    """
    label = _ci_label(ci)
    ax = _axes(ax)
    table = calibration.calibration_table(tasks, confidence=confidence, threshold=threshold,
                                          n_bins=n_bins, ci=ci)
    if table["n"].sum() == 0:
        return _note(ax, "no tasks with a confidence score")
    ece = calibration.expected_calibration_error(tasks, confidence=confidence,
                                                 threshold=threshold, n_bins=n_bins).estimate
    mid = ((table["lower"] + table["upper"]) / 2).to_numpy()
    n = table["n"].to_numpy()
    with mpl.rc_context(RC_PARAMS):
        ax.plot([0, 1], [0, 1], color="0.5", linestyle="--", linewidth=0.8, label="perfect")
        for rows, colour, text in ((n >= max(min_n, 1), OKABE_ITO[0], f"accuracy ({label})"),
                                   ((n > 0) & (n < min_n), "0.78", f"accuracy, n < {min_n}")):
            if rows.any():
                _bars(ax, table[rows], mid[rows], colour, text)
        ax.plot(table["mean_confidence"][n > 0], table["accuracy"][n > 0], "o",
                color=OKABE_ITO[1], markersize=3, label="mean confidence", zorder=3)
        for x, k in zip(mid, n, strict=True):
            ax.text(x, 1.0, f"n={k}", ha="center", va="bottom", fontsize=5.5,
                    color="0.2" if k >= min_n else "0.5", transform=ax.get_xaxis_transform())
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1.05)
        ax.set_xlabel("Confidence")
        ax.set_ylabel(f"Accuracy (final_score ≥ {threshold})")
        ax.set_title(f"Reliability (ECE = {format_estimate(ece)}, n = {int(n.sum())})", pad=10)
        ax.legend(loc="upper left", frameon=True, framealpha=0.85, edgecolor="none")
    return ax


def _bars(ax: Axes, table: pd.DataFrame, mid: np.ndarray, colour: str, text: str) -> None:
    width = 0.9 * (table["upper"] - table["lower"]).to_numpy()
    ax.bar(mid, table["accuracy"], width=width, color=colour, alpha=0.8, label=text,
           yerr=_err(table["accuracy"], table["ci_low"], table["ci_high"]), capsize=2,
           error_kw={"ecolor": "0.15" if colour != "0.78" else "0.55"})
