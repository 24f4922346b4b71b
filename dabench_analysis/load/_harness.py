"""Runs from other harnesses' output: what a reader of an Inspect log, a tau-bench results file or
a per-task table gives the loader (:class:`Record`), and how it becomes the same
:class:`~dabench_analysis.load.Run` an eval-v2 folder gives (:func:`build_run`).

A reader turns its file into rows (dicts) named by the catalogue where a meaning matches and by
the harness's own field names otherwise; :func:`arrow_table` makes them an Arrow table shaped as
the CSV reader shapes a file (numbers ``float64`` in number columns, every other cell as text),
and :func:`build_run` runs the catalogue's value rules on it (:func:`dabench_analysis.load._rules.
convert`: the one typing step of every file), trajectories and tool calls too. A row key is
``task_id`` (``task_id, trial`` when the harness repeats tasks); a row without a value in a key
column is an error finding and is left out (:mod:`dabench_analysis.load._keys`, as for an eval-v2
task file). The row of a finding is the task's 1-based position in what the reader gives, which
each reader keeps in its file's order (the position of the result, simulation or sample).
A reader that knows how many task rows its file declares (:class:`Declared`) gets a
``declared_count`` finding when fewer or more were read.
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from types import MappingProxyType

import numpy as np
import pandas as pd
import pyarrow as pa

from dabench_analysis import schema
from dabench_analysis._caller import outside_level
from dabench_analysis.load import _pipeline as pipeline
from dabench_analysis.load._findings import Finding, RunLoadError, dropped_rows
from dabench_analysis.load._header import TEXT
from dabench_analysis.load._rules import convert
from dabench_analysis.load._run import Run
from dabench_analysis.load._stack import Stack
from dabench_analysis.schema import (
    TASK_COLUMNS,
    TOOL_CALL_COLUMNS,
    TRAJECTORY_COLUMNS,
    Column,
)
from dabench_analysis.schema._files import FileKind
from dabench_analysis.schema.rules import MAX_COUNT, NUMBER_KINDS

#: The repeated-trial column (Inspect epochs, tau-bench trials), also in steps and tool calls.
TRIAL = TASK_COLUMNS["trial"]
#: Fields of other harnesses kept under their own names but typed (not in the eval-v2
#: catalogue, so not read by any report section).
EXTRA_COLUMNS: dict[str, Column] = {c.name: c for c in (
    Column("input_tokens", "tokens", "Execution", "tokens", False, "Input tokens (Inspect)"),
    Column("output_tokens", "tokens", "Execution", "tokens", False, "Output tokens (Inspect)"),
    Column("working_time", "seconds", "Execution", "s", False,
           "Time working, without waits (Inspect)"),
    Column("user_cost", "cost", "Execution", "USD", False,
           "Cost of tau-bench's simulated user (not the agent's)"))}


def step_gaps(timestamps: Sequence, start: str | None = None) -> list[float | None]:
    """Each step's latency in seconds: the gap from the previous step's timestamp (the first
    step: from ``start``, the trace's start time where the harness writes one) to its own, the
    time it took to produce the step, as every reader with per-step timestamps derives
    ``duration_seconds``. The first step without ``start``, a step without a readable ISO 8601
    timestamp (or after one) and a negative gap (steps out of time order) get None, never a
    guess.

    Examples
    --------
    >>> step_gaps(["2025-10-11T10:30:00Z", "2025-10-11T10:30:02.5Z", None, "bad"])
    [None, 2.5, None, None]
    >>> step_gaps(["2025-10-11T10:30:01"], start="2025-10-11T10:30:00")
    [1.0]
    """
    from datetime import datetime

    out, prev = [], None
    for ts in [start, *timestamps]:
        try:
            t = datetime.fromisoformat(ts) if isinstance(ts, str) else None
        except ValueError:
            t = None
        gap = (t - prev).total_seconds() if t is not None and prev is not None \
            and (t.tzinfo is None) == (prev.tzinfo is None) else None
        out.append(gap if gap is not None and gap >= 0 else None)
        prev = t
    return out[1:]


@dataclass(frozen=True)
class Declared:
    """How many task rows a file says it holds, and where it says so.

    Attributes
    ----------
    n : int
        Task rows (tasks x trials, samples x epochs) the file declares.
    where : str
        The fields that declare it, e.g. ``results.total_samples (10)``.
    severity : {"warning", "info"}
        ``info`` when the harness itself marks the run as partial (written as it goes, or
        stopped); ``warning`` when the file claims to be complete.
    """

    n: int
    where: str
    severity: str = "warning"


@dataclass
class Record:
    """One run as a reader of another harness read it.

    Attributes
    ----------
    name : str
        The run's name (its ``run_id``): the harness's own run name where it has one that
        tells runs apart, else the file's name without its suffix.
    tasks : list of dict
        One per task (and trial): catalogue names where a meaning matches, the harness's own
        fields under their names.
    steps, calls : list of dict or None
        Trajectory steps and tool calls (catalogue names of ``trajectory.csv`` and
        ``tool_calls.csv``), None when the harness records none.
    findings : list of Finding
        What the reader noticed (e.g. a score it could not map).
    meta : dict
        Run-level facts of the harness (model, task, ...), kept on :attr:`Run.meta`.
    not_evaluated : str
        Why the run cannot be analysed yet (a log written before scoring), else empty.
    table, kind : pyarrow.Table and FileKind, optional
        Tasks already typed by the rules (a per-task table read by the CSV reader), instead
        of ``tasks``; ``findings`` then holds the rules' findings.
    declared : Declared, optional
        How many task rows the file declares, when it says.
    rows : list of int, optional
        With ``table``: the 1-based row of the file of each of its rows (default 1, 2, ...).
    """

    name: str
    tasks: list[dict]
    steps: list[dict] | None = None
    calls: list[dict] | None = None
    findings: list[Finding] = field(default_factory=list)
    meta: dict = field(default_factory=dict)
    not_evaluated: str = ""
    table: pa.Table | None = None
    kind: FileKind | None = None
    declared: Declared | None = None
    rows: list[int] | None = None


def _kind(name: str, attribute: str, catalogue: Mapping, keys: tuple[str, ...],
          severity: str, trials: bool) -> FileKind:
    cat = {**catalogue, "trial": TRIAL} if trials else dict(catalogue)
    keys = (keys[0], "trial", *keys[1:]) if trials else keys
    return FileKind(name, attribute, MappingProxyType(cat), keys, severity)


#: One encoder for every cell (``json.dumps`` with ``default=`` builds a new one per call).
_ENCODE = json.JSONEncoder(ensure_ascii=False, default=str).encode


def _cell(value, number: bool):
    """One value as the CSV reader would give it: a float in a number column, else text."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if number and isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list, tuple)):
        return _ENCODE(value)
    return str(value)


def arrow_table(rows: Sequence[Mapping], catalogue: Mapping) -> pa.Table:
    """Rows -> an Arrow table as the CSV reader shapes a file.

    Parameters
    ----------
    rows : sequence of mapping
        Column -> value (missing keys and None are missing values).
    catalogue : mapping of str to Column
        Columns of a number kind become ``float64`` when every value is a number (else text,
        which the rules parse and report, as when a whole number is 2**53 or more: float64
        would round it); all others text (``large_string``): booleans as
        ``true``/``false``, lists and dicts as JSON, numbers as Python writes them.

    Returns
    -------
    pyarrow.Table
        Columns in order of first appearance.

    Examples
    --------
    >>> t = arrow_table([{"task_id": 3, "final_score": 1}, {"task_id": "b", "x": True}],
    ...                 TASK_COLUMNS)
    >>> t.column_names, t.column("task_id").to_pylist(), t.column("final_score").type
    (['task_id', 'final_score', 'x'], ['3', 'b'], DataType(double))
    >>> t.column("x").to_pylist()
    [None, 'true']
    """
    names = list(dict.fromkeys(chain.from_iterable(rows)))
    arrays = []
    for name in names:
        spec = catalogue.get(name)
        values = [r.get(name) for r in rows]
        number = spec is not None and spec.kind in NUMBER_KINDS and all(
            v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)
                          and not (isinstance(v, int) and abs(v) >= MAX_COUNT))
            for v in values)  # a whole number float64 would round: as text, as written
        if number:  # ints and floats as float64, NaN as missing (as _cell), no per-cell call
            arrays.append(pa.array(values, pa.float64(), from_pandas=True))
            continue
        cells = values if all(v is None or type(v) is str for v in values) else [
            v if v is None or type(v) is str else _ENCODE(v) if type(v) is dict
            else _cell(v, number) for v in values]  # text and dicts: no per-cell call
        arrays.append(pa.array(cells, TEXT))
    return pa.Table.from_arrays(arrays, names=names) if names else pa.table({})


