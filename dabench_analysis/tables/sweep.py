# Over 400 lines (under 500): one concept, the sweep's run-level tables (shared tasks, the two
# leaderboards, repetitions) and the check that the runs can be ranked at all; the task-level
# tables are in sweep_items.py; most of the length is docstrings.
"""Comparing many runs (a sweep): the tasks all runs share, a leaderboard with intervals and rank
intervals, the leaderboard by configuration and the variance between repetitions. Pairwise
comparisons, flips and item analysis are in :mod:`.sweep_items` and re-exported here.

Runs evaluated on different task sets are compared on their intersection; every table shows
how many tasks that is beside each run's own count.
"""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from dabench_analysis import schema
from dabench_analysis.schema import require_columns
from dabench_analysis.schema.needs import needs
from dabench_analysis.stats._descriptive import interval_method, mean_summary
from dabench_analysis.stats._inputs import as_float, check_ci, warn
from dabench_analysis.stats.ranking import rank_intervals, rank_ties
from dabench_analysis.stats.recorded import cost_recorded, not_recorded_note
from dabench_analysis.stats.repetitions import repetition_variance
from dabench_analysis.tables._common import takes_run
from dabench_analysis.tables._errored import _error_columns
from dabench_analysis.tables._summary import answer_accuracy
from dabench_analysis.tables._ties import _tie_table, tie_groups
from dabench_analysis.tables.frontier import frontier
from dabench_analysis.tables.sweep_items import (
    _as_tasks,
    _higher_is_better,
    _wide,
    flip_counts,
    flips,
    items,
    pairwise,
)
from dabench_analysis.tables.trials import pairing_checks

if TYPE_CHECKING:
    from dabench_analysis.load._sweep import Runs

__all__ = ["check_sweep", "flip_counts", "flips", "frontier", "items", "leaderboard",
           "leaderboard_by_config", "pairwise", "repetition_table", "shared_tasks", "task_counts",
           "tie_groups"]

#: Fewest runs a sweep compares.
MIN_RUNS = 2
_DUPLICATE = re.compile(r"^duplicate run_id (?P<id>'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")"
                        r"(?: \(kept (?P<kept>.*)\))?$")


def _duplicates(runs: Runs) -> list[str]:
    """One line per folder skipped for a run_id another folder already has: both folders."""
    out = []
    for path, reason in runs.skipped[["path", "reason"]].astype(str).itertuples(index=False):
        if not reason.startswith("duplicate run_id"):
            continue
        match = _DUPLICATE.match(reason)
        if match is None:  # a wording this check does not know: quote it whole
            out.append(f"{path}: {reason}")
            continue
        rid = ast.literal_eval(match["id"])
        kept = match["kept"] or (str(runs[rid].path) if rid in runs.run_ids else "another folder")
        out.append(f"run_id {rid!r} is in two run folders, {kept} and {path}")
    return out


def check_sweep(runs: Runs, *, min_runs: int = MIN_RUNS) -> None:
    """Refuse a sweep that cannot rank its runs: two folders with one run_id, or too few runs.

    Parameters
    ----------
    runs : Runs
        :func:`dabench_analysis.load_runs`'s result: ``run_ids`` and ``skipped`` (``path``,
        ``reason``; a folder whose run_id an earlier folder has is skipped with the reason
        ``duplicate run_id '<id>' (kept <folder>)``).
    min_runs : int
        Fewest loaded runs a sweep compares (default 2).

    Returns
    -------
    None
        The sweep can go ahead.

    Raises
    ------
    ValueError
        A run_id in two folders (naming the run_id and both folders: ``load_runs`` keeps the
        first and skips the later one, so the sweep would silently compare one of them), or
        fewer than ``min_runs`` runs loaded (naming the folders not loaded and why).

    Notes
    -----
    Every sweep table keys runs by ``run_id`` (task_metrics.csv's column), so two folders with
    one run_id cannot both be in it; which one :func:`load_runs` keeps depends on the order of
    the paths, so the sweep refuses instead of choosing.

    Examples
    --------
    >>> import shutil, tempfile, warnings, pathlib
    >>> import dabench_analysis as da
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> for name in ("oldver", "baseline_react"):
    ...     (d / name).mkdir()
    ...     _ = shutil.copy("data/sample_runs/baseline_react/task_metrics.csv", d / name)
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     runs = da.load_runs([d / "oldver", d / "baseline_react"], progress=False)
    >>> try:
    ...     check_sweep(runs)
    ... except ValueError as e:
    ...     print(str(e).replace(str(d), "D").replace(": ", ":\\n"))
    run_id 'baseline_react' is in two run folders, D/oldver and D/baseline_react:
    a sweep ranks runs by run_id; give each run folder its own run_id
    """
    dup = _duplicates(runs)
    if dup:
        raise ValueError("; ".join(dup) + ": a sweep ranks runs by run_id; give each run "
                         "folder its own run_id")
    if len(runs.run_ids) < min_runs:
        left = [f"{p} ({r})" for p, r in runs.skipped[["path", "reason"]].astype(str).values]
        raise ValueError(
            f"a sweep needs at least {min_runs} loadable runs; loaded {len(runs.run_ids)}"
            + (f" ({', '.join(runs.run_ids)})" if runs.run_ids else "")
            + (f"; not loaded: {'; '.join(left[:5])}{' ...' if len(left) > 5 else ''}"
               if left else ""))


