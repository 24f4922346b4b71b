# Over 400 lines (<= 500): the paper's Tables 1-4 side by side, each with its declared inputs.
"""The paper's tables (seed 000 §Statistical Analysis for Papers), as tidy frames.

Frames in, frames out: no IO and no plotting. Every mean comes with an interval computed by
:mod:`dabench_analysis.stats` and named in a ``method`` column: logit-t for means of [0, 1] scores
(never outside [0, 1]), Wilson for proportions, t for seconds and tokens. Each takes a frame,
a Run or a Runs and ``by=`` (``"run_id"``: one table per run, stacked); several runs without
``by`` are pooled with a :class:`~dabench_analysis.tables.PooledRunsWarning`, never silently
(:func:`~dabench_analysis.tables._common.takes_run`). A table with a ``threshold`` takes it as an
explicit argument (default 0.8).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from dabench_analysis import schema, stats
from dabench_analysis.schema.needs import needs
from dabench_analysis.stats.recorded import cost_recorded
from dabench_analysis.tables._common import TasksLike, correct_mask, takes_run

#: The ``by`` argument of every table here, described once.
_BY_DOC = """by : str, sequence of str or None
        Grouping columns, e.g. ``"run_id"`` (one table per run, stacked, groups in sorted order,
        the ``by`` columns first). Default None: one table of every row; when the rows hold
        several runs they are pooled, with a PooledRunsWarning naming them."""


@needs("final_score", uses=("analyst_score", "answer_f1", "autonomy_score", "tool_efficiency"),
       trials="any")
@takes_run(named=("metrics", "by"), trials=True)
def main_results(
    tasks: TasksLike,
    *,
    metrics: Sequence[str] = tuple(schema.columns.MAIN_METRICS),
    ci: float = 0.95,
    by: str | Sequence[str] | None = None,
) -> pd.DataFrame:
    """Table 1 — main results: mean ± std of the primary metrics, with an interval of the mean.

    Parameters
    ----------
    tasks : DataFrame, Run or Runs
        One row per task (``run.tasks``; a Run or Runs gives its ``tasks``) with the metric
        columns, each in [0, 1].
    metrics : sequence of str
        Default: final_score, analyst_score, answer_f1, autonomy_score, tool_efficiency (seed 000
        §Recommended Metrics for Publication, Table 1).
    ci : float
        Confidence level of the interval of the mean.
    {by}

    Returns
    -------
    DataFrame
        One row per metric (per group and metric with ``by``): the ``by`` columns, then
        ``metric, n, mean, std, sem, ci_low, ci_high, method`` (n counts
        non-missing values; std is the sample standard deviation, ddof = 1; ``method`` names the
        interval: "logit t" for [0, 1] scores, "t" for unbounded metrics).

    Raises
    ------
    ValueError
        If a metric or a ``by`` column is not a column of ``tasks``.

    Notes
    -----
    Intervals from :func:`dabench_analysis.stats.describe`: for [0, 1] scores the logit-t
    interval expit(logit(m) ± t_{n-1, (1+ci)/2} · (sd/√n) / (m(1 − m))), which stays inside
    [0, 1] where mean ± t · sd/√n passed 1 (see :func:`dabench_analysis.stats.mean_summary`).
    With repeated trials (a ``trial`` column, several rows per task) each task's metrics are
    first averaged over its trials, so n counts tasks and the interval is over tasks (Miller
    2024, "Adding Error Bars to Evals", §3: trials are not independent samples); ``method``
    says so.

    Examples
    --------
    >>> t = pd.DataFrame({"final_score": [1.0, 0.5, 0.0], "answer_f1": [1.0, 1.0, 0.4]})
    >>> main_results(t, metrics=["final_score"])[["metric", "n", "mean", "std"]]
            metric  n  mean  std
    0  final_score  3   0.5  0.5
    >>> two = pd.concat([t.assign(run_id="r1"), t.assign(run_id="r2", final_score=1.0)])
    >>> main_results(two, metrics=["final_score"], by="run_id")[["run_id", "n", "mean"]]
      run_id  n  mean
    0     r1  3   0.5
    1     r2  3   1.0
    """
    by_cols = [] if by is None else [by] if isinstance(by, str) else list(by)
    keys = [*by_cols, *(["run_id"] if "run_id" in tasks and "run_id" not in by_cols else []),
            "task_id"]
    trials = "trial" in tasks and "task_id" in tasks and tasks.duplicated(keys).any()
    if trials:  # one row per task: its mean over trials
        tasks = tasks.groupby(keys, sort=False, observed=True)[list(metrics)].agg(
            lambda v: pd.to_numeric(v, errors="coerce").mean()).reset_index()
    out = stats.describe(tasks, list(metrics), by=by_cols or None, ci=ci)
    if trials:
        out["method"] = out["method"] + " over tasks (each task's mean over its trials)"
    return out[[*by_cols, "metric", "n", "mean", "std", "sem", "ci_low", "ci_high",
                "method"]].reset_index(drop=True)


main_results.__doc__ = main_results.__doc__.replace("{by}", _BY_DOC)


def _rate(flags: pd.Series) -> tuple[int, float]:
    valid = flags.dropna().astype(bool)
    return int(valid.sum()), len(valid)


_T2_COLUMNS = ["difficulty", "n", "execution_success_rate", "answer_accuracy",
               "answer_accuracy_ci_low", "answer_accuracy_ci_high", "mean_final_score",
               "mean_final_score_ci_low", "mean_final_score_ci_high", "mean_runtime_s",
               "mean_runtime_s_ci_low", "mean_runtime_s_ci_high", "mean_tokens",
               "mean_tokens_ci_low", "mean_tokens_ci_high", "method"]


@needs("difficulty", "execution_success", "final_score", "execution_time", "total_tokens")
@takes_run(grouped=True)
def difficulty_breakdown(
    tasks: TasksLike,
    *,
    threshold: float = schema.SUCCESS_THRESHOLD,
    empty_levels: str = "omit",
    ci: float = 0.95,
    by: str | Sequence[str] | None = None,
) -> pd.DataFrame:
    """Table 2 — breakdown by difficulty, with cost (seed 000 §Breakdown by Difficulty, Phase 0
    Task 6).

    Parameters
    ----------
    tasks : DataFrame, Run or Runs
        One row per task with ``difficulty``, ``execution_success`` (flag), ``final_score``
        ([0, 1]), ``execution_time`` (seconds, wall clock) and ``total_tokens`` (tokens).
    threshold : float
        Answer accuracy = share of tasks with ``final_score >= threshold``, in (0, 1]; default 0.8 (seed 000).
    empty_levels : {"omit", "keep"}
        Difficulty levels without tasks are left out (default), or kept as rows with n = 0 and
        missing rates (which :func:`dabench_analysis.export.save_table` prints as "n/a").
    ci : float
        Level of every interval.
    {by}

    Returns
    -------
    DataFrame
        One row per difficulty (per group and difficulty with ``by``, the ``by`` columns
        first) in the order Easy, Medium, Hard, Extreme: ``difficulty, n,
        execution_success_rate, answer_accuracy, answer_accuracy_ci_low,
        answer_accuracy_ci_high, mean_final_score, mean_final_score_ci_low,
        mean_final_score_ci_high, mean_runtime_s, mean_runtime_s_ci_low, mean_runtime_s_ci_high,
        mean_tokens, mean_tokens_ci_low, mean_tokens_ci_high, method``. Rates are in [0, 1] and
        leave out tasks whose flag or score is missing; means carry intervals (n/a for n < 2);
        runtime or tokens the run did not record (all missing or all 0:
        :func:`~dabench_analysis.stats.recorded.cost_recorded`) are NaN. ``method`` names
        them: Wilson for answer accuracy, logit t for the mean final score (Clopper-Pearson
        bound when every score is 0 or 1), t for runtime and tokens ("not recorded").

    Raises
    ------
    ValueError
        For a missing column, an unknown ``empty_levels``, a difficulty outside the four
        levels or a ``threshold`` outside (0, 1].

    Notes
    -----
    The mean final score's interval is the logit-t interval of
    :func:`dabench_analysis.stats.mean_summary`, inside [0, 1]; runtime and tokens are
    unbounded and keep mean ± t · sd/√n (R ``t.test``). Accuracy: Wilson (R ``prop.test(k, n,
    correct = FALSE)``).

    Examples
    --------
    >>> t = pd.DataFrame({"difficulty": ["Hard", "Easy", "Medium", "Easy", "Hard"],
    ...                   "execution_success": [1, 1, 1, 1, 1],
    ...                   "final_score": [0.0, 1.0, 1.0, 1.0, 1.0],
    ...                   "execution_time": [10.0, 2.0, 4.0, 4.0, 20.0],
    ...                   "total_tokens": [900, 100, 300, 300, 1100]})
    >>> difficulty_breakdown(t)[["difficulty", "n", "answer_accuracy", "mean_runtime_s"]]
      difficulty  n  answer_accuracy  mean_runtime_s
    0       Easy  2              1.0             3.0
    1     Medium  1              1.0             4.0
    2       Hard  2              0.5            15.0
    """
    if empty_levels not in ("omit", "keep"):
        raise ValueError(f"empty_levels must be 'omit' or 'keep', got {empty_levels!r}")
    return _difficulty_table(tasks, threshold, empty_levels, ci)


difficulty_breakdown.__doc__ = difficulty_breakdown.__doc__.replace("{by}", _BY_DOC)


def _difficulty_table(tasks: pd.DataFrame, threshold: float, empty_levels: str,
                      ci: float) -> pd.DataFrame:
    level = tasks["difficulty"].astype("string").str.strip()
    unknown = sorted(set(level.dropna()) - set(schema.DIFFICULTY_ORDER))
    if unknown:
        raise ValueError(f"difficulty values {unknown} are not among "
                         f"{', '.join(schema.DIFFICULTY_ORDER)}")
    correct = correct_mask(tasks, threshold=threshold)
    recorded = {c: bool(cost_recorded(tasks, c, by=None).iloc[0])
                for c in ("execution_time", "total_tokens")}
    rows = []
    used = tasks[["execution_success", "final_score", "execution_time", "total_tokens"]]
    for lvl in schema.DIFFICULTY_ORDER:
        at = (level == lvl).fillna(False).to_numpy()
        sub = used[at]  # (the columns read: not every column of the level's rows)
        if sub.empty and empty_levels == "omit":
            continue
        k, n_ok = _rate(correct[at])  # by position: a stacked frame may repeat index labels
        ex_k, ex_n = _rate(sub["execution_success"].astype("boolean"))
        acc = stats.proportion_ci(k, n_ok, ci=ci) if n_ok else None
        score = stats.describe(sub, ["final_score"], ci=ci).iloc[0] if len(sub) else None
        cost = stats.describe(sub[["execution_time", "total_tokens"]].astype("float64"),
                              ["execution_time", "total_tokens"], ci=ci).set_index("metric")
        for col, rec in recorded.items():  # not recorded: no mean 0 (stats.recorded)
            if not rec:
                cost.loc[col, ["mean", "ci_low", "ci_high"]] = np.nan
                cost.loc[col, "method"] = "not recorded"
        rows.append({
            "difficulty": lvl, "n": len(sub),
            "execution_success_rate": ex_k / ex_n if ex_n else np.nan,
            "answer_accuracy": k / n_ok if n_ok else np.nan,
            "answer_accuracy_ci_low": acc["ci_low"].iloc[0] if acc is not None else np.nan,
            "answer_accuracy_ci_high": acc["ci_high"].iloc[0] if acc is not None else np.nan,
            "mean_final_score": score["mean"] if score is not None else np.nan,
            "mean_final_score_ci_low": score["ci_low"] if score is not None else np.nan,
            "mean_final_score_ci_high": score["ci_high"] if score is not None else np.nan,
            "mean_runtime_s": cost.loc["execution_time", "mean"],
            "mean_runtime_s_ci_low": cost.loc["execution_time", "ci_low"],
            "mean_runtime_s_ci_high": cost.loc["execution_time", "ci_high"],
            "mean_tokens": cost.loc["total_tokens", "mean"],
            "mean_tokens_ci_low": cost.loc["total_tokens", "ci_low"],
            "mean_tokens_ci_high": cost.loc["total_tokens", "ci_high"],
            "method": (f"answer accuracy: Wilson; final score: "
                       f"{score['method'] if score is not None else 'logit t'}; "
                       + _cost_method(cost)),
        })
    out = pd.DataFrame(rows, columns=_T2_COLUMNS)
    out["difficulty"] = out["difficulty"].astype(schema.TASK_COLUMNS["difficulty"].dtype)
    out["n"] = out["n"].astype("int64")
    return out


def _cost_method(cost: pd.DataFrame) -> str:
    """``runtime, tokens: t``, or each on its own when one was not recorded."""
    run, tok = cost.loc["execution_time", "method"], cost.loc["total_tokens", "method"]
    return f"runtime, tokens: {run}" if run == tok else f"runtime: {run}; tokens: {tok}"


def _wide(desc: pd.DataFrame, by: str) -> pd.DataFrame:
    """describe() output (one row per group x metric) -> one row per group; each metric's
    interval method in ``<metric>_method``, so a table without a metric is the full table
    without that metric's columns."""
    parts = []
    for metric, sub in desc.groupby("metric", sort=False):
        sub = sub.set_index(by)[["mean", "std", "ci_low", "ci_high", "method"]]
        parts.append(sub.add_prefix(f"{metric}_"))
    n = desc.groupby(by, sort=False, observed=False)["n"].max().rename("n")
    return pd.concat([n, *parts], axis=1).reset_index()