def typed(table: pa.Table, kind: FileKind, name: str, *, rows: bool = False) -> tuple:
    """A table of one file through the catalogue's rules (:func:`dabench_analysis.load._rules.
    convert`): typed, checked, rows a task file cannot keep dropped; and its findings (and,
    with ``rows``, the 1-based row of ``table`` of each row kept)."""
    out, found, kept = typed_rows(table, kind, name)
    return (out, found, np.asarray(kept, dtype=np.int64)) if rows else (out, found)


def typed_rows(table: pa.Table, kind: FileKind, name: str
               ) -> tuple[pa.Table, list[Finding], list[int]]:
    """:func:`typed`, and the 1-based row (in ``table``) of each row kept.

    Parameters
    ----------
    table : pyarrow.Table
        One file's rows, shaped by :func:`arrow_table`.
    kind : FileKind
        Its catalogue and keys.
    name : str
        The file's name in the findings.

    Returns
    -------
    tuple
        ``(typed table, findings, kept rows)``: a row without a value in a key column of a
        task file (``missing_key``) or repeating a key is not kept.

    Examples
    --------
    >>> kind = _kind("r.json", "tasks", TASK_COLUMNS, ("task_id",), "error", True)
    >>> rows = [{"task_id": "a", "trial": 0, "final_score": 1},
    ...         {"task_id": "a", "final_score": 0}, {"task_id": "a", "trial": 1,
    ...                                              "final_score": 0}]
    >>> out, found, kept = typed_rows(arrow_table(rows, TASK_COLUMNS), kind, "r.json")
    >>> kept, [(f.check, f.column, f.rows) for f in found]
    ([1, 3], [('missing_key', 'trial', (2,))])
    """
    n = table.num_rows
    stack = Stack(table, np.array([0, n]), np.arange(1, n + 1), [name],
                  [frozenset(table.column_names)])
    out, found, drop = convert(stack, kind)
    if drop.any():
        out = out.filter(pa.array(~drop))
    return out, found[0], (np.flatnonzero(~drop) + 1).tolist()