def _present(t: pd.DataFrame, metric: str | None) -> pd.Series:
    return pd.Series(True, index=t.index) if metric is None else \
        as_float(t[metric], metric).notna()


@needs("task_id", trials="any")
@takes_run(pools=False)
def task_counts(tasks, *, metric: str | None = None) -> pd.DataFrame:
    """Per run: its own number of tasks, the number all runs share, and the pairing checks.

    Parameters
    ----------
    tasks : DataFrame or Runs
        Stacked task frames with ``run_id`` and ``task_id`` (``trial`` when present).
    metric : str, optional
        If given, a task counts only where ``metric`` has a value.

    Returns
    -------
    DataFrame
        One row per run (first appearance order): ``run_id``, ``n_own`` (its distinct tasks),
        ``n_shared`` (tasks every run has), then :func:`dabench_analysis.tables.trials.
        pairing_checks`' columns (``n_rows``, ``n_duplicates``, ``n_only_here``,
        ``trials_min``, ``trials_max``, ``n_uneven``, ``mixed``): what pairing the runs' tasks
        would hide, counted, never averaged away.

    Examples
    --------
    >>> t = pd.DataFrame({"run_id": ["a", "a", "b"], "task_id": ["t1", "t2", "t1"]})
    >>> task_counts(t)[["run_id", "n_own", "n_shared", "n_only_here"]].values.tolist()
    [['a', 2, 1, 1], ['b', 1, 1, 0]]
    """
    require_columns(tasks, ["run_id", "task_id", *([] if metric is None else [metric])])
    t = tasks
    ok = _present(t, metric).to_numpy()
    pairs = t[["run_id", "task_id"]].astype(str)[ok].drop_duplicates()
    n_runs = t["run_id"].astype(str).nunique()
    per_task = pairs.groupby("task_id").size()
    n_shared = int((per_task == n_runs).sum())
    own = pairs.groupby("run_id", sort=False).size()
    order = list(pd.unique(t["run_id"].astype(str)))
    out = pd.DataFrame({"run_id": order, "n_own": own.reindex(order, fill_value=0).to_numpy(),
                        "n_shared": n_shared}).astype({"n_own": "int64", "n_shared": "int64"})
    checks = pairing_checks(t)
    return out.merge(checks.drop(columns=["n_tasks"]), on="run_id", how="left")


