# Over 400 lines (under 500): the three tables share the quantile and grouping helpers here; a split
# waits for the move of the table functions their decorators (another change) brings.
"""Performance profiling and tool selection from a run's steps and tool calls: step latencies
by stage, agent or tool, the share of tasks solved within k steps (or t seconds), and which
tools work best for which tasks.

Seed 000 §Data Model Schema 2 ("performance profiling: step latencies", ``duration_seconds``)
and 3 ("tool selection optimization: which tools work best for what", ``latency_seconds``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dabench_analysis import schema
from dabench_analysis.load._run import Run
from dabench_analysis.load._sweep import Runs
from dabench_analysis.schema import TOOL_CALLS_FILE, TRAJECTORY_FILE
from dabench_analysis.schema.needs import in_file, needs
from dabench_analysis.stats._differences import TWO_PROPORTIONS, compare_proportions
from dabench_analysis.stats._inputs import check_ci, warn
from dabench_analysis.stats._proportions import proportion_intervals
from dabench_analysis.tables._actors import own_actions, with_note
from dabench_analysis.trajectory._by import AUTO, resolve_by
from dabench_analysis.trajectory._clustered import (
    curve_intervals,
    fit_intervals,
    quantile_intervals,
)
from dabench_analysis.trajectory._inputs import (
    Inputs,
    finish,
    gather,
    group_codes,
    holm,
    stratify,
    trace_note,
    wilson,
)
from dabench_analysis.trajectory._step_stats import grouped_quantiles

#: Where a step has no value of the ``by`` column (e.g. a step that calls no tool).
NO_VALUE = "(none)"
#: The estimator :func:`solve_curve` names in its ``method`` column.
SOLVE_METHOD = "empirical cumulative share of all tasks (no censoring; not a survival " \
               "estimate); pointwise Wilson"
#: Fewer tasks than this in a compared group marks a :func:`tool_fit` cell as small.
SMALL = 5


def _quantiles(frame: pd.DataFrame, keys: list[str], value: str, prefix: str,
               ci: float, inp: Inputs | None = None) -> tuple[np.ndarray, pd.DataFrame]:
    """Each row's group of ``keys`` and, per group (row = code), the keys and the quantiles of
    ``value`` with their intervals (columns named with ``prefix``)."""
    codes, uniques = group_codes(frame, keys)
    values = frame[value].to_numpy(dtype="float64", na_value=np.nan)
    q = grouped_quantiles(values, codes, ci=ci)
    if inp is not None and inp.clusters is not None:  # repeated trials: resample tasks
        probs = (0.5, 0.9, 0.99)
        lo, hi = quantile_intervals(values, codes, inp.clusters[frame["task_index"].to_numpy()],
                                    probs, inp, ci)
        for j, p in enumerate(probs):
            q[f"p{p * 100:g}_ci_low"], q[f"p{p * 100:g}_ci_high"] = lo[:, j], hi[:, j]
    q.columns = [f"{prefix}n" if c == "n" else f"{prefix}{c}_s" if "_ci_" not in c
                 else f"{prefix}{c.split('_ci_')[0]}_s_ci_{c.split('_ci_')[1]}"
                 for c in q.columns]
    return codes, pd.concat([uniques, q], axis=1)


@needs(files=(TRAJECTORY_FILE,), file_needs=in_file(TRAJECTORY_FILE, "task_id", "step_id",
       "duration_seconds"), uses=("difficulty", *in_file(TRAJECTORY_FILE, *AUTO)), trials="any")
def step_latency(run: Run | Runs, *, by: str = "stage", ci: float = 0.95) -> pd.DataFrame:
    """Step latencies (``duration_seconds``) by stage, agent or tool, with the share of the
    run's step time and the tokens; for tools also the calls' ``latency_seconds``.

    Parameters
    ----------
    run : Run or Runs
        Reads trajectory.csv ``task_id``, ``step_id``, ``by``, ``duration_seconds``
        (seconds) and ``tokens`` when present; with ``by="tool"`` also tool_calls.csv
        ``tool_name`` and ``latency_seconds`` when the run has them.
    by : {"stage", "agent", "tool", "phase", "auto", ...}
        The grouping column of trajectory.csv; steps without a value are the group "(none)"
        (with ``tool``: the steps that call no tool). ``"auto"``: stage, else agent, else
        tool (the first the trajectory has).
    ci : float
        Level of the distribution-free intervals of the quantiles.

    Returns
    -------
    DataFrame
        Per ``run_id`` (several runs only), ``difficulty`` and ``by`` value, most step time
        first: ``n`` (steps with a duration), ``p50_s``, ``p90_s``, ``p99_s`` (seconds), each
        with ``_ci_low`` / ``_ci_high`` (:func:`dabench_analysis.trajectory.step_events.
        grouped_quantiles`), ``total_s``, ``share_of_time`` (of the group's step time),
        ``tokens_sum``, ``tokens_p50``; with ``by="tool"`` and tool calls also ``n_calls``,
        ``call_p50_s``, ``call_p90_s``, ``call_p99_s`` (with intervals) of
        ``latency_seconds``.

    Raises
    ------
    ValueError
        No trajectory.csv, or it lacks ``by`` or ``duration_seconds``.

    Notes
    -----
    Quantiles and their intervals by :func:`dabench_analysis.trajectory.step_events.
    grouped_quantiles` (linear interpolation; order-statistic intervals), every group at once.
    On repeated trials (each trial its own trace) the intervals are a percentile bootstrap
    over tasks instead, every step of every trial of a drawn task with it (Field & Welsh 2007;
    2000 draws, seed 0; ``note`` says so): the steps of one task's trials are not
    independent. A bootstrap quantile never exceeds the largest step time drawn, so a p99
    bound from few tasks is too narrow.

    References
    ----------
    Conover, W. J. (1999). Practical Nonparametric Statistics, 3rd ed. Wiley, §3.2.
    Field, C. A., Welsh, A. H. (2007). Bootstrapping clustered data. JRSS B 69(3), 369–390.

    Examples
    --------
    >>> import dabench_analysis as da
    >>> lat = step_latency(da.load_run("data/sample_runs/proposed_aat"))
    >>> lat.columns[:4].tolist()
    ['difficulty', 'stage', 'n', 'p50_s']
    """
    check_ci(ci)
    by = resolve_by(run, by, derived=False)
    calls = ["tool_name"] if by == "tool" else None
    inp = gather(run, "step_latency", steps=[by, "duration_seconds"], calls=calls,
                 optional=("tokens",), calls_optional=("latency_seconds",))
    steps = inp.steps[["task_index", by, "duration_seconds"]].copy()
    steps[by] = steps[by].astype("string").fillna(NO_VALUE)
    steps["tokens"] = (inp.steps["tokens"].astype("float64") if "tokens" in inp.steps
                       else np.nan)
    missing = int(steps["duration_seconds"].isna().sum())
    if missing:
        inp.notes.append(f"{missing} step(s) without duration_seconds left out of the times")
    s = stratify(steps, inp.tasks)
    keys = ["run_id", "difficulty", by]
    codes, out = _quantiles(s, keys, "duration_seconds", "", ci, inp)
    out = out.join(s[["duration_seconds", "tokens"]].groupby(codes).agg(  # row = code
        total_s=("duration_seconds", "sum"), tokens_sum=("tokens", "sum"),
        tokens_p50=("tokens", "median")))
    out["share_of_time"] = out["total_s"] / out.groupby(["run_id", "difficulty"], observed=True)[
        "total_s"].transform("sum")
    if inp.calls is not None and "latency_seconds" in inp.calls:
        c = inp.calls.rename(columns={"tool_name": by})[["task_index", by, "latency_seconds"]]
        cs = stratify(c.assign(**{by: c[by].astype("string").fillna(NO_VALUE)}), inp.tasks)
        out = out.merge(_quantiles(cs, keys, "latency_seconds", "call_", ci, inp)[1], on=keys,
                        how="left").rename(columns={"call_n": "n_calls"})
    out = out[out["n"] > 0] if len(out) else out
    out = finish(out, inp, sort=["total_s", by], ascending=[False, True],
                 clustered=inp.clusters is not None)
    if inp.clusters is not None:
        out["note"] += (f"; quantile intervals: percentile bootstrap over tasks "
                        f"({inp.n_boot} draws, seed {inp.seed})")
    return out


@needs(files=(TRAJECTORY_FILE,), file_needs=in_file(TRAJECTORY_FILE, "task_id", "step_id"),
       uses=("difficulty",), trials="any")
def solve_curve(run: Run | Runs, *, axis: str = "steps", threshold: float | None = None,
                ci: float = 0.95) -> pd.DataFrame:
    """The share of all tasks that ended correct within k steps (or t seconds).

    Parameters
    ----------
    run : Run or Runs
        Reads trajectory.csv ``task_id``, ``step_id`` (and ``duration_seconds`` when
        present) and task_metrics ``execution_time`` when present.
    axis : {"steps", "seconds"}
        Steps: a task ends at its number of steps (tasks without steps are left out).
        Seconds: at its ``execution_time`` (the wall clock), or the sum of its steps'
        ``duration_seconds`` when its run has no ``execution_time`` (runs loaded together
        may differ: each is timed by what it has).
    threshold : float, optional
        Success threshold; default the run's.
    ci : float
        Level of the pointwise Wilson intervals (on repeated trials, each trial its own
        trace, on either axis: a percentile bootstrap over tasks, every trial of a drawn task
        with it; Field & Welsh 2007, JRSS B 69(3), 369–390; ``method`` and ``note`` say so).

    Returns
    -------
    DataFrame
        Per ``run_id`` (several runs only) and ``difficulty``: one row per k = 1 … the run's
        longest trajectory (``steps``), or per distinct end time of a correct task and the
        last end time (``seconds``): the axis column (``steps`` or ``seconds``), ``n``
        (tasks), ``n_solved`` (correct and ended within it), ``share``, ``ci_low``,
        ``ci_high``, ``method`` (:data:`SOLVE_METHOD`).

    Raises
    ------
    ValueError
        An unknown ``axis``; no trajectory.csv.

    Notes
    -----
    Failed tasks never count as solved; every task ends within the run, so this is an
    empirical cumulative share, not a survival (Kaplan–Meier) estimate: nothing is censored.
    Tasks without a score are left out, with a note.

    References
    ----------
    Brown, L. D., Cai, T. T., DasGupta, A. (2001). Interval estimation for a binomial
    proportion. Statistical Science 16(2), 101–133 (the Wilson interval).

    Examples
    --------
    >>> import dabench_analysis as da
    >>> c = solve_curve(da.load_run("data/sample_runs/proposed_aat"))
    >>> c.columns[:3].tolist(), float(c["share"].max()) <= 1
    (['difficulty', 'steps', 'n'], True)
    """
    if axis not in ("steps", "seconds"):
        raise ValueError(f"axis must be 'steps' or 'seconds', got {axis!r}")
    check_ci(ci)
    inp = gather(run, "solve_curve", steps=[], task_columns=["execution_time"], threshold=threshold)
    t, n_tasks = inp.tasks, len(inp.tasks)
    n_steps = np.bincount(inp.steps["task_index"], minlength=n_tasks).astype(float)
    ends = np.where(n_steps > 0, n_steps, np.nan) if axis == "steps" else _seconds(inp)
    ends = ends + 0.0  # a -0.0 read from a file is 0.0: one grid point, one way to print it
    scored = t["correct"].notna().to_numpy()
    keep = ~np.isnan(ends) & scored
    if (~keep).any():
        what = "steps" if axis == "steps" else "a time"
        inp.notes.append(f"{int((~keep).sum())} task(s) without {what} or a score left out")
    frame = pd.DataFrame({"task_index": np.flatnonzero(keep), "end": ends[keep],
                          "solved": t["correct"].fillna(False).to_numpy(dtype=bool)[keep]})
    s = stratify(frame, t)
    out = _curve(s, axis, ci, inp)
    out["method"] = SOLVE_METHOD
    cols = ["run_id", "difficulty", axis, "n", "n_solved", "share", "ci_low", "ci_high", "method"]
    return finish(out[cols], inp, sort=[axis], clustered=True,
                  traces=frame["task_index"].to_numpy())  # the traces the curve counts


def _seconds(inp: Inputs) -> np.ndarray:
    """When each task ended, in seconds: its ``execution_time``; in a run without any, the sum
    of its steps' ``duration_seconds`` (NaN: no time)."""
    t = inp.tasks
    wall = t["execution_time"].to_numpy(dtype="float64", na_value=np.nan) \
        if "execution_time" in t else np.full(len(t), np.nan)
    timed = pd.Series(~np.isnan(wall)).groupby(t["run_id"].to_numpy(), sort=False).transform(
        "any").to_numpy(dtype=bool)  # per task: its run has an execution_time
    if timed.all():
        return wall
    d = inp.steps.get("duration_seconds", pd.Series(np.nan, index=inp.steps.index))
    summed = pd.Series(d.to_numpy(dtype="float64", na_value=np.nan)).groupby(
        inp.steps["task_index"].to_numpy(), observed=True).sum(min_count=1).reindex(
        range(len(t))).to_numpy()
    return np.where(timed, wall, summed)


def _curve(s: pd.DataFrame, axis: str, ci: float, inp: Inputs) -> pd.DataFrame:
    """For every group of (run_id, difficulty) at once, the share of its tasks (rows of ``s``:
    ``end``, ``solved``) solved by each point of its run's grid: k = 1 … the run's most steps
    (``steps``), or the distinct end times of the run's correct tasks and its last end time
    (``seconds``). Wilson; with repeated trials a bootstrap over tasks."""
    codes, keys = group_codes(s, ["run_id", "difficulty"])
    at, group = _grid(s, keys, axis)
    end, solved = s["end"].to_numpy(dtype="float64"), s["solved"].to_numpy(dtype=bool)
    # n_solved(g, x) = correct tasks of g with end <= x: both on one integer key (group, rank
    # of the value among every end and grid point), so one sorted search counts them all
    values = np.unique(np.concatenate([end[solved], at]))
    width = len(values) + 1
    done = np.sort(codes[solved] * width + np.searchsorted(values, end[solved]))
    n_solved = (np.searchsorted(done, group * width + np.searchsorted(values, at), side="right")
                - np.searchsorted(done, group * width, side="left"))
    n = np.bincount(codes, minlength=len(keys))[group]
    lo, hi = proportion_intervals(n_solved, n, ci) if inp.clusters is None \
        else curve_intervals(s, codes, group, at, inp, ci)  # trials: resample tasks
    return pd.DataFrame({"run_id": keys["run_id"].to_numpy()[group],
                         "difficulty": keys["difficulty"].to_numpy()[group], axis: at,
                         "n": n, "n_solved": n_solved, "share": n_solved / n,
                         "ci_low": lo, "ci_high": hi})


def _grid(s: pd.DataFrame, keys: pd.DataFrame, axis: str) -> tuple[np.ndarray, np.ndarray]:
    """The curve's points and the group (row of ``keys``) of each, each group's points
    together and ascending, groups in order: every group of a run has the run's grid (see
    :func:`_curve`)."""
    end = s["end"].to_numpy(dtype="float64")
    if axis == "steps":
        top = pd.Series(end).groupby(s["run_id"].to_numpy(), observed=True).max().astype(int)
        points = pd.DataFrame({"run_id": np.repeat(top.index.to_numpy(), top.to_numpy())})
        points["at"] = points.groupby("run_id", sort=False).cumcount() + 1
    else:
        last = s.groupby("run_id", sort=False, observed=True)["end"].max()
        points = pd.concat([s.loc[s["solved"], ["run_id", "end"]],
                            pd.DataFrame({"run_id": last.index, "end": last.to_numpy()})]) \
            .rename(columns={"end": "at"}).drop_duplicates().sort_values(["run_id", "at"])
    groups = pd.DataFrame({"run_id": keys["run_id"].astype(object),
                           "group": np.arange(len(keys))})
    cross = groups.merge(points.astype({"run_id": object}), on="run_id", sort=False)
    return cross["at"].to_numpy(), cross["group"].to_numpy()


@needs(files=(TOOL_CALLS_FILE,), file_needs=in_file(TOOL_CALLS_FILE, "task_id", "tool_name",
       "success"), uses=("difficulty", "task_type",), trials="any")
def tool_fit(run: Run | Runs, *, threshold: float | None = None, ci: float = 0.95,
             actor: str | None = "agent") -> pd.DataFrame:
    """Which tools work best for what: per tool and task type, the accuracy of the tasks that
    use the tool against the tasks of the same type that do not.

    Parameters
    ----------
    run : Run or Runs
        Reads tool_calls.csv ``task_id``, ``tool_name``, ``success`` when the run has it,
        else trajectory.csv ``task_id``, ``step_id``, ``tool``, ``success``; task_metrics
        ``task_type`` and ``difficulty`` when present.
    threshold : float, optional
        Success threshold; default the run's.
    ci : float
        Level of the intervals.
    actor : str or None
        Calls (steps) of this actor only when the run names several (``actor``; a note says
        how many were left out): :func:`~dabench_analysis.tables._actors.own_actions`.

    Returns
    -------
    DataFrame
        Per ``run_id`` (several runs only), rows by ``group_by`` ("all": the pooled run;
        "task_type" and "difficulty" where the run has them) and ``group``, one per tool:
        ``tool``, ``n_using`` (tasks of the group calling it), ``accuracy_using`` (Wilson),
        ``n_calls``, ``failure_rate`` of its calls (Wilson), ``n_not_using``,
        ``accuracy_not_using`` (Wilson), ``diff`` (using − not using) with ``ci_low``,
        ``ci_high`` (Newcombe), ``p_value`` (Fisher exact), ``p_adjusted`` (Holm over the cells of
        one ``group_by``), ``small`` (a compared group has fewer than 5 tasks), ``method``.

    Raises
    ------
    ValueError
        Neither tool_calls.csv nor trajectory.csv with ``tool``.

    Notes
    -----
    Tools are chosen for the tasks that need them, so a difference is an association, not
    the tool's effect.

    References
    ----------
    Newcombe, R. G. (1998). Statistics in Medicine 17, 873–890. Holm, S. (1979). Scand. J.
    Statist. 6, 65–70.

    Examples
    --------
    >>> import dabench_analysis as da
    >>> fit = tool_fit(da.load_run("data/sample_runs/proposed_aat"))
    >>> fit["group_by"].unique().tolist()
    ['all', 'task_type', 'difficulty']
    """
    check_ci(ci)
    runs = [run] if isinstance(run, Run) else list(run) if isinstance(run, Runs) else [run]
    from_calls = all(isinstance(r, Run) and r.has_file(TOOL_CALLS_FILE) for r in runs)
    if from_calls:
        inp = gather(run, "tool_fit", steps=None, calls=["tool_name", "success"],
                     task_columns=["task_type"], threshold=threshold, calls_needed=True,
                     calls_optional=("actor",))
        used = inp.calls.rename(columns={"tool_name": "tool"})
    else:
        inp = gather(run, "tool_fit", steps=["tool", "success"], task_columns=["task_type"],
                     threshold=threshold, optional=("actor",))
        used = inp.steps[inp.steps["tool"].notna()]
    used, note = own_actions(used, actor)
    used = used[["task_index", "tool", "success"]].assign(tool=lambda f: f["tool"].astype("string"))
    return with_note(_fit(inp, used, ci), note)


def _fit(inp, used: pd.DataFrame, ci: float) -> pd.DataFrame:
    t = inp.tasks
    fams = [("all", np.zeros(len(t), dtype=np.int64), np.array(["all"], dtype=object))]
    for c in ("task_type", "difficulty"):  # fallback: task type, difficulty, the pooled run
        if c in t and t[c].notna().any():
            codes, names = pd.factorize(t[c].astype("string"))
            fams.append((c, codes, np.asarray(names, dtype=object)))
    ok, scored = t["correct"].fillna(False).to_numpy(dtype=bool), t["correct"].notna().to_numpy()
    ok &= scored
    run, run_names = pd.factorize(t["run_id"]) if "run_id" in t else (
        np.zeros(len(t), dtype=np.int64), np.array([""], dtype=object))
    tool, tool_names = pd.factorize(used["tool"].astype("string").fillna(NO_VALUE))
    per_task = pd.DataFrame({"task": used["task_index"].to_numpy(), "tool": tool,
                             "failed": used["success"].astype("boolean").eq(False)
                             .fillna(False).to_numpy(dtype=bool)}).groupby(
        ["task", "tool"], sort=False, observed=True).agg(n_calls=("failed", "size"),
                                          n_failed=("failed", "sum")).reset_index()
    g = _fit_cells(per_task, fams, run, len(run_names), ok, scored)
    g["run_id"] = np.asarray(run_names, dtype=object)[g.pop("run").to_numpy()]
    g["tool"] = np.asarray(tool_names, dtype=object)[g["tool"].to_numpy()]
    out = _fit_columns(g, inp, ci)
    if inp.clusters is None:
        return out
    keys = [k for k in ("run_id", "group_by", "group", "tool") if k in out]
    boot = fit_intervals(per_task, fams, run, run_names, np.asarray(tool_names, dtype=object),
                         ok, scored, inp, ci).drop(columns=[] if "run_id" in out else "run_id")
    at = pd.MultiIndex.from_frame(out[keys].astype(str)).get_indexer(
        pd.MultiIndex.from_frame(boot[keys].astype(str)))
    for c in boot.columns.difference(keys):
        if c.endswith(("_ci_low", "_ci_high")) or c in ("ci_low", "ci_high"):
            out.loc[at[at >= 0], c] = boot.loc[at >= 0, c].to_numpy()
    out["method"] = out["method"].str.replace("Wilson", "percentile bootstrap over tasks "
                                              f"({inp.n_boot} draws, seed {inp.seed})")
    out["note"] = trace_note(inp) + "; p-values treat the traces as independent"
    return out


def _fit_cells(per_task: pd.DataFrame, fams: list, run: np.ndarray, n_runs: int,
               ok: np.ndarray, scored: np.ndarray) -> pd.DataFrame:
    """Per family, run, group and tool: tasks using it (correct, scored), its calls and
    failures, and the group's other tasks."""
    task = per_task["task"].to_numpy()
    rows = []
    for fam, group, names in fams:
        width = len(names)
        key = run * width + group  # a task's (run, group); group -1: no value
        tot_n = np.bincount(key[group >= 0], weights=scored[group >= 0],
                            minlength=n_runs * width)
        tot_k = np.bincount(key[group >= 0], weights=ok[group >= 0],
                            minlength=n_runs * width)
        cell = per_task.assign(run=run[task], group=group[task], ok=ok[task],
                               scored=scored[task])
        g = cell[cell["group"] >= 0].groupby(["run", "group", "tool"], sort=False,
                                             observed=True).agg(
            n_using=("scored", "sum"), k_using=("ok", "sum"), n_calls=("n_calls", "sum"),
            n_failed=("n_failed", "sum")).reset_index()
        at = (g["run"] * width + g["group"]).to_numpy()
        g["n_not_using"] = tot_n[at] - g["n_using"]
        g["k_not_using"] = tot_k[at] - g["k_using"]
        g["group_by"], g["group"] = fam, names[g["group"].to_numpy()]
        rows.append(g)
    return pd.concat(rows, ignore_index=True)


def _fit_columns(g: pd.DataFrame, inp, ci: float) -> pd.DataFrame:
    d = compare_proportions(g["k_using"], g["n_using"], g["k_not_using"], g["n_not_using"],
                            ci=ci)
    out = pd.DataFrame({
        "run_id": g["run_id"], "group_by": g["group_by"], "group": g["group"],
        "tool": g["tool"], "n_using": g["n_using"].astype("int64"),
        **wilson(g["k_using"], g["n_using"], ci, "accuracy_using"),
        "n_calls": g["n_calls"].astype("int64"),
        **wilson(g["n_failed"], g["n_calls"], ci, "failure_rate"),
        "n_not_using": g["n_not_using"].astype("int64"),
        **wilson(g["k_not_using"], g["n_not_using"], ci, "accuracy_not_using"),
        "diff": d["diff"], "ci_low": d["ci_low"], "ci_high": d["ci_high"],
        "p_value": d["p_value"]})
    out["p_adjusted"] = holm(out, ["run_id", "group_by"])
    out["small"] = (out["n_using"] < SMALL) | (out["n_not_using"] < SMALL)
    out["method"] = f"Wilson; {TWO_PROPORTIONS}; Holm within group_by"
    out["_f"] = out["group_by"].map({"all": 0, "task_type": 1, "difficulty": 2})
    out["_g"] = out["group"].map({d: f"{i}" for i, d in enumerate(schema.DIFFICULTY_ORDER)}
                                 ).fillna(out["group"])
    out = out.sort_values(["run_id", "_f", "_g", "n_using", "tool"],
                          ascending=[True, True, True, False, True], kind="stable")
    out = out.drop(columns=["_f", "_g"]).reset_index(drop=True)
    warn(inp.notes)
    return out if inp.several else out.drop(columns="run_id")