@needs("task_type", "final_score", uses=("analyst_score",))
@takes_run(named=("metrics",), grouped=True)
def task_type_breakdown(
    tasks: TasksLike,
    *,
    metrics: Sequence[str] = ("final_score", "analyst_score"),
    ci: float = 0.95,
    by: str | Sequence[str] | None = None,
) -> pd.DataFrame:
    """Table 3 — metrics by task type (seed: ``groupby('task_type')[...].agg(['mean', 'std',
    'count'])``), with intervals that respect each metric's range.

    Parameters
    ----------
    tasks : DataFrame, Run or Runs
        One row per task with ``task_type`` and the metric columns ([0, 1] scores).
    metrics : sequence of str
        Default final_score and analyst_score.
    ci : float
        Interval level.
    {by}

    Returns
    -------
    DataFrame
        One row per task type (alphabetical; per group and task type with ``by``, the ``by``
        columns first): ``task_type, n``, then for each metric
        ``<metric>_mean, <metric>_std, <metric>_ci_low, <metric>_ci_high, <metric>_method``
        (the interval's method: "logit t" for [0, 1] scores).

    Raises
    ------
    ValueError
        For a missing column.

    Notes
    -----
    Intervals by :func:`dabench_analysis.stats.describe`: logit t for [0, 1] scores (inside
    [0, 1]; a task type whose scores are all 1 gets [(α/2)^(1/n), 1]), t for unbounded metrics.

    Examples
    --------
    >>> t = pd.DataFrame({"task_type": ["join", "join", "ranking"],
    ...                   "final_score": [1.0, 0.0, 0.5], "analyst_score": [0.5, 0.5, 0.5]})
    >>> task_type_breakdown(t)[["task_type", "n", "final_score_mean"]]
      task_type  n  final_score_mean
    0      join  2               0.5
    1   ranking  1               0.5
    """
    data = tasks.assign(task_type=tasks["task_type"].astype("string").fillna("(missing)"))
    return _wide(stats.describe(data, list(metrics), by="task_type", ci=ci), "task_type")