@takes_run(pools=False)
def shared_tasks(tasks, *, metric: str | None = None) -> pd.DataFrame:
    """The rows of every run restricted to the tasks every run has.

    Parameters
    ----------
    tasks : DataFrame or Runs
        Stacked task frames (``load_runs(...).tasks``) with ``run_id`` and ``task_id``.
    metric : str, optional
        If given, a run "has" a task only where ``metric`` has a value.

    Returns
    -------
    DataFrame
        The rows of ``tasks`` whose task every run has (all columns, a fresh index); the per-run
        counts of :func:`task_counts` are in ``.attrs["task_counts"]``. A warning says how many
        rows were left out.

    Raises
    ------
    ValueError
        Missing ``run_id``/``task_id``/``metric``, a task twice in one run.

    Examples
    --------
    >>> t = pd.DataFrame({"run_id": ["a", "a", "b"], "task_id": ["t1", "t2", "t1"]})
    >>> shared_tasks(t).task_id.tolist()
    ['t1', 't1']
    """
    t = _as_tasks(tasks, [] if metric is None else [metric])
    ok = _present(t, metric)
    tids = t["task_id"].astype(str)
    n_runs = t["run_id"].astype(str).nunique()
    per_task = tids[ok].groupby(tids[ok].to_numpy()).size()
    keep = tids.isin(per_task.index[per_task == n_runs]).to_numpy() & ok.to_numpy()
    out = t[keep].reset_index(drop=True)
    out.attrs["task_counts"] = task_counts(t, metric=metric)
    left = int((~keep).sum())
    warn([f"{left} row(s) left out: their task is not in every run"
          + (f" with a {metric}" if metric else "") if left else ""])
    return out


def _mean_columns(w: pd.DataFrame, name: str, how: str, ci: float) -> tuple[dict, str]:
    """Mean and interval of each run's column of ``w`` (task × run) by the package's rule."""
    res = [mean_summary(w[r].to_numpy(), ci, method=how) for r in w.columns]
    return ({name: [r["mean"] for r in res], f"{name}_ci_low": [r["ci_low"] for r in res],
             f"{name}_ci_high": [r["ci_high"] for r in res]},
            "; ".join(sorted({r["method"] for r in res})))


def _cost(sh: pd.DataFrame, runs: list[str], ci: float) -> tuple[dict, list[str]]:
    """Mean tokens and runtime per run with intervals, and each run's method; a run that did
    not record a column (:func:`cost_recorded`) gets NaN and "not recorded", never a mean 0."""
    cols, methods, notes = {}, [[] for _ in runs], []
    for col, name in (("total_tokens", "mean_tokens"), ("execution_time", "mean_runtime_s")):
        word = schema.label(name).split(" (")[0].lower()  # "tokens"
        if col not in sh:
            notes.append(f"{col} not in tasks: {name} and its interval are NaN")
            cols.update({name: np.nan, f"{name}_ci_low": np.nan, f"{name}_ci_high": np.nan})
            continue
        part, how = _mean_columns(_wide(sh, sh[col].rename(col), runs), name,
                                  interval_method(sh, col), ci)
        rec = cost_recorded(sh, col).reindex(runs, fill_value=False).to_numpy()
        for key in (name, f"{name}_ci_low", f"{name}_ci_high"):
            part[key] = np.where(rec, np.asarray(part[key], dtype=float), np.nan)
        cols.update(part)
        for i, r in enumerate(rec):
            methods[i].append(f"{word}: {how if r else 'not recorded'}")
        notes.append(not_recorded_note(col, [u for u, r in zip(runs, rec, strict=True)
                                             if not r], what=f"{name} NaN"))
    warn(notes, 4)
    return cols, ["; ".join(m) for m in methods]


