"""The cost–accuracy frontier of a sweep (Kapoor et al. 2024, "AI Agents That Matter"): which runs
(or configurations) no other run beats on both accuracy and cost, how sure that is, and what a
solved task costs. Exposed as :func:`dabench_analysis.tables.sweep.frontier`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dabench_analysis import schema
from dabench_analysis.schema import require_columns
from dabench_analysis.schema.needs import Skipped, needs
from dabench_analysis.stats._inputs import as_float, check_ci, warn
from dabench_analysis.stats.ranking import bootstrap_counts
from dabench_analysis.stats.recorded import COST_COLUMNS, cost_recorded, not_recorded_note
from dabench_analysis.tables._common import correct_mask, takes_run

__all__ = ["cost_column", "frontier", "pareto_front"]

_COLUMNS = ["run_id", "n_tasks", "accuracy", "accuracy_ci_low", "accuracy_ci_high", "cost",
            "mean_cost", "mean_cost_ci_low", "mean_cost_ci_high", "cost_per_solved",
            "cost_per_solved_ci_low", "cost_per_solved_ci_high", "n_boot_no_solve", "on_frontier",
            "p_frontier",
            "threshold", "n_boot", "boot_seed", "method", "note"]


def pareto_front(accuracy, cost) -> np.ndarray:
    """Which points no other point dominates (accuracy at least as high and cost at most as
    low, one of them strictly).

    Parameters
    ----------
    accuracy, cost : array-like, shape (..., n_runs)
        Higher accuracy and lower cost are better; the last axis holds the runs (earlier axes,
        e.g. bootstrap replicates, are evaluated each on their own).

    Returns
    -------
    numpy.ndarray of bool, same shape
        True for the runs on the frontier (ties: both on it).

    Examples
    --------
    >>> pareto_front([0.9, 0.8, 0.7, 0.9], [100, 50, 60, 120]).tolist()
    [True, True, False, False]
    """
    a = np.asarray(accuracy, dtype=float)[..., :, None]
    c = np.asarray(cost, dtype=float)[..., :, None]
    a_o, c_o = np.swapaxes(a, -1, -2), np.swapaxes(c, -1, -2)
    dominated = ((a_o >= a) & (c_o <= c) & ((a_o > a) | (c_o < c))).any(axis=-1)
    return ~dominated


def _units(t: pd.DataFrame, configs: pd.DataFrame | None) -> pd.Series:
    run = t["run_id"].astype(str)
    if configs is None:
        return run
    cfg = configs.assign(run_id=configs["run_id"].astype(str)).set_index("run_id")["config"]
    mapped = pd.Series(cfg.reindex(run).to_numpy(), index=t.index)
    return mapped.where(mapped.notna(), run).astype(str)


def _per_task(t: pd.DataFrame, cost: str, threshold: float,
              configs: pd.DataFrame | None) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """Task x unit frames of the mean success and the mean cost (over trials and the runs of
    a configuration), on the tasks every unit has with both."""
    long = pd.DataFrame({"unit": _units(t, configs).to_numpy(),
                         "task_id": t["task_id"].astype(str).to_numpy(),
                         "ok": correct_mask(t, threshold=threshold).astype("Float64").to_numpy(
                             float, na_value=np.nan),
                         "cost": as_float(t[cost], cost).to_numpy()}).dropna()
    units = list(dict.fromkeys(_units(t, configs)))
    ok = long.pivot_table(index="task_id", columns="unit", values="ok", aggfunc="mean")
    cs = long.pivot_table(index="task_id", columns="unit", values="cost", aggfunc="mean")
    ok, cs = ok.reindex(columns=units), cs.reindex(columns=units)
    keep = ok.notna().all(axis=1) & cs.notna().all(axis=1)
    return ok[keep], cs[keep], units


def cost_column(tasks, columns=COST_COLUMNS) -> tuple[str, str]:
    """The cost column of a frontier: the first of ``columns`` recorded for the runs.

    Parameters
    ----------
    tasks : DataFrame or Runs
        Stacked task rows with ``run_id`` (a Runs: its ``tasks``).
    columns : sequence of str
        The candidates in order of preference (default ``cost`` in US dollars, then
        ``total_tokens``, then ``execution_time`` in seconds).

    Returns
    -------
    column : str
        The first candidate recorded (:func:`dabench_analysis.stats.recorded.cost_recorded`:
        present with a value that is not 0) for at least two runs (a frontier's least); else
        the first recorded for one run; else the first present; else the first candidate.
    note : str
        The choice and why, for a table's note (``"cost column total_tokens: the first of
        cost, total_tokens, execution_time recorded for 2 runs (cost: not recorded)"``).

    Raises
    ------
    ValueError
        ``columns`` empty.

    Notes
    -----
    A column present but all 0 (a harness that does not count dollars) is not a cost: taking
    the first *present* column would leave every run off the plane although tokens were
    recorded.

    Examples
    --------
    >>> t = pd.DataFrame({"run_id": ["a", "a", "b", "b"], "cost": 0.0,
    ...                   "total_tokens": [10, 20, 30, 40]})
    >>> cost_column(t)
    ('total_tokens', 'cost column total_tokens: the first of cost, total_tokens, execution_time recorded for 2 runs (cost: not recorded)')
    """
    columns = list(columns)
    if not columns:
        raise ValueError("columns is empty: no cost column to choose from")
    frame = tasks if isinstance(tasks, pd.DataFrame) else tasks.tasks
    runs = {c: int(cost_recorded(frame, c).sum()) for c in columns}
    n_runs = max(1, min(2, frame["run_id"].nunique() if "run_id" in frame else 1))
    pick = next((c for c in columns if runs[c] >= n_runs), None) or next(
        (c for c in columns if runs[c]), None) or next(
        (c for c in columns if c in frame), columns[0])
    before = [f"{c}: {'absent' if c not in frame else 'not recorded'}"
              for c in columns[:columns.index(pick)] if runs[c] < n_runs]
    why = (f"recorded for {runs[pick]} run{'s' if runs[pick] != 1 else ''}" if runs[pick]
           else "recorded for no run")
    return pick, (f"cost column {pick}: the first of {', '.join(columns)} {why}"
                  + (f" ({'; '.join(before)})" if before else ""))


@needs("task_id", "final_score", uses=("cost", "total_tokens", "execution_time"), uses_at_least=1,
       trials="any")
@takes_run(pools=False)
def frontier(tasks, *, cost: str | tuple[str, ...] = "total_tokens", configs: pd.DataFrame | None = None,
             threshold: float = schema.SUCCESS_THRESHOLD, n_boot: int = 2000, seed: int = 0,
             ci: float = 0.95) -> pd.DataFrame:
    """The Pareto frontier of runs on accuracy against mean cost per task, with the bootstrap
    probability that each run is on it and the cost per solved task.

    Parameters
    ----------
    tasks : DataFrame or Runs
        Stacked task rows with ``run_id``, ``task_id``, ``final_score`` ([0, 1]) and ``cost``;
        several trials per task are averaged within the task.
    cost : str
        The cost column: ``total_tokens`` (tokens), ``cost`` (US dollars), ``execution_time``
        (seconds), or any numeric column; ``"auto"``: the first of ``cost``,
        ``total_tokens``, ``execution_time`` recorded for the runs (:func:`cost_column`,
        the choice named in ``note``); a tuple of columns: the first of them recorded. A run for which it is absent, all missing or all
        0 did not record it (:func:`dabench_analysis.stats.recorded.cost_recorded`): it is
        left off the plane, never taken as free.
    configs : DataFrame, optional
        ``run_id`` -> ``config`` (:func:`dabench_analysis.load.run_configs`): the runs of a
        configuration form one point (their tasks averaged).
    threshold : float
        A task succeeds when ``final_score >= threshold``; default 0.8.
    n_boot, seed : int
        Bootstrap replicates and seed (the shared tasks resampled jointly across runs:
        :func:`dabench_analysis.stats.ranking.bootstrap_counts`).
    ci : float
        Level of the percentile intervals.

    Returns
    -------
    DataFrame
        One row per run (or configuration), by accuracy (best first): ``run_id``,
        ``n_tasks`` (tasks every run has with a score and a cost), ``accuracy`` (mean over
        tasks of the task's success rate) with ``accuracy_ci_low/high``, ``cost`` (the
        column), ``mean_cost`` (per task, in the column's unit) with ``mean_cost_ci_low/high``,
        ``cost_per_solved`` (total cost / tasks solved; NaN when none is) with
        ``cost_per_solved_ci_low/high`` (``inf`` when the percentile falls among replicates
        that solve nothing: the interval is unbounded), ``n_boot_no_solve`` (replicates in
        which the run solves no task), ``on_frontier`` (no other run has at least its
        accuracy at most its cost, one strictly), ``p_frontier`` (share of bootstrap
        replicates in which it is on the frontier), ``threshold``, ``n_boot``, ``boot_seed``,
        ``method``, ``note``. Runs that did not record ``cost`` come last, one row each with
        ``n_tasks`` 0, every number NaN, ``on_frontier`` False and ``method`` "not on the
        plane"; ``note`` (and a warning) names them.

    Raises
    ------
    Skipped
        (a ValueError) Fewer than two runs (or configurations) with a recorded ``cost`` (a
        lone run is on its own frontier by the definition, vacuously: the table says nothing
        a comparison needs, so it is refused with the reason rather than reporting that), or
        no task that every costed run has with a score and a cost: the reason, which a report
        shows as the section's skip note.
    ValueError
        Missing columns, a threshold,
        ``ci`` or ``n_boot`` out of range.

    Notes
    -----
    Kapoor et al. (2024) argue that agents be compared on the accuracy–cost plane, the
    frontier being the runs worth choosing. In replicate b the shared tasks are drawn with
    replacement (the same draw for every run), accuracy and mean cost are recomputed, and the
    frontier found again; ``p_frontier`` is the share of replicates on it, the intervals are
    percentiles of the replicates. Cost per solved task is sum(cost) / sum(solved) over the
    tasks (Kapoor et al.'s cost of a success); a replicate in which the run solves nothing
    has cost per solved task +inf (never dropped: dropping those replicates, 11.8 % of them
    for a rarely-solving run, made an unbounded upper bound look finite), so the percentile
    interval is ``inf`` where it reaches them; ``n_boot_no_solve`` counts them.

    References
    ----------
    Kapoor, S., Stroebl, B., Siegel, Z. S., Nadgir, N., Narayanan, A. (2024). AI Agents That
    Matter. arXiv:2407.01502.

    Examples
    --------
    >>> t = pd.DataFrame({"run_id": ["a"] * 3 + ["b"] * 3, "task_id": ["t1", "t2", "t3"] * 2,
    ...                   "final_score": [1.0, 1.0, 0.0, 1.0, 0.0, 0.0],
    ...                   "total_tokens": [100, 120, 80, 10, 20, 30]})
    >>> frontier(t, n_boot=200)[["run_id", "accuracy", "mean_cost", "on_frontier"]]
      run_id  accuracy  mean_cost  on_frontier
    0      a  0.666667      100.0         True
    1      b  0.333333       20.0         True
    """
    check_ci(ci)
    if int(n_boot) < 1:
        raise ValueError(f"n_boot must be >= 1, got {n_boot}")
    require_columns(tasks, ["run_id", "task_id", "final_score"])
    if isinstance(cost, str) and cost != "auto":
        chosen = ""
    else:  # candidates: the first recorded for the runs
        cost, chosen = cost_column(tasks, COST_COLUMNS if cost == "auto" else cost)
    try:
        return _frontier(tasks, cost, configs, threshold, int(n_boot), seed, ci, chosen)
    except Skipped as exc:
        if not chosen:
            raise
        raise Skipped(f"{exc.reason} ({chosen})", missing=exc.missing) from None


def _frontier(tasks: pd.DataFrame, cost: str, configs: pd.DataFrame | None,
              threshold: float, n_boot: int, seed: int, ci: float,
              chosen: str) -> pd.DataFrame:
    costed, uncosted = _costed(tasks, cost)
    ok, cs, units = _per_task(costed, cost, threshold, configs)
    _check_plane(ok, units, cost, uncosted)
    acc, mean_cost = ok.mean().to_numpy(), cs.mean().to_numpy()
    solved = ok.sum().to_numpy()
    per_solved = np.divide(cs.sum().to_numpy(), solved, out=np.full(len(units), np.nan),
                           where=solved > 0)
    w = bootstrap_counts(len(ok), int(n_boot), seed).astype(float)  # (n_boot, n_tasks)
    b_acc, b_cost = w @ ok.to_numpy() / len(ok), w @ cs.to_numpy() / len(ok)
    b_solved = w @ ok.to_numpy()
    with np.errstate(invalid="ignore", divide="ignore"):  # no solve: infinite cost per solve
        b_per = np.where(b_solved > 0, (w @ cs.to_numpy()) / b_solved, np.inf)
    q = [(1 - ci) / 2 * 100, (1 + ci) / 2 * 100]
    notes = [chosen, not_recorded_note(cost, uncosted, what="left out of the frontier")]
    p_front = pareto_front(b_acc, b_cost).mean(axis=0)
    out = pd.DataFrame({
        "run_id": units, "n_tasks": len(ok), "accuracy": acc,
        "accuracy_ci_low": np.percentile(b_acc, q[0], axis=0),
        "accuracy_ci_high": np.percentile(b_acc, q[1], axis=0), "cost": cost,
        "mean_cost": mean_cost, "mean_cost_ci_low": np.percentile(b_cost, q[0], axis=0),
        "mean_cost_ci_high": np.percentile(b_cost, q[1], axis=0),
        "cost_per_solved": per_solved,
        "cost_per_solved_ci_low": np.where(solved > 0, _percentile_inf(b_per, q[0]), np.nan),
        "cost_per_solved_ci_high": np.where(solved > 0, _percentile_inf(b_per, q[1]), np.nan),
        "n_boot_no_solve": (b_solved == 0).sum(axis=0),
        "on_frontier": pareto_front(acc, mean_cost),
        "p_frontier": p_front, "threshold": threshold, "n_boot": int(n_boot),
        "boot_seed": seed,
        "method": f"bootstrap over shared tasks (jointly across runs), percentile {ci:.0%}"})
    zero = [u for u, s in zip(units, solved, strict=True) if s == 0]
    notes += [f"{', '.join(zero)}: no task solved, cost per solved task undefined"] if zero \
        else []
    out = out.sort_values(["accuracy", "mean_cost"], ascending=[False, True], kind="stable")
    out = pd.concat([out, _uncosted_rows(uncosted, cost, threshold, n_boot, seed)],
                    ignore_index=True) if uncosted else out
    out["note"] = "; ".join(n for n in notes if n)
    warn(notes[1:])  # the choice of column is a note, not a warning
    return out[_COLUMNS].reset_index(drop=True)


def _percentile_inf(x, q: float) -> np.ndarray:
    """Percentile (numpy's default, linear) of each column of ``x``, where ``inf`` may occur:
    a percentile that interpolates towards an ``inf`` is ``inf`` (numpy gives NaN between two
    ``inf``).

    Parameters
    ----------
    x : array-like, shape (n, m)
        Replicates by column; finite values or ``+inf``, no NaN.
    q : float
        Percentile in [0, 100].

    Returns
    -------
    numpy.ndarray, shape (m,)
        ``numpy.percentile(x, q, axis=0)`` where that is finite, else ``inf``.

    Examples
    --------
    >>> _percentile_inf([[1.0], [2.0], [np.inf], [np.inf]], 97.5).tolist()
    [inf]
    >>> _percentile_inf([[1.0], [2.0], [3.0], [np.inf]], 50).tolist()
    [2.5]
    """
    a = np.sort(np.asarray(x, dtype=float), axis=0)
    h = (a.shape[0] - 1) * q / 100  # numpy's linear rule: between order statistics lo and hi
    lo, hi = int(np.floor(h)), int(np.ceil(h))
    big = np.isinf(a[hi]) & (np.isinf(a[lo]) | (h > lo))
    finite = np.where(np.isinf(a), np.finfo(float).max, a)
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.percentile(finite, q, axis=0)
    return np.where(big, np.inf, out)


def _costed(tasks: pd.DataFrame, cost: str) -> tuple[pd.DataFrame, list[str]]:
    """The rows of the runs that recorded ``cost`` (:func:`cost_recorded`), and the others."""
    rec = cost_recorded(tasks, cost)
    uncosted = [str(r) for r in rec.index[~rec.to_numpy()]]
    if not uncosted:
        return tasks, []
    keep = ~tasks["run_id"].astype("string").fillna("<NA>").isin(uncosted).to_numpy()
    return tasks[keep], uncosted


def _check_plane(ok: pd.DataFrame, units: list[str], cost: str, uncosted: list[str]) -> None:
    """Refuse (:class:`Skipped`) a plane with fewer than two costed runs or no shared task."""
    left = not_recorded_note(cost, uncosted, what="no point on the cost axis")
    if len(units) < 2:
        has = f"only {units[0]} has one" if units else "none has one"
        raise Skipped(f"the frontier needs two runs (or configurations) with a recorded "
                          f"{cost}; {has}" + (f" ({left})" if left else ""),
                          missing=[f"{cost} recorded in two runs"])
    if ok.empty:  # e.g. runs of other benchmarks: nothing to compare them on
        raise Skipped(f"no task that every costed run has with a final_score and a {cost}"
                          + (f" ({left})" if left else ""),
                          missing=[f"a task every costed run has with a {cost}"])


def _uncosted_rows(runs: list[str], cost: str, threshold: float, n_boot: int,
                   seed: int) -> pd.DataFrame:
    """One row per run without a recorded cost: not on the plane, every number NaN."""
    out = pd.DataFrame({c: np.nan for c in _COLUMNS}, index=range(len(runs)))
    return out.assign(run_id=runs, n_tasks=0, cost=cost, on_frontier=False,
                      threshold=threshold, n_boot=int(n_boot), boot_seed=seed,
                      method=f"not on the plane: {cost} not recorded")
