"""The reliability diagram: stated confidence against observed accuracy, with Wilson intervals."""

from __future__ import annotations

import matplotlib as mpl
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from dabench_analysis import schema
from dabench_analysis.figures.theme import OKABE_ITO, RC_PARAMS, _err, _note
from dabench_analysis.figures.theme import axes_or_new as _axes
from dabench_analysis.schema import require_columns
from dabench_analysis.stats import calibration


def reliability_diagram(
    tasks: pd.DataFrame,
    *,
    confidence: str = "confidence_score",
    threshold: float = schema.SUCCESS_THRESHOLD,
    ax: Axes | None = None,
) -> Figure:
    """Reliability diagram over the seed's five calibration buckets, with Wilson intervals.

    Parameters
    ----------
    tasks : DataFrame
        With ``confidence`` ([0, 1]) and ``final_score``; correct = final_score ≥ threshold.
    confidence : str
        Confidence column.
    threshold : float
        Correctness threshold.
    ax : Axes, optional

    Returns
    -------
    Figure
        Accuracy per bucket (bars at the bucket, error bars = Wilson CI), mean confidence
        (markers), the diagonal of perfect calibration; ECE and n in the title; empty buckets
        are labelled n = 0.

    Raises
    ------
    ValueError
        For a missing column.
    """
    require_columns(tasks, [confidence, "final_score"])
    ax = _axes(ax)
    table = calibration.calibration_table(tasks, confidence=confidence, threshold=threshold)
    if table["n"].sum() == 0:
        return _note(ax, "no tasks with a confidence score")
    ece = calibration.expected_calibration_error(tasks, confidence=confidence,
                                                 threshold=threshold)
    mid = ((table["lower"] + table["upper"]) / 2).to_numpy()
    has = table["n"].to_numpy() > 0
    with mpl.rc_context(RC_PARAMS):
        ax.plot([0, 1], [0, 1], color="0.5", linestyle="--", linewidth=0.8, label="perfect")
        ax.bar(mid[has], table["accuracy"][has], width=0.18, color=OKABE_ITO[0], alpha=0.8,
               yerr=_err(table["accuracy"][has], table["ci_low"][has], table["ci_high"][has]),
               capsize=2, label="accuracy (95% CI)")
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