@needs("task_id", "final_score")
@takes_run(pools=False)
def leaderboard(tasks, *, threshold: float = schema.SUCCESS_THRESHOLD, n_boot: int = 2000,
                seed: int = 0, metric: str = "final_score", ci: float = 0.95) -> pd.DataFrame:
    """Leaderboard on the tasks all runs share: every number with its interval, and the rank
    with a bootstrap rank interval.

    Parameters
    ----------
    tasks : DataFrame or Runs
        Stacked task frames (``load_runs(...).tasks``) with ``run_id``, ``task_id``,
        ``final_score`` ([0, 1]) and ``metric``; ``total_tokens`` (tokens) and
        ``execution_time`` (seconds) are optional.
    threshold : float
        Answer accuracy = share of tasks with ``final_score >= threshold``; default 0.8.
    n_boot, seed : int
        Bootstrap replicates and seed of the rank intervals.
    metric : str
        The ranked score (its direction from the catalogue; unknown columns: higher is better).
    ci : float
        Level of every interval.

    Returns
    -------
    DataFrame
        One row per run, sorted by ``mean_score`` (best first): ``run_id``, ``n_shared``
        (tasks every run has with a ``metric``), ``n_own`` (the run's own tasks),
        ``answer_accuracy`` with ``answer_accuracy_ci_low/high`` (Wilson:
        :func:`dabench_analysis.tables.answer_accuracy`, as every page shows it), ``metric``,
        ``mean_score`` with ``mean_score_ci_low/high`` (mean ``metric``; logit t for [0, 1]
        scores), ``mean_tokens`` and ``mean_runtime_s`` (seconds) with ``_ci_low/_ci_high``
        (t-interval; NaN with a warning when the column is absent, and for a run that did not
        record it: all missing or all 0, :func:`stats.recorded.cost_recorded`, its
        ``cost_method`` saying "not recorded"), ``rank``, ``rank_low``,
        ``rank_high`` (1 = best), ``tied`` (the rank interval overlaps another run's),
        ``tie_group`` (1 = not distinguishable from the top run by the paired test, 2 = from
        the best run outside group 1, ...: :func:`tie_groups`, alpha 0.05), ``threshold``,
        ``ci``, ``n_boot``, ``boot_seed`` (the bootstrap's seed, not a run's),
        ``accuracy_method``, ``score_method``, ``cost_method``, ``rank_method``; when a trial
        of a run ended in an infrastructure error, the failure bounds on each run's own tasks
        (:func:`dabench_analysis.tables.failure_bounds`): ``n_errored``,
        ``answer_accuracy_errors_as_failures`` and ``answer_accuracy_errors_as_successes``,
        each with ``_ci_low`` / ``_ci_high``.

    Raises
    ------
    ValueError
        Missing columns, a task twice in one run, runs that share no task, ``threshold``,
        ``ci`` or ``n_boot`` out of range.

    Notes
    -----
    Intervals follow the package's rules (:func:`stats.mean_summary`): Wilson for accuracy
    (R ``prop.test(k, n, correct = FALSE)``), logit t for means of [0, 1] scores, t for tokens
    and seconds. Ranks: :func:`stats.ranking.rank_intervals` (bootstrap over the shared tasks,
    resampled jointly across runs, ties averaged, percentile interval); ``tied`` is
    :func:`stats.ranking.rank_ties`; ``tie_group`` is :func:`tie_groups` in rank order
    (McNemar exact on success, Holm over all pairs: the pairwise table's ``p_mcnemar_holm``).

    Examples
    --------
    >>> t = pd.DataFrame({"run_id": ["a"] * 4 + ["b"] * 4, "task_id": ["t1", "t2", "t3", "t4"] * 2,
    ...                   "final_score": [0.9, 0.8, 0.95, 0.85, 0.1, 0.2, 0.3, 0.4]})
    >>> import warnings; warnings.simplefilter("ignore")  # no tokens or runtime columns
    >>> leaderboard(t, n_boot=200)[["run_id", "n_shared", "answer_accuracy", "rank", "tied"]]
      run_id  n_shared  answer_accuracy  rank   tied
    0      a         4              1.0   1.0  False
    1      b         4              0.0   2.0  False
    """
    check_ci(ci)
    t = _as_tasks(tasks, ["final_score", metric])
    counts = task_counts(t, metric=metric)
    sh = shared_tasks(t, metric=metric)
    if sh.empty:
        raise ValueError(f"the {len(counts)} runs share no task with a {metric}; own tasks: "
                         + ", ".join(f"{r} {n}" for r, n in counts[["run_id", "n_own"]].values[:10]))
    runs = list(counts["run_id"])
    w = _wide(sh, sh[metric].rename(metric), runs)
    ranks = rank_intervals(w, n_boot=n_boot, ci=ci, seed=seed,
                           higher_is_better=_higher_is_better(metric))
    of = sh["run_id"].astype(str)
    acc = pd.DataFrame([answer_accuracy(sh[(of == r).to_numpy()], threshold=threshold, ci=ci)
                        for r in runs])  # the one estimate of a run's accuracy
    score, score_how = _mean_columns(w, "mean_score", interval_method(sh, metric), ci)
    cost, cost_how = _cost(sh, runs, ci)
    out = pd.DataFrame({
        "run_id": runs, "n_shared": counts["n_shared"].to_numpy(),
        "n_own": counts["n_own"].to_numpy(), "answer_accuracy": acc["answer_accuracy"].to_numpy(float),
        "answer_accuracy_ci_low": acc["answer_accuracy_ci_low"].to_numpy(float),
        "answer_accuracy_ci_high": acc["answer_accuracy_ci_high"].to_numpy(float), "metric": metric, **score, **cost,
        "rank": ranks["rank"].to_numpy(), "rank_low": ranks["rank_low"].to_numpy(),
        "rank_high": ranks["rank_high"].to_numpy(),
        "tied": rank_ties(ranks["rank_low"], ranks["rank_high"]), "threshold": threshold,
        "ci": float(ci), "n_boot": int(n_boot), "boot_seed": seed, "accuracy_method": acc["answer_accuracy_ci_method"].to_numpy(),
        "score_method": score_how, "cost_method": cost_how,
        "rank_method": ranks["method"].iloc[0]})
    out = out.assign(**_error_columns(t, runs, threshold, ci))  # failure bounds: own tasks
    out = out.sort_values(["rank", "run_id"], kind="stable").reset_index(drop=True)
    ties = _tie_table(sh, list(out["run_id"]), threshold, 0.05)
    out.insert(out.columns.get_loc("tied") + 1, "tie_group", ties["tie_group"].to_numpy())
    return out


