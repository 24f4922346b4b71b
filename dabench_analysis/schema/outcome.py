"""The one outcome rule: a task is *correct* when ``final_score >= success_threshold``.

Every table, summary, paragraph, comparison, sweep and the run-quality score calls
:func:`correct`; no other module compares ``final_score`` with a threshold. (The validation
rules that the eval-v2 guide itself defines with 0.8 — ``final_answer_correct``,
``outcome_status``, ``confidence_correct`` — check what the harness wrote and use
:data:`~dabench_analysis.schema.SUCCESS_THRESHOLD` through their check, not the analysis'
threshold.)
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dabench_analysis.schema.columns import SUCCESS_THRESHOLD, check_threshold


def correct(scores, threshold: float = SUCCESS_THRESHOLD) -> pd.Series:
    """Answer correctness per task: ``score >= threshold``; a missing score stays <NA>.

    Parameters
    ----------
    scores : Series or array-like of float
        ``final_score`` per task, on the [0, 1] scale (NaN or <NA> where missing).
    threshold : float
        Success threshold in (0, 1]; default :data:`SUCCESS_THRESHOLD` (0.8, seed 000
        §Breakdown by Difficulty).

    Returns
    -------
    Series of pandas ``boolean``
        Same index as ``scores`` (a RangeIndex for arrays); <NA> where the score is missing.

    Raises
    ------
    ValueError
        A threshold outside (0, 1] (:func:`check_threshold`), or scores that are not numbers.

    Examples
    --------
    >>> correct(pd.Series([0.9, 0.8, 0.5, None])).tolist()
    [True, True, False, <NA>]
    >>> correct([0.7, 0.75], threshold=0.7).tolist()
    [True, True]
    """
    t = check_threshold(threshold)
    s = scores if isinstance(scores, pd.Series) else pd.Series(scores)
    try:
        values = pd.to_numeric(s, errors="raise").astype("Float64")
    except (TypeError, ValueError) as exc:
        raise ValueError(f"final_score must be numbers on the [0, 1] scale: {exc}") from None
    arr = values.to_numpy(dtype="float64", na_value=np.nan)
    with np.errstate(invalid="ignore"):
        out = pd.array(arr >= t, dtype="boolean")
    out[np.isnan(arr)] = pd.NA
    return pd.Series(out, index=s.index, name=s.name)