task_type_breakdown.__doc__ = task_type_breakdown.__doc__.replace("{by}", _BY_DOC)


@needs("specialist_participation", "final_score", uses=("autonomy_score",))
@takes_run(named=("metrics",), grouped=True)
def specialist_participation(
    tasks: TasksLike,
    *,
    metrics: Sequence[str] = ("final_score", "autonomy_score"),
    threshold: float = schema.SUCCESS_THRESHOLD,
    ci: float = 0.95,
    by: str | Sequence[str] | None = None,
) -> pd.DataFrame:
    """Table 4 — multi-agent performance by specialist participation (seed:
    ``groupby('specialist_participation')[['final_score', 'autonomy_score']].mean()``).

    Parameters
    ----------
    tasks : DataFrame, Run or Runs
        With ``specialist_participation`` (share of the three specialists used, [0, 1]), the
        metric columns and ``final_score``.
    metrics : sequence of str
        Metrics summarised per level.
    threshold : float
        Answer accuracy = share with ``final_score >= threshold``; default 0.8.
    ci : float
        Interval level.
    {by}

    Returns
    -------
    DataFrame
        One row per observed participation level, ascending (per group and level with ``by``,
        the ``by`` columns first): ``specialist_participation``,
        ``specialists_used`` (the level as "k of 3"), ``n``, ``answer_accuracy`` with Wilson
        ``answer_accuracy_ci_low/high``, ``answer_accuracy_method`` ("Wilson"), and
        ``<metric>_mean/_std/_ci_low/_ci_high/_method``.

    Raises
    ------
    ValueError
        For a missing column or a ``threshold`` outside (0, 1].

    Notes
    -----
    Intervals as in :func:`task_type_breakdown`; answer accuracy has the Wilson interval.

    Examples
    --------
    >>> t = pd.DataFrame({"specialist_participation": [1/3, 1.0, 1.0],
    ...                   "final_score": [0.5, 1.0, 0.9], "autonomy_score": [1.0, 1.0, 1.0]})
    >>> specialist_participation(t)[["specialists_used", "n", "answer_accuracy"]]
      specialists_used  n  answer_accuracy
    0           1 of 3  1              0.0
    1           3 of 3  2              1.0
    """
    return _participation_table(tasks, metrics, threshold, ci)