def _declared_runs(t: pd.DataFrame, configs: pd.DataFrame) -> pd.DataFrame:
    require_columns(configs, ["run_id", "config", "seed"], what="configs")
    ids = configs.loc[configs["config"].notna(), "run_id"].astype(str)
    return t[t["run_id"].astype(str).isin(ids).to_numpy()]


_CONFIG_COLUMNS = ["config", "n_runs", "n_seeds", "n_tasks", "mean", "se", "ci_low", "ci_high",
                   "rank", "rank_low", "rank_high", "tied", "method", "rank_method", "note"]


@takes_run(pools=False)
def leaderboard_by_config(tasks, configs: pd.DataFrame, *, metric: str = "final_score",
                          n_boot: int = 2000, seed: int = 0, ci: float = 0.95) -> pd.DataFrame:
    """Leaderboard of configurations, each the mean over its repetitions, with intervals that
    account for task and repetition variance (clustered by task, Miller 2024).

    Parameters
    ----------
    tasks : DataFrame or Runs
        Stacked task frames with ``run_id``, ``task_id`` and ``metric``.
    configs : DataFrame
        ``run_id``, ``config``, ``seed`` per run (:func:`load.run_configs`); runs without
        a configuration are left out.
    metric : str
        The score ranked ([0, 1] scores get the logit-t interval).
    n_boot, seed : int
        Bootstrap of the rank intervals.
    ci : float
        Level of the intervals.

    Returns
    -------
    DataFrame
        One row per configuration, best first: ``config``, ``n_runs``, ``n_seeds``, ``n_tasks``
        (tasks every declared run has with a value), ``mean``, ``se`` (clustered by task),
        ``ci_low``, ``ci_high``, ``rank``, ``rank_low``, ``rank_high``, ``tied``, ``method``,
        ``rank_method``, ``note``. No run declares a configuration: no rows, with a warning.

    Raises
    ------
    ValueError
        Missing columns, a run twice in ``configs``, a task twice in one run.

    Notes
    -----
    The mean, SE and interval are :func:`stats.repetitions.repetition_variance`'s; the rank
    interval bootstraps the shared tasks (jointly across configurations) with each task's score
    the mean over the configuration's repetitions, so repetition noise is carried along.

    References
    ----------
    Miller, E. (2024). Adding Error Bars to Evals. arXiv:2411.00640.

    Examples
    --------
    >>> t = pd.DataFrame({"run_id": ["r1"] * 3 + ["r2"] * 3 + ["r3"] * 3,
    ...                   "task_id": ["a", "b", "c"] * 3,
    ...                   "final_score": [0.9, 0.5, 0.1, 0.7, 0.5, 0.3, 0.2, 0.1, 0.0]})
    >>> c = pd.DataFrame({"run_id": ["r1", "r2", "r3"], "config": ["x", "x", "y"],
    ...                   "seed": [1, 2, 1]})
    >>> leaderboard_by_config(t, c, n_boot=200)[["config", "n_runs", "n_tasks", "rank"]]
      config  n_runs  n_tasks  rank
    0      x       2        3   1.0
    1      y       1        3   2.0
    """
    check_ci(ci)
    t = _declared_runs(_as_tasks(tasks, [metric]), configs)
    if t.empty:
        warn([f"no run declares a configuration ({schema.CONFIG_FILE} or config/seed columns): "
              "no leaderboard by configuration"])
        return pd.DataFrame(columns=_CONFIG_COLUMNS)
    sh = shared_tasks(t, metric=metric)
    rv = repetition_variance(sh, configs, metric=metric, ci=ci)
    cfg = configs.assign(run_id=configs["run_id"].astype(str)).set_index("run_id")["config"]
    long = pd.DataFrame({"task_id": sh["task_id"].astype(str).to_numpy(),
                         "config": cfg.reindex(sh["run_id"].astype(str)).to_numpy(),
                         "v": as_float(sh[metric], metric).to_numpy()})
    w = long.pivot_table(index="task_id", columns="config", values="v", aggfunc="mean")
    ranks = rank_intervals(w[list(rv["config"])], n_boot=n_boot, ci=ci, seed=seed,
                           higher_is_better=_higher_is_better(metric))
    out = rv.assign(rank=ranks["rank"].to_numpy(), rank_low=ranks["rank_low"].to_numpy(),
                    rank_high=ranks["rank_high"].to_numpy(),
                    tied=rank_ties(ranks["rank_low"], ranks["rank_high"]),
                    rank_method=ranks["method"].iloc[0])
    return out.sort_values(["rank", "config"], kind="stable")[_CONFIG_COLUMNS] \
        .reset_index(drop=True)


