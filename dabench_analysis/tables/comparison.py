"""Baseline vs proposed as tables: per-difficulty paired tests and per-task changes."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from dabench_analysis import schema, stats
from dabench_analysis.schema import require_columns
from dabench_analysis.schema.needs import needs
from dabench_analysis.stats._inputs import unique_key
from dabench_analysis.tables._common import TasksLike, takes_run


@needs("task_id", "difficulty", "final_score", inputs=2)
@takes_run(paired=True, named=("on", "metric"))
def by_difficulty(
    baseline: TasksLike,
    proposed: TasksLike,
    *,
    metric: str = "final_score",
    correction: str = "holm",
    on: str = "task_id",
) -> pd.DataFrame:
    """Paired comparison of ``metric`` within each difficulty level, corrected across levels.

    Parameters
    ----------
    baseline, proposed : DataFrame or Run
        The two runs (or their ``run.tasks``; a Runs of one run) with ``on``, ``difficulty``
        and ``metric``. The level of a task is taken from the baseline.
    metric : str
        Score to compare ([0, 1]).
    correction : str
        Multiple-comparison correction across levels (:func:`stats.adjust_pvalues`).
    on : str
        Task key.

    Returns
    -------
    DataFrame
        One row per difficulty with tasks, in order: ``difficulty`` then the columns of
        :func:`stats.paired_comparison` and ``p_adjusted``, ``correction``.

    Raises
    ------
    ValueError
        For a missing column, or a side holding several runs.
    """
    require_columns(baseline, ["difficulty"], what="baseline")
    unique_key(baseline, on, "baseline")
    rows = []
    level = baseline.set_index(on)["difficulty"].astype("string")
    for lvl in schema.DIFFICULTY_ORDER:
        ids = set(level.index[(level == lvl).fillna(False).to_numpy()])
        if not ids:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", stats.StatisticsWarning)
            res = stats.paired_comparison(baseline[baseline[on].isin(ids)],
                                          proposed[proposed[on].isin(ids)], metric=metric, on=on)
        rows.append(res.assign(difficulty=lvl))
    out = pd.concat(rows, ignore_index=True)
    out.insert(0, "difficulty", out.pop("difficulty"))
    out["p_adjusted"] = stats.adjust_pvalues(out["p_value"].to_numpy(),
                                             method=correction).p_adjusted
    out["correction"] = correction
    return out


@needs("task_id", "final_score", inputs=2)
@takes_run(paired=True, named=("on", "metric"))
def task_changes(
    baseline: TasksLike,
    proposed: TasksLike,
    *,
    metric: str = "final_score",
    on: str = "task_id",
    threshold: float = schema.SUCCESS_THRESHOLD,
) -> pd.DataFrame:
    """Per task: baseline and proposed score, difference, and whether correctness flipped.

    Parameters
    ----------
    baseline, proposed : DataFrame or Run
        Task frames (or runs; a Runs of one run) with ``on`` and ``metric`` (and
        ``difficulty``, copied when present); ``on`` unique in each.
    metric : str
        Score column ([0, 1]).
    on : str
        Task key; only tasks in both runs are listed.
    threshold : float
        Correct means ``metric >= threshold`` (:func:`dabench_analysis.schema.correct`; a
        missing score counts as not correct); default 0.8.

    Returns
    -------
    DataFrame
        ``task_id, difficulty, baseline, proposed, diff, change`` with change ``improved`` /
        ``regressed`` / ``unchanged`` (by the sign of diff) and ``flip`` (``fixed`` when the task
        became correct, ``broken`` when it stopped being correct, else ""), sorted by diff.

    Raises
    ------
    ValueError
        A missing column, a ``threshold`` outside (0, 1], or a task key that repeats (e.g. a
        side holding several runs).

    Examples
    --------
    >>> b = pd.DataFrame({"task_id": ["a", "b", "c"], "final_score": [0.2, 0.9, 0.5]})
    >>> p = pd.DataFrame({"task_id": ["a", "b", "c"], "final_score": [0.9, 0.7, 0.5]})
    >>> task_changes(b, p)[["task_id", "change", "flip"]].values.tolist()
    [['b', 'regressed', 'broken'], ['c', 'unchanged', ''], ['a', 'improved', 'fixed']]
    """
    for name, frame in (("baseline", baseline), ("proposed", proposed)):
        unique_key(frame, on, name)
    keep = [on, metric] + (["difficulty"] if "difficulty" in baseline else [])
    merged = baseline[keep].merge(proposed[[on, metric]], on=on, suffixes=("_b", "_p"))
    b, p = merged[f"{metric}_b"].astype("float64"), merged[f"{metric}_p"].astype("float64")
    out = pd.DataFrame({on: merged[on],
                        "difficulty": merged["difficulty"] if "difficulty" in merged else pd.NA,
                        "baseline": b, "proposed": p, "diff": p - b})
    out["change"] = np.select([out["diff"] > 0, out["diff"] < 0], ["improved", "regressed"],
                              "unchanged")
    out.loc[out["diff"].isna(), "change"] = "unknown"
    cb, cp = (schema.correct(s, threshold).fillna(False).to_numpy(dtype=bool) for s in (b, p))
    out["flip"] = np.select([~cb & cp, cb & ~cp], ["fixed", "broken"], "")
    return out.sort_values(["diff", on], kind="stable").reset_index(drop=True)
