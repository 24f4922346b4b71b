"""What every trajectory table starts from: a Run (or Runs) turned once into the task frame, the
ordered steps and the tool calls, with correctness at the run's success threshold; and the
two-level grouping every table reports (pooled, and per difficulty where the run has it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from dabench_analysis import schema
from dabench_analysis.load._run import Run
from dabench_analysis.load._sweep import Runs
from dabench_analysis.schema import TOOL_CALLS_FILE, TRAJECTORY_FILE, require_columns
from dabench_analysis.stats._clustered import (
    cluster_bootstrap_difference,
    cluster_bootstrap_ratio,
)
from dabench_analysis.stats._inputs import warn
from dabench_analysis.stats._proportions import proportion_intervals
from dabench_analysis.stats.multicomp import adjust_pvalues
from dabench_analysis.tables._pooling import check_trials
from dabench_analysis.trajectory.steps import index_tasks, order_steps

#: The pooled row of every table (the difficulty column's first level).
POOLED = "all"
#: The ``difficulty`` levels of a trajectory table, in order.
LEVELS = (POOLED, *schema.DIFFICULTY_ORDER)


@dataclass
class Inputs:
    """One table's inputs.

    Attributes
    ----------
    tasks : DataFrame
        One row per task (``task_index`` = its position): ``run_id``, ``task_id``,
        ``difficulty`` (str or <NA>; all <NA> when the run has no such column), ``correct``
        (boolean: ``final_score >= threshold``, <NA> without a score), ``final_score`` and
        the task columns asked for (those the run has).
    steps : DataFrame or None
        :func:`~dabench_analysis.trajectory.steps.order_steps` of the trajectory.
    calls : DataFrame or None
        The tool calls with ``task_index`` (-1: task unknown), when asked for and present.
    threshold : float
    several : bool
        More than one run: results carry ``run_id``.
    clusters : ndarray of int64 or None
        With repeated trials (another harness's, each its own trace): each task row's task,
        0 … C−1 (``run_id``, ``task_id``), the cluster its intervals resample; None with one
        row per task.
    """

    tasks: pd.DataFrame
    steps: pd.DataFrame | None
    calls: pd.DataFrame | None
    threshold: float
    several: bool
    notes: list[str] = field(default_factory=list)
    clusters: np.ndarray | None = None
    n_boot: int = 2000
    seed: int = 0


def _runs(run: Run | Runs) -> list[Run]:
    if isinstance(run, Run):
        return [run]
    if isinstance(run, Runs):
        if not len(run):
            raise ValueError("the Runs hold no run: nothing to analyse")
        return list(run)
    raise TypeError(f"a trajectory table takes a Run or a Runs (load_run / load_runs), got "
                    f"{type(run).__name__}")


def _frame(run: Run | Runs, runs: list[Run], name: str, file: str, columns: Sequence[str],
           notes: list[str], optional: Sequence[str] = (),
           lenient: bool = False) -> pd.DataFrame | None:
    """``name`` of every run that has ``file`` (only ``columns``, and ``optional`` ones its
    file has), stacked, with the run's ``run_id``; None if none has. A Runs whose runs all
    have the file and whose loaded frames hold the columns gives its stacked frame (read once,
    kept by the Runs). ``lenient``: a run whose file lacks one of ``columns`` (an Inspect log's
    tool events carry no ``step_id``) counts as not having the file, with a note."""
    have = [r for r in runs if r.has_file(file)]  # another harness's: the steps it records
    if have and len(have) < len(runs):
        notes.append(f"{len(runs) - len(have)} run(s) without {file} left out")
    if lenient:
        lacking = {r.run_id: [c for c in columns if c not in r.columns_of(name)] for r in have}
        for run_id, cols in lacking.items():
            if cols:
                notes.append(f"{file} of run {run_id} left out: it has no "
                             f"{', '.join(cols)} to place its rows among the steps")
        have = [r for r in have if not lacking[r.run_id]]
    if not have:
        return None
    # repeated trials; a Runs' stacked tasks have every run's columns (no run's slice built)
    trial = ["trial"] if "trial" in run.tasks else []
    want = list(dict.fromkeys(["run_id", *columns, *trial, *optional]))
    if isinstance(run, Runs) and len(have) == len(runs) and all(
            c in getattr(r, name) for r in runs for c in columns):
        stacked = getattr(run, name)
        if set(pd.unique(stacked["run_id"])) <= {r.run_id for r in runs}:
            return stacked[[c for c in want if c in stacked]]
    frames = [r.select(name, want[1:]) for r in have]
    for r, f in zip(have, frames, strict=True):
        require_columns(f, list(columns), f"{file} of run {r.run_id}")
        # a run folder's files are its own: a run_id column naming another run (a task file
        # without run_id names the run after its folder) does not orphan them
        f["run_id"] = pd.array([r.run_id] * len(f), dtype="string")
    return frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)


def gather(run: Run | Runs, what: str, *, steps: Sequence[str] | None = (),
           calls: Sequence[str] | None = None, task_columns: Sequence[str] = (),
           threshold: float | None = None, calls_needed: bool = False,
           optional: Sequence[str] = ("duration_seconds",),
           calls_optional: Sequence[str] = (), traces: bool = True) -> Inputs:
    """The inputs of a trajectory table (see :class:`Inputs`).

    Parameters
    ----------
    run : Run or Runs
    what : str
        The table, named in a warning (several trials of a task, each its own trajectory).
    steps : sequence of str or None
        trajectory.csv columns the table reads besides ``task_id`` and ``step_id``; None:
        the table reads no steps.
    calls : sequence of str, optional
        tool_calls.csv columns it reads besides ``task_id``; None: none.
    task_columns : sequence of str
        task_metrics columns used when present.
    threshold : float, optional
        Success threshold in (0, 1]; default 0.8 (:data:`~dabench_analysis.schema.SUCCESS_THRESHOLD`).
    calls_needed : bool
        Raise when no run has tool_calls.csv or its file lacks one of ``calls``. Otherwise
        the calls add to the steps: a run whose file lacks one of ``calls`` is read without
        its calls (a note says so), and ``calls`` is None when no run has them.
    optional, calls_optional : sequence of str
        trajectory.csv (default ``duration_seconds``) and tool_calls.csv columns read when the
        file has them.
    traces : bool
        The table takes repeated trials, each its own trace (``clusters`` set); False for a
        table that pairs tasks (a warning, :class:`PooledTrialsWarning`, when a task has
        several trials).

    Raises
    ------
    ValueError
        No run has trajectory.csv (when steps are read), a needed column is absent, a
        threshold outside (0, 1].
    TypeError
        Neither a Run nor a Runs.
    """
    runs = _runs(run)
    threshold = schema.check_threshold(schema.SUCCESS_THRESHOLD if threshold is None
                                       else threshold)
    notes: list[str] = []
    tasks = run.tasks.reset_index(drop=True)  # a Runs: every run's, stacked once
    require_columns(tasks, ["task_id", "final_score"])
    keep = ["run_id", "task_id", "trial", "final_score", *(c for c in task_columns if c in tasks)]
    out = tasks[[c for c in dict.fromkeys(keep) if c in tasks]].copy()
    out["difficulty"] = (tasks["difficulty"].astype("string") if "difficulty" in tasks
                         else pd.Series(pd.NA, index=tasks.index, dtype="string"))
    out["correct"] = schema.correct(tasks["final_score"].astype("float64"), threshold)
    clusters = task_clusters(out) if traces else None
    if clusters is None:
        check_trials(out, what)  # a table pairing tasks: several trials would be pooled
    ordered = called = None
    if steps is not None:
        frame = _frame(run, runs, "trajectory", TRAJECTORY_FILE,
                       ["task_id", "step_id", *steps], notes, optional)
        if frame is None:
            raise ValueError(f"needs {TRAJECTORY_FILE}, absent in "
                             + ", ".join(r.run_id for r in runs))
        ordered, more = order_steps(frame, out)
        notes += more
    if calls is not None:
        called = _frame(run, runs, "tool_calls", TOOL_CALLS_FILE, ["task_id", *calls], notes,
                        calls_optional, lenient=not calls_needed)
        if called is None and calls_needed:
            raise ValueError(f"needs {TOOL_CALLS_FILE}, absent in "
                             + ", ".join(r.run_id for r in runs))
        if called is not None:
            called = called.assign(task_index=index_tasks(called, out))
            if (called["task_index"] < 0).any():
                notes.append(f"{int((called['task_index'] < 0).sum())} tool call(s) of tasks "
                             "absent from the task metrics left out")
                called = called[called["task_index"] >= 0].reset_index(drop=True)
    return Inputs(out, ordered, called, threshold, len(runs) > 1, notes, clusters)


def task_clusters(tasks: pd.DataFrame) -> np.ndarray | None:
    """Each task row's task (``run_id``, ``task_id``) as 0 … C−1 when a task has several
    rows (repeated trials, each its own trace), else None."""
    if "trial" not in tasks or tasks.empty:
        return None
    keys = [c for c in ("run_id", "task_id") if c in tasks]
    codes = tasks.groupby(keys, sort=False, dropna=False).ngroup().to_numpy(dtype=np.int64)
    return codes if len(np.unique(codes)) < len(codes) else None


def shares(frame: pd.DataFrame, keys: Sequence[str], spec: dict, inp: Inputs,
           ci: float) -> pd.DataFrame:
    """Per group of ``keys`` (observed, in order of first appearance, as ``groupby(keys,
    sort=False)``), each ``spec`` entry ``{prefix: (numerator, denominator)}`` (flag columns
    of ``frame``; denominator None: every row) as ``prefix``, ``prefix_ci_low``,
    ``prefix_ci_high``: Wilson with one row per task; with repeated trials (``inp.clusters``)
    a percentile bootstrap over tasks, every trace of a drawn task with it (``frame`` then
    needs ``task_index``)."""
    keys = list(keys)
    codes = frame.groupby(keys, sort=False, observed=True, dropna=False).ngroup().to_numpy()
    out = frame[keys].drop_duplicates().reset_index(drop=True)
    n_g = len(out)
    for prefix, (k, n) in spec.items():
        num = frame[k].to_numpy(dtype="float64", na_value=0.0)
        den = np.ones(len(frame)) if n is None else frame[n].to_numpy(dtype="float64",
                                                                      na_value=0.0)
        if inp.clusters is None:
            cols = wilson(np.bincount(codes, weights=num, minlength=n_g),
                          np.bincount(codes, weights=den, minlength=n_g), ci, prefix)
        else:
            r = cluster_bootstrap_ratio(num, den, codes,
                                        inp.clusters[frame["task_index"].to_numpy()], ci=ci,
                                        n_boot=inp.n_boot, seed=inp.seed)
            cols = {prefix: r["share"].to_numpy(), f"{prefix}_ci_low": r["ci_low"].to_numpy(),
                    f"{prefix}_ci_high": r["ci_high"].to_numpy()}
        for name, values in cols.items():
            out[name] = values
    return out


def difference(frame: pd.DataFrame, keys: Sequence[str], first: tuple[str, str],
               second: tuple[str, str], inp: Inputs, ci: float,
               d: pd.DataFrame) -> pd.DataFrame:
    """``d`` (a two-proportion comparison per group of ``keys``, in :func:`shares`' order)
    with ``ci_low``, ``ci_high`` of its ``diff`` from the bootstrap over tasks when the run has
    repeated trials (``first``, ``second``: the flag columns of each ratio); ``d`` as it is
    with one row per task."""
    if inp.clusters is None:
        return d
    codes = frame.groupby(list(keys), sort=False, observed=True, dropna=False).ngroup()
    cols = [tuple(frame[c].to_numpy(dtype="float64", na_value=0.0) for c in pair)
            for pair in (first, second)]
    r = cluster_bootstrap_difference(*cols, codes.to_numpy(),
                                     inp.clusters[frame["task_index"].to_numpy()], ci=ci,
                                     n_boot=inp.n_boot, seed=inp.seed)
    return d.assign(ci_low=r["ci_low"].to_numpy(), ci_high=r["ci_high"].to_numpy())


def trace_note(inp: Inputs, clustered: bool = True, traces: np.ndarray | None = None) -> str:
    """The note of a table on repeated trials ("" with one row per task): each trial its own
    trace, and whether its intervals are clustered by task; the counts are of ``traces`` (the
    task indices of the traces the table counts) when given, else of the traces with steps
    (or tool calls) when the table reads them."""
    if inp.clusters is None:
        return ""
    t = np.arange(len(inp.tasks)) if traces is None else np.unique(traces)
    for frame in (inp.steps, inp.calls) if traces is None else ():
        if frame is not None:
            t = np.unique(frame["task_index"].to_numpy())
            break
    n_tasks, n_traces = len(np.unique(inp.clusters[t])), len(t)
    how = ("intervals clustered by task" if clustered else
           "intervals treat the traces as independent")
    return f"each trial its own trace; {how} ({n_tasks} tasks, {n_traces} traces)"


def stratify(frame: pd.DataFrame, tasks: pd.DataFrame) -> pd.DataFrame:
    """``frame`` (with ``task_index``) twice: pooled (difficulty "all") and per difficulty,
    with ``run_id`` and ``difficulty`` from its task; rows of tasks without a difficulty are
    only pooled."""
    t = frame["task_index"].to_numpy()
    runs = tasks["run_id"] if "run_id" in tasks else pd.Series("", index=tasks.index)
    run_code, run_names = pd.factorize(runs)
    diff_code, diff_names = pd.factorize(tasks["difficulty"])  # -1: no difficulty
    base = frame.assign(run_id=pd.Categorical.from_codes(run_code[t], run_names))
    levels = [POOLED, *diff_names]
    d = diff_code[t]
    known = d >= 0
    return pd.concat([
        base.assign(difficulty=pd.Categorical.from_codes(np.zeros(len(t), dtype=int), levels)),
        base[known].assign(difficulty=pd.Categorical.from_codes(d[known] + 1, levels))],
        ignore_index=True)


def finish(table: pd.DataFrame, inputs: Inputs, *, sort: Sequence[str] = (),
           ascending: bool | Sequence[bool] = True, clustered: bool = False,
           p_clustered: bool = False, traces: np.ndarray | None = None) -> pd.DataFrame:
    """Order a table (runs, then difficulty "all", Easy … Extreme, then ``sort``), make
    ``difficulty`` an ordered categorical, drop ``run_id`` for one run, and warn the notes.
    With repeated trials, a ``note`` column says each trial is its own trace and whether the
    intervals are ``clustered`` by task (:func:`trace_note`), and ``method`` names the
    bootstrap where they are (and the note says the p-values treat the traces as independent,
    unless ``p_clustered``: a test clustered by task); ``traces``: as :func:`trace_note`."""
    present = set(pd.unique(table["difficulty"].to_numpy(dtype=object)))
    levels = [lvl for lvl in LEVELS if lvl in present] + sorted(present - set(LEVELS))
    table = table.assign(difficulty=pd.Categorical(table["difficulty"].astype(object),
                                                   categories=levels, ordered=True),
                         run_id=table["run_id"].astype(object))
    keys = ["run_id", "difficulty", *sort]
    asc = [True, True, *([ascending] * len(sort) if isinstance(ascending, bool) else ascending)]
    table = table.sort_values(keys, ascending=asc, kind="stable").reset_index(drop=True)
    if not inputs.several:
        table = table.drop(columns="run_id")
    note = trace_note(inputs, clustered, traces) if isinstance(inputs, Inputs) else ""
    if note:
        if clustered and "method" in table:
            table["method"] = table["method"].astype(str).str.replace(
                "Wilson", f"percentile bootstrap over tasks ({inputs.n_boot} draws, seed "
                          f"{inputs.seed})", regex=False)
        if clustered and "p_value" in table and not p_clustered:
            note += "; p-values treat the traces as independent"
        table["note"] = note
    warn(inputs.notes)
    return table


def wilson(k, n, ci: float, prefix: str) -> dict[str, np.ndarray]:
    """``{prefix: k/n, prefix_ci_low, prefix_ci_high}`` (Wilson; NaN where n = 0)."""
    k, n = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    lo, hi = proportion_intervals(k, n, ci)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(n > 0, k / np.where(n > 0, n, 1), np.nan)
    return {prefix: share, f"{prefix}_ci_low": lo, f"{prefix}_ci_high": hi}


def holm(table: pd.DataFrame, family: Sequence[str], column: str = "p_value") -> np.ndarray:
    """Holm-adjusted ``column`` within each family of rows (NaN left out of the count)."""
    out = np.full(len(table), np.nan)
    for _, idx in table.groupby(list(family), sort=False, observed=True).indices.items():
        out[idx] = adjust_pvalues(table[column].to_numpy(dtype="float64")[idx],
                                  method="holm").p_adjusted
    return out


def per_group(frame: pd.DataFrame, keys: Sequence[str],
              rows: Callable[[pd.DataFrame], dict]) -> pd.DataFrame:
    """``rows(sub)`` for each group of ``keys`` (observed), as one frame with the keys first."""
    out = [dict(zip(keys, k if isinstance(k, tuple) else (k,), strict=True)) | rows(sub)
           for k, sub in frame.groupby(list(keys), sort=False, observed=True)]
    return pd.DataFrame(out)


def group_codes(frame: pd.DataFrame, keys: Sequence[str]) -> tuple[np.ndarray, pd.DataFrame]:
    """Each row's group of ``keys`` (0 … k−1, in order of first appearance, as
    ``groupby(keys, sort=False).ngroup()``) and the groups' keys, one row per code.

    Raises
    ------
    ValueError
        A key column with a missing value.

    Notes
    -----
    Each key as integer codes (a categorical's own codes, else ``pd.factorize``), combined
    into one integer per row and factorised once: several times faster than grouping on
    string and categorical columns together."""
    keys = list(keys)
    combined = np.zeros(len(frame), dtype=np.int64)
    for key in keys:
        col = frame[key]
        if isinstance(col.dtype, pd.CategoricalDtype):
            code, width = col.cat.codes.to_numpy(dtype=np.int64), len(col.cat.categories)
        else:
            code, uniques = pd.factorize(col)
            width = len(uniques)
        if (code < 0).any():
            raise ValueError(f"group key {key!r} has missing values")
        combined = combined * max(width, 1) + code
        if combined.size and int(combined.max()) >= 2**62 // max(len(frame), 1):
            combined = pd.factorize(combined)[0].astype(np.int64)  # stays below 2**63
    codes, _ = pd.factorize(combined)
    first = pd.Series(codes).drop_duplicates().index  # in code order: first appearances
    return codes.astype(np.int64), frame[keys].iloc[first].reset_index(drop=True)