@takes_run(pools=False)
def repetition_table(tasks, configs: pd.DataFrame, *, metric: str = "final_score",
                     ci: float = 0.95) -> pd.DataFrame:
    """Between-repetition and between-task variance per configuration, on the shared tasks.

    Parameters
    ----------
    tasks : DataFrame or Runs
        Stacked task frames with ``run_id``, ``task_id`` and ``metric``.
    configs : DataFrame
        ``run_id``, ``config``, ``seed`` per run (:func:`load.run_configs`).
    metric : str
        The score summarised.
    ci : float
        Level of the interval of each configuration's mean.

    Returns
    -------
    DataFrame
        :func:`stats.repetitions.repetition_variance` on the tasks every declared run has (its
        columns: ``config``, ``n_runs``, ``n_seeds``, ``n_tasks``, ..., ``var_between_repetitions``,
        ``var_between_tasks``, ``repetition_share``, ``method``, ``note``). No run declares a
        configuration: no rows, with a warning.

    Raises
    ------
    ValueError
        As :func:`leaderboard_by_config`.

    Examples
    --------
    >>> t = pd.DataFrame({"run_id": ["r1"] * 3 + ["r2"] * 3, "task_id": ["a", "b", "c"] * 2,
    ...                   "final_score": [0.9, 0.5, 0.1, 0.7, 0.5, 0.3]})
    >>> c = pd.DataFrame({"run_id": ["r1", "r2"], "config": ["x", "x"], "seed": [1, 2]})
    >>> round(float(repetition_table(t, c)["var_between_tasks"][0]), 4)  # 0.09 - 0.0133 / 2
    0.0833
    """
    t = _declared_runs(_as_tasks(tasks, [metric]), configs)
    if t.empty:
        warn([f"no run declares a configuration ({schema.CONFIG_FILE} or config/seed columns): "
              "no repetition table"])
        return repetition_variance(t, configs.iloc[:0], metric=metric, ci=ci)
    return repetition_variance(shared_tasks(t, metric=metric), configs, metric=metric, ci=ci)