specialist_participation.__doc__ = specialist_participation.__doc__.replace("{by}", _BY_DOC)


def _participation_table(tasks: pd.DataFrame, metrics: Sequence[str], threshold: float,
                         ci: float) -> pd.DataFrame:
    level = tasks["specialist_participation"].astype("float64").round(4)
    data = tasks.assign(specialist_participation=level).dropna(
        subset=["specialist_participation"])
    wide = _wide(stats.describe(data, list(metrics), by="specialist_participation", ci=ci),
                 "specialist_participation").sort_values("specialist_participation")
    correct = correct_mask(data, threshold=threshold)
    acc = []
    for lvl in wide["specialist_participation"]:
        ok = correct[(data["specialist_participation"] == lvl).to_numpy()].dropna().astype(bool)
        interval = stats.proportion_ci(int(ok.sum()), len(ok), ci=ci)
        acc.append((ok.mean(), interval["ci_low"].iloc[0], interval["ci_high"].iloc[0]))
    acc = np.array(acc, dtype=float).reshape(-1, 3)
    wide.insert(1, "specialists_used", [f"{round(v * 3)} of 3" for v in
                                        wide["specialist_participation"]])
    for i, name in enumerate(["answer_accuracy", "answer_accuracy_ci_low",
                              "answer_accuracy_ci_high"]):
        wide.insert(3 + i, name, acc[:, i])
    wide.insert(6, "answer_accuracy_method", "Wilson")
    return wide.reset_index(drop=True)