def _side(rows: list[dict] | None, kind_args: tuple, run_id: str, name: str,
          trials: bool) -> tuple[pd.DataFrame, list[Finding]]:
    """Steps or tool calls as a typed frame (empty, with the catalogue's columns, if none);
    those of a task row without a key value (left out: ``missing_key``) are left out too."""
    attribute, catalogue, keys = kind_args
    task_keys = ("task_id", "trial") if trials else ("task_id",)
    keyless = [r for r in rows or [] if any(r.get(k) is None for k in task_keys)]
    found = [Finding("warning", name, None, None, "missing_key", f"{len(keyless)} "
                     f"{attribute} row(s) of task rows without {' or '.join(task_keys)} are "
                     "left out with them")] if keyless else []
    if keyless:
        rows = [r for r in rows if all(r.get(k) is not None for k in task_keys)]
    if not rows:
        cols = dict.fromkeys(["run_id", *catalogue])
        return pd.DataFrame({c: pd.Series(dtype=catalogue[c].dtype) for c in cols}), found
    kind = _kind(name, attribute, catalogue, keys, "warning", trials)
    table, typed_found = typed(arrow_table(rows, kind.catalogue), kind, name)
    return pipeline.to_frame(pipeline.fill_run_id(table, run_id), kind), found + typed_found


def _declared(record: Record, name: str) -> list[Finding]:
    """A ``declared_count`` finding when the file declares another number of task rows than
    its reader read (a sample member lost from a log, a partial run)."""
    declared, read = record.declared, len(record.tasks)
    if declared is None or declared.n == read:
        return []
    what = ("fewer: a partial run, or task rows lost from the file" if read < declared.n
            else "more than declared")
    return [Finding(declared.severity, name, None, None, "declared_count",
                    f"the file declares {declared.n} task rows ({declared.where}); {read} read "
                    f"({what}); statistics cover the {read} read")]


