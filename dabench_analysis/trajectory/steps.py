# Over 400 lines (<= 500): one idea, a trajectory as a sequence; ordering, blocks, patterns,
# conformance and the directly-follows relation all work on the same ordered steps and blocks,
# and most of the length is docstrings.
"""Trajectories as sequences (process mining): steps in order, blocks of one stage, the pattern
of each task, its conformance to the guide's canonical pattern and the directly-follows
relation between blocks.

Frames in, frames out (the tables in :mod:`dabench_analysis.trajectory` take a Run).
Every function here works on the steps as :func:`order_steps` returns them: the valid steps of
known tasks, in ``step_id`` order, each with ``task_index``, the position of its task in the
task frame. Seed 000 §Data Model Schema 2 (trajectory.csv: process mining, step-level
debugging) and §Trajectory Metrics (the patterns ``UNDERSTAND→PLAN→EXECUTE→VERIFY→SUMMARIZE``,
``…→VERIFY→RETRY→…``, ``…→PLAN→REPLAN→…``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from dabench_analysis import schema
from dabench_analysis.schema import require_columns
from dabench_analysis.stats._inputs import check_frame

#: The guide's canonical pattern (seed 000 §Trajectory Metrics), the catalogue's stage order.
CANONICAL: tuple[str, ...] = tuple(schema.STAGES)
#: How a repeated block of a stage reads in the guide's patterns: a second PLAN block is a
#: REPLAN, a second EXECUTE block a RETRY (seed 000 §Trajectory Metrics).
REPEAT_LABELS: dict[str, str] = {"PLAN": "REPLAN", "EXECUTE": "RETRY"}
#: Joins the blocks of a pattern.
ARROW = "→"
#: The start and end nodes of the directly-follows relation.
START, END = "start", "end"


def _task_keys(frame: pd.DataFrame) -> list[str]:
    """The columns that identify a task's trajectory: ``run_id`` (when present), ``task_id``
    and ``trial`` (when present: another harness's repeated trials, each its own)."""
    return [c for c in ("run_id", "task_id", "trial") if c in frame]


def index_tasks(frame: pd.DataFrame, tasks: pd.DataFrame) -> np.ndarray:
    """For each row of ``frame`` (steps, tool calls), the 0-based position of its task in
    ``tasks`` (matched on ``task_id``, and on ``run_id`` and ``trial`` when both have them);
    -1 for a task that ``tasks`` does not have.

    Parameters
    ----------
    frame : DataFrame
        Rows with ``task_id`` (and ``run_id``, used when ``tasks`` has it too).
    tasks : DataFrame
        One row per task: ``task_id`` (and ``run_id``).

    Returns
    -------
    ndarray of int64
        One position per row of ``frame``; -1 where its task is not in ``tasks``.

    Raises
    ------
    ValueError
        ``tasks`` lacks a key column.

    Examples
    --------
    >>> tasks = pd.DataFrame({"task_id": ["a", "b"]})
    >>> index_tasks(pd.DataFrame({"task_id": ["b", "x", "a"]}), tasks).tolist()
    [1, -1, 0]
    """
    keys = [k for k in _task_keys(frame) if k in tasks]
    require_columns(tasks, keys)
    cols, n = frame[keys].astype("string"), len(frame)
    same = np.ones(max(n - 1, 0), dtype=bool)  # a row with its predecessor's keys
    for k in keys:
        c = cols[k].reset_index(drop=True)
        same &= c.iloc[1:].reset_index(drop=True).eq(c.iloc[:-1]).fillna(False).to_numpy(bool)
    first = np.flatnonzero(np.concatenate([[n > 0], ~same]))  # each run of equal keys, once
    if len(keys) == 1:
        at = pd.Index(tasks[keys[0]].astype("string")).get_indexer(cols[keys[0]].iloc[first])
    else:
        at = pd.MultiIndex.from_frame(tasks[keys].astype("string")).get_indexer(
            pd.MultiIndex.from_frame(cols.iloc[first]))
    return np.repeat(at, np.diff(np.append(first, n)))


def order_steps(steps: pd.DataFrame, tasks: pd.DataFrame | None = None) -> tuple[pd.DataFrame,
                                                                                list[str]]:
    """The valid steps, in ``step_id`` order within each task, with ``task_index``.

    Parameters
    ----------
    steps : DataFrame
        One row per step (``run.trajectory``): ``task_id``, ``step_id`` (integer), optional
        ``run_id`` and any other columns.
    tasks : DataFrame, optional
        One row per task (``run.tasks``); steps of tasks it does not have are left out.
        Default: the tasks of the steps, in order of first appearance.

    Returns
    -------
    steps : DataFrame
        The kept rows (a fresh RangeIndex), sorted by task and ``step_id``, with ``task_index``
        (int64: the task's 0-based row in ``tasks``) first.
    notes : list of str
        One line per kind of row left out, with how many: steps without a ``step_id`` or
        ``task_id`` (a missing or non-numeric id is missing once loaded), a ``step_id``
        repeated within a task (the first row kept), steps of tasks absent from ``tasks``.

    Raises
    ------
    ValueError
        Without a ``task_id`` or ``step_id`` column.
    TypeError
        A Run or Runs (pass ``run.trajectory``).

    Notes
    -----
    Sorting is stable on (task, ``step_id``); among rows repeating a task's ``step_id`` the
    first in file order is kept. Nothing is dropped silently: each kind of row left out is a
    note (the tables warn them), and ``validate_run`` reports each row by file, row and
    column.

    References
    ----------
    van der Aalst, W. M. P. (2016). Process Mining: Data Science in Action, 2nd ed.
    Springer, §5.2 (event logs must be ordered per case).

    Examples
    --------
    >>> s = pd.DataFrame({"task_id": ["a", "a", "a", "b"], "step_id": [2, 1, 1, None]})
    >>> out, notes = order_steps(s)
    >>> out["task_index"].tolist(), out["step_id"].tolist(), notes
    ([0, 0], [1.0, 2.0], ['1 step(s) without a step_id or task_id left out', '1 step(s) repeating a step_id of their task left out (first kept)'])
    """
    steps = check_frame(steps, "steps", "trajectory")
    require_columns(steps, ["task_id", "step_id"], "steps")
    notes = []
    sid = pd.to_numeric(steps["step_id"], errors="coerce").to_numpy(dtype="float64",
                                                                      na_value=np.nan)
    valid = ~np.isnan(sid) & steps["task_id"].notna().to_numpy()
    if (~valid).any():
        notes.append(f"{int((~valid).sum())} step(s) without a step_id or task_id left out")
    if tasks is None:
        t = steps.groupby(_task_keys(steps), sort=False, dropna=False).ngroup().to_numpy()
    else:
        t = index_tasks(steps, tasks)
        orphan = valid & (t < 0)
        if orphan.any():
            notes.append(f"{int(orphan.sum())} step(s) of tasks absent from the task metrics "
                         "left out")
        valid &= t >= 0
    order = np.flatnonzero(valid)
    ts, ss = t[order], sid[order]
    if not ((ts[1:] > ts[:-1]) | ((ts[1:] == ts[:-1]) & (ss[1:] >= ss[:-1]))).all():
        order = np.lexsort((sid, t))  # not in order already (a file is, mostly): sort
        order = order[valid[order]]
        ts, ss = t[order], sid[order]
    dup = np.zeros(len(order), dtype=bool)
    dup[1:] = (ts[1:] == ts[:-1]) & (ss[1:] == ss[:-1])
    if dup.any():
        notes.append(f"{int(dup.sum())} step(s) repeating a step_id of their task left out "
                     "(first kept)")
    order = order[~dup]
    out = (steps.iloc[order] if len(order) < len(steps) or (order[1:] < order[:-1]).any()
           else steps).reset_index(drop=True)
    out.insert(0, "task_index", t[order].astype(np.int64))
    return out, notes


def blocks(steps: pd.DataFrame, *, by: str = "stage", collapse_repeats: bool = True,
           label_repeats: bool | None = None) -> pd.DataFrame:
    """Blocks of a task's steps: consecutive steps with one value of ``by``.

    Parameters
    ----------
    steps : DataFrame
        From :func:`order_steps` (``task_index``, ``step_id``, ``by``; ``duration_seconds``
        optional, seconds).
    by : str
        The column whose sequence is the pattern: ``stage`` (default), ``phase``, ``agent``,
        ``tool``. Steps without a value are not part of the sequence (for ``tool``: the steps
        that call no tool).
    collapse_repeats : bool
        True: consecutive steps with one value are one block. False: every step is a block.
    label_repeats : bool, optional
        Read a second and later PLAN block as REPLAN and EXECUTE block as RETRY in ``label``
        (:data:`REPEAT_LABELS`). Default: when ``by == "stage"``.

    Returns
    -------
    DataFrame
        One row per block in order: ``task_index``, ``block`` (0-based within its task),
        ``value`` (str), ``label`` (``value`` or its repeat label), ``first_step_id``,
        ``n_steps``, ``seconds`` (sum of the steps' ``duration_seconds``; NaN when one of them
        is missing or the column is absent).

    Raises
    ------
    ValueError
        A column missing.

    Notes
    -----
    A block is a maximal run of consecutive steps (in ``step_id`` order) with one value of
    ``by``, the activity of process mining's event log; its seconds are the sum of its steps'.

    References
    ----------
    van der Aalst, W. M. P. (2016). Process Mining: Data Science in Action, 2nd ed.
    Springer, §2.1 (event logs, activities).

    Examples
    --------
    >>> s = pd.DataFrame({"task_index": [0, 0, 0, 0], "step_id": [1, 2, 3, 4],
    ...                   "stage": ["PLAN", "PLAN", "EXECUTE", "PLAN"],
    ...                   "duration_seconds": [1.0, 2.0, 3.0, 4.0]})
    >>> blocks(s)[["value", "label", "n_steps", "seconds"]].values.tolist()
    [['PLAN', 'PLAN', 2, 3.0], ['EXECUTE', 'EXECUTE', 1, 3.0], ['PLAN', 'REPLAN', 1, 4.0]]
    """
    require_columns(steps, ["task_index", "step_id", by], "steps")
    keep = steps[by].notna().to_numpy()
    t = steps["task_index"].to_numpy()[keep]
    codes, cats = pd.factorize(steps[by].to_numpy(dtype=object)[keep])
    new = np.ones(len(t), dtype=bool)
    if collapse_repeats:
        new[1:] = (t[1:] != t[:-1]) | (codes[1:] != codes[:-1])
    starts = np.flatnonzero(new)
    n_steps = np.diff(np.append(starts, len(t)))
    if "duration_seconds" in steps:
        dur = steps["duration_seconds"].to_numpy(dtype="float64", na_value=np.nan)[keep]
    else:
        dur = np.full(len(t), np.nan)
    seconds = np.add.reduceat(np.nan_to_num(dur), starts) if len(starts) else np.zeros(0)
    gaps = np.add.reduceat(np.isnan(dur).astype(int), starts) if len(starts) else seconds
    bt, bc = t[starts], codes[starts]
    first = np.ones(len(bt), dtype=bool)
    first[1:] = bt[1:] != bt[:-1]
    block = np.arange(len(bt)) - np.maximum.accumulate(np.where(first, np.arange(len(bt)), 0))
    values = np.asarray(cats, dtype=object)[bc] if len(bc) else np.array([], dtype=object)
    label = values.copy()
    if (by == "stage" if label_repeats is None else label_repeats) and len(bc):
        nth = pd.DataFrame({"t": bt, "c": bc}).groupby(["t", "c"]).cumcount().to_numpy()
        for stage, name in REPEAT_LABELS.items():
            label[(values == stage) & (nth > 0)] = name
    return pd.DataFrame({
        "task_index": bt, "block": block, "value": values, "label": label,
        "first_step_id": steps["step_id"].to_numpy(dtype="int64")[keep][starts],
        "n_steps": n_steps,
        "seconds": np.where(gaps > 0, np.nan, seconds)})


def patterns(blocks: pd.DataFrame, *, n_tasks: int | None = None) -> pd.DataFrame:
    """Each task's pattern: its blocks joined by "→".

    Parameters
    ----------
    blocks : DataFrame
        From :func:`blocks`.
    n_tasks : int, optional
        The number of tasks (``len(tasks)``): tasks without a block get the pattern "" (no
        steps). Default: only the tasks that have blocks.

    Returns
    -------
    DataFrame
        One row per task, by ``task_index``: ``task_index``, ``pattern`` (the values),
        ``reading`` (the labels: REPLAN, RETRY), ``n_blocks``.

    Raises
    ------
    ValueError
        A column missing.

    Notes
    -----
    A pattern is a task's trace of blocks, joined with "→" as the guide writes its patterns
    (seed 000 §Trajectory Metrics); equal traces are one variant.

    References
    ----------
    van der Aalst, W. M. P. (2016). Process Mining: Data Science in Action, 2nd ed.
    Springer, §2.1 (traces and variants).

    Examples
    --------
    >>> b = pd.DataFrame({"task_index": [0, 0, 1], "value": ["PLAN", "EXECUTE", "PLAN"],
    ...                   "label": ["PLAN", "EXECUTE", "PLAN"]})
    >>> patterns(b, n_tasks=3)["pattern"].tolist()
    ['PLAN→EXECUTE', 'PLAN', '']
    """
    require_columns(blocks, ["task_index", "value", "label"], "blocks")
    grouped = blocks.groupby("task_index", sort=True)
    out = pd.DataFrame({"pattern": grouped["value"].agg(ARROW.join),
                        "reading": grouped["label"].agg(ARROW.join),
                        "n_blocks": grouped.size()})
    if n_tasks is not None:
        out = out.reindex(pd.RangeIndex(n_tasks)).fillna({"pattern": "", "reading": "",
                                                           "n_blocks": 0})
    out = out.astype({"n_blocks": "int64"})
    return out.rename_axis("task_index").reset_index()


def conformance(blocks: pd.DataFrame, *, canonical: Sequence[str] = CANONICAL,
                n_tasks: int | None = None) -> pd.DataFrame:
    """Conformance of each task's stage blocks to the canonical pattern, and its deviations.

    Parameters
    ----------
    blocks : DataFrame
        From :func:`blocks` with ``by="stage"`` and ``collapse_repeats=True``.
    canonical : sequence of str
        The canonical order of stages (default the guide's UNDERSTAND → PLAN → EXECUTE →
        VERIFY → SUMMARIZE, :data:`CANONICAL`).
    n_tasks : int, optional
        As :func:`patterns` (a task without blocks skips every stage).

    Returns
    -------
    DataFrame
        One row per task: ``task_index``, ``conforms`` (its blocks are exactly the canonical
        pattern), ``skipped`` (canonical stages without a block, "; "-joined), ``repeated``
        (stages with more than one block, as "PLAN ×2 (replan)"), ``out_of_order`` (the first
        blocks of the canonical stages are not in canonical order, or a stage outside it
        occurs), ``deviation`` (the three, as text; "" when it conforms).

    Notes
    -----
    A task can deviate in several ways at once (a retry repeats EXECUTE and VERIFY). The guide
    names REPLAN and RETRY as patterns of their own; here they are repeated PLAN and EXECUTE
    blocks, labelled so.

    Raises
    ------
    ValueError
        A column missing.

    References
    ----------
    van der Aalst, W. M. P. (2016). Process Mining: Data Science in Action, 2nd ed.
    Springer, §8 (conformance checking).

    Examples
    --------
    >>> st = ["UNDERSTAND", "PLAN", "EXECUTE", "VERIFY", "EXECUTE", "VERIFY", "SUMMARIZE"]
    >>> b = pd.DataFrame({"task_index": [0] * 7, "value": st})
    >>> r = conformance(b).iloc[0]
    >>> bool(r.conforms), r.deviation
    (False, 'repeated EXECUTE ×2 (retry), VERIFY ×2')
    """
    require_columns(blocks, ["task_index", "value"], "blocks")
    canonical = list(canonical)
    t = blocks["task_index"].to_numpy()
    n = int(n_tasks if n_tasks is not None else (t.max() + 1 if len(t) else 0))
    pos = np.zeros(len(t), dtype=np.int64)
    if len(t):
        pos = blocks.groupby("task_index").cumcount().to_numpy()
    rank = blocks["value"].map({s: i for i, s in enumerate(canonical)}).to_numpy(
        dtype="float64", na_value=np.nan)
    counts = np.zeros((n, len(canonical)), dtype=np.int64)
    firsts = np.full((n, len(canonical)), np.iinfo(np.int64).max)
    known = ~np.isnan(rank)
    r = rank[known].astype(int)
    np.add.at(counts, (t[known], r), 1)
    np.minimum.at(firsts, (t[known], r), pos[known])
    extra = np.bincount(t[~known], minlength=n) > 0
    seen = counts > 0
    latest = np.full(n, -1)
    disorder = np.zeros(n, dtype=bool)
    for j in range(len(canonical)):
        disorder |= seen[:, j] & (firsts[:, j] < latest)
        latest = np.where(seen[:, j], np.maximum(latest, firsts[:, j]), latest)
    n_blocks = np.bincount(t, minlength=n)
    conforms = (counts == 1).all(axis=1) & ~extra & ~disorder & (n_blocks == len(canonical))
    rows = []
    for i in range(n):
        skipped = "; ".join(s for s, c in zip(canonical, counts[i], strict=True) if c == 0)
        repeated = ", ".join(f"{s} ×{c}" + (f" ({REPEAT_LABELS[s].lower()})"
                                             if s in REPEAT_LABELS else "")
                             for s, c in zip(canonical, counts[i], strict=True) if c > 1)
        out_of_order = bool(disorder[i] or extra[i])
        parts = ([f"skipped {skipped}"] if skipped else []) + (
            [f"repeated {repeated}"] if repeated else []) + (["out of order"] if out_of_order
                                                             else [])
        rows.append((i, bool(conforms[i]), skipped, repeated, out_of_order, "; ".join(parts)))
    return pd.DataFrame(rows, columns=["task_index", "conforms", "skipped", "repeated",
                                       "out_of_order", "deviation"])


def directly_follows(blocks: pd.DataFrame) -> pd.DataFrame:
    """The directly-follows relation of process mining: one row per pair of consecutive
    blocks of a task, with a start and an end node.

    Parameters
    ----------
    blocks : DataFrame
        From :func:`blocks` (between steps: ``collapse_repeats=False``, where a repeated
        value is a self-transition).

    Returns
    -------
    DataFrame
        One row per transition occurrence: ``task_index``, ``source``, ``target`` (values;
        :data:`START` before a task's first block, :data:`END` after its last),
        ``source_seconds`` (the time spent in the source block, NaN for the start).

    Raises
    ------
    ValueError
        A column missing.

    Notes
    -----
    Between blocks a stage is never followed by itself (a repeat is one block); between steps
    (``collapse_repeats=False``) a repeated value is a self-transition.

    References
    ----------
    van der Aalst, W. M. P. (2016). Process Mining: Data Science in Action, 2nd ed.
    Springer, §6.2 (the directly-follows relation).

    Examples
    --------
    >>> b = pd.DataFrame({"task_index": [0, 0], "value": ["PLAN", "EXECUTE"],
    ...                   "seconds": [1.0, 2.0]})
    >>> directly_follows(b)[["source", "target", "source_seconds"]].values.tolist()
    [['start', 'PLAN', nan], ['PLAN', 'EXECUTE', 1.0], ['EXECUTE', 'end', 2.0]]
    """
    require_columns(blocks, ["task_index", "value", "seconds"], "blocks")
    t = blocks["task_index"].to_numpy()
    v = blocks["value"].to_numpy(dtype=object)
    sec = blocks["seconds"].to_numpy(dtype="float64")
    first = np.ones(len(t), dtype=bool)
    first[1:] = t[1:] != t[:-1]
    last = np.append(first[1:], True) if len(t) else first
    inner = np.flatnonzero(~last)
    parts = [
        pd.DataFrame({"task_index": t[first], "source": START, "target": v[first],
                      "source_seconds": np.nan, "_o": np.flatnonzero(first) * 2.0}),
        pd.DataFrame({"task_index": t[inner], "source": v[inner], "target": v[inner + 1],
                      "source_seconds": sec[inner], "_o": inner * 2.0 + 1}),
        pd.DataFrame({"task_index": t[last], "source": v[last], "target": END,
                      "source_seconds": sec[last], "_o": np.flatnonzero(last) * 2.0 + 1.5})]
    out = pd.concat(parts, ignore_index=True).sort_values("_o", kind="stable")
    return out.drop(columns="_o").reset_index(drop=True)