def _tasks(path: Path, record: Record) -> tuple[pa.Table, FileKind, list[Finding], list[int]]:
    """The record's tasks typed by the rules: table, kind, findings and the 1-based row of each
    task kept (its position in ``record.tasks``)."""
    name = path.name
    if record.table is not None:
        table, kind, findings = record.table, record.kind, list(record.findings)
        rows = record.rows or list(range(1, table.num_rows + 1))
    else:
        if not record.tasks:
            raise RunLoadError(f"{path}: the file holds no task rows (no result, simulation "
                               "or sample)", [*record.findings, *_declared(record, name), Finding(
                                   "error", name, None, None, "no_rows", "no task rows")])
        table = arrow_table(record.tasks, {**TASK_COLUMNS, **EXTRA_COLUMNS})
        missing = [c for c in ("task_id", "final_score") if c not in table.column_names]
        if missing:
            raise RunLoadError(f"{path}: required column(s) {missing} missing",
                               [Finding("error", name, None, c, "required_column", "missing")
                                for c in missing])
        kind = _kind(name, "tasks", {**TASK_COLUMNS, **EXTRA_COLUMNS}, ("task_id",), "error",
                     "trial" in table.column_names)
        table, found, rows = typed_rows(table, kind, name)
        findings = [*record.findings, *found, *_declared(record, name)]
    if table.num_rows == 0:
        why = ("no task row kept: every row was left out (see the findings)"
               if dropped_rows(findings) else "0 task rows (the file has no data rows)")
        raise RunLoadError(f"{path}: {why}", findings)
    return table, kind, findings, rows


_SIDES = {"trajectory": ("trajectory", TRAJECTORY_COLUMNS, ("task_id", "step_id")),
          "tool_calls": ("tool_calls", TOOL_CALL_COLUMNS, ("task_id", "call_id"))}


def build_run(path: Path, record: Record, fmt: str, *, strict: bool = True,
              include_text: bool = False) -> Run:
    """The :class:`Run` of one record: its tasks (and steps, tool calls) typed by the rules.

    Parameters
    ----------
    path : Path
        The file the record was read from (the Run's ``path``; read only).
    record : Record
    fmt : str
        The format's name (:func:`dabench_analysis.load._readers.formats`), kept on the Run.
    strict, include_text
        As :func:`dabench_analysis.load_run`.

    Returns
    -------
    Run
        ``tasks`` one row per task (and trial: ``trial``), catalogue dtypes, the harness's own
        fields as extra columns; ``trajectory`` and ``tool_calls`` as recorded (empty frames
        with the catalogue's columns when the harness records none).

    Raises
    ------
    RunLoadError
        The record is *not evaluated*; it has no task row (``no_rows``), or none with its
        keys; no ``task_id`` or ``final_score`` column; with ``strict``, any error finding
        (a row without a key value: ``missing_key``, the row left out with ``strict=False``).
    """
    name = path.name
    if record.not_evaluated:
        raise RunLoadError(f"{path}: not evaluated: {record.not_evaluated}",
                           [Finding("info", name, None, None, "missing_file",
                                    f"not evaluated: {record.not_evaluated}")])
    table, kind, findings, rows = _tasks(path, record)
    trials = "trial" in table.column_names
    errors = [f for f in findings if f.severity == "error"]
    if errors and strict:
        raise RunLoadError(f"{path}: {len(errors)} problem(s) (in Python, load_run(path, "
                           "strict=False) keeps the valid values)", errors)
    if errors:
        warnings.warn(f"{record.name}: {len(errors)} problem(s) in {name}; rejected values set "
                      f"to missing, {dropped_rows(errors)} row(s) dropped (see run.findings)",
                      stacklevel=outside_level())
    table = pipeline.fill_run_id(table.drop_columns(
        [c for c in ("run_id",) if c in table.column_names]), record.name)
    run = Run(run_id=record.name, path=path, tasks=pipeline.to_frame(table, kind),
              findings=findings, include_text=include_text,
              source_rows=rows, task_file=name, cache=False,
              format=fmt, meta=dict(record.meta))
    for attr, rows in (("trajectory", record.steps), ("tool_calls", record.calls)):
        frame, side_found = _side(rows, _SIDES[attr], record.name, name, trials)
        run.__dict__[f"_{attr}_full"] = frame  # what Run.select reads
        if attr == "trajectory" and not include_text:
            frame = frame.drop(columns=[c for c in schema.columns.TEXT_TRAJECTORY_COLUMNS if c in frame])
        run.__dict__[attr] = frame
        run.findings.extend(side_found)
        if rows:
            run.recorded.add(attr)
    return run
