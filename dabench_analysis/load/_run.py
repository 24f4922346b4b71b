# Over 400 lines (<= 500): the Run class (frames, files, replays, columns) and the loading of
# its side files that Runs shares are one unit; most of the length is docstrings.
"""One loaded run: :class:`Run` (typed frames plus where they came from) and the loading of its
side files, which :class:`~dabench_analysis.load.Runs` shares (:func:`load_sides`).

Files -> frames: no statistics, nothing written into a run directory. Columns get the
catalogue's dtypes (:mod:`dabench_analysis.schema`): flags ``boolean``, counts ``Int64``,
``difficulty`` ordered Easy < Medium < Hard < Extreme, the seed's enums categorical.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd

from dabench_analysis import schema
from dabench_analysis._caller import outside_level
from dabench_analysis.load import _pipeline as pipeline
from dabench_analysis.load._findings import Finding, RunLoadError
from dabench_analysis.load._header import read_header
from dabench_analysis.load._replay import Replay, RunReplays
from dabench_analysis.load._threshold import declared_threshold
from dabench_analysis.schema._files import (
    LEGACY_TASK_FILE,
    OPTIONAL_FILES,
    REPLAY_FILE,
    REPLAY_FILES,
    SIDE_FILES,
    TASK_FILE,
    TOOL_CALLS_FILE,
    TRAJECTORY_FILE,
)
from dabench_analysis.schema.numbers import format_estimate


class _Frame:
    """Dataclass field descriptor: a frame given as a zero-argument callable is built on first
    access (:func:`~dabench_analysis.load.load_runs` hands each run a slice of the stacked
    sweep this way)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self._slot = f"_{name}_value"

    def __get__(self, obj, objtype=None):
        if obj is None:
            raise AttributeError("no default")  # dataclasses: the field stays required
        value = obj.__dict__[self._slot]
        if callable(value):
            value = obj.__dict__[self._slot] = value()
        return value

    def __set__(self, obj, value) -> None:
        obj.__dict__[self._slot] = value


@dataclass
class Run:
    """One evaluated run: typed frames plus where they came from.

    Attributes
    ----------
    run_id : str
        From the ``run_id`` column of task_metrics.csv (its one value), else the folder name.
    path : Path
        The run directory (read only).
    tasks : DataFrame
        One row per task: eval-v2 columns (catalogue dtypes) plus ``replay_path``
        (``<run>/<task_id>/task_replay.json`` when the run directory lists an entry named
        after the task, else <NA>; whether the file exists and stays inside the run is
        checked when it is read: :attr:`replays` holds only files that exist).
    findings : list of Finding
        What the loader rejected, coerced or noticed (no errors or warnings for a clean run;
        info findings such as missing flag values may remain).
    include_text : bool
        Whether :attr:`trajectory` keeps the free-text columns (thought, observation, ...).
    source_rows : list of int
        For each row of :attr:`tasks`, its 1-based data row in the task file.
    task_file : str
        ``task_metrics.csv``, or ``comprehensive_evaluation.csv`` for a legacy run.
    cache : bool
        Whether :attr:`trajectory` and :attr:`tool_calls` go through the parse cache
        (:mod:`dabench_analysis.load.cache`).
    inputs : dict
        File name -> stamp of the bytes each frame was parsed from (``path``, ``size``,
        ``mtime_ns``, ``digest``): the manifest checks that the file it hashes is that file.
    format : str
        ``"eval-v2"`` (a run folder), or the other harness's format the run was read from
        (``"inspect"``, ``"tau-bench"``, ``"table"``: :mod:`dabench_analysis.load._formats`);
        then ``path`` is that file and ``tasks`` may hold several trials per task
        (``trial``).
    meta : dict
        Run-level facts another harness records (model, task, ...); empty for eval-v2.
    recorded : set of str
        For another harness's run, which of ``trajectory`` and ``tool_calls`` it records.
    """

    run_id: str
    path: Path
    tasks: pd.DataFrame = _Frame()
    findings: list[Finding] = field(default_factory=list)
    include_text: bool = False
    source_rows: list[int] = field(default_factory=list)
    task_file: str = TASK_FILE
    cache: bool = True
    inputs: dict = field(default_factory=dict, repr=False, compare=False)
    format: str = "eval-v2"
    meta: dict = field(default_factory=dict, repr=False, compare=False)
    recorded: set = field(default_factory=set, repr=False, compare=False)

    @cached_property
    def trajectory(self) -> pd.DataFrame:
        """One row per trajectory step (``trajectory.csv``), keyed by run_id, task_id, step_id;
        indexed by the 0-based data row in the file.

        Raises :class:`RunLoadError` if the file exists but cannot be parsed as a whole.
        """
        return load_sides([self], "trajectory")

    @cached_property
    def tool_calls(self) -> pd.DataFrame:
        """One row per tool call (``tool_calls.csv``), keyed by run_id, task_id, call_id;
        indexed by the 0-based data row in the file.

        Raises :class:`RunLoadError` if the file exists but cannot be parsed as a whole.
        """
        return load_sides([self], "tool_calls")

    @cached_property
    def replays(self) -> Mapping[str, Replay]:
        """task_id -> parsed ``task_replay.json``, each file read on first access."""
        paths = self.tasks.set_index("task_id")["replay_path"].dropna() \
            if "replay_path" in self.tasks else pd.Series([], dtype=object)
        return RunReplays(self.path, paths.items(),
                          lambda key, stamp: record_input(self, key, stamp))

    def replay(self, task_id: str) -> Replay:
        """The parsed ``task_<id>/task_replay.json`` of one task (JSON only, never executed).

        Raises
        ------
        KeyError
            If the task has no replay file.
        RunLoadError
            If the file is empty or not valid JSON (names the file and line).
        """
        return self.replays[task_id]

    def select(self, name: str, columns: Sequence[str]) -> pd.DataFrame:
        """One of the run's frames with only ``columns`` (and its key columns), read from the
        file if the loaded frame lacks some of them (e.g. ``action_input``, a free-text
        trajectory column left out by default).

        Parameters
        ----------
        name : {"tasks", "trajectory", "tool_calls"}
        columns : sequence of str
            Catalogue names. Columns the file does not have are absent from the result (the
            caller checks with :func:`dabench_analysis.schema.require_columns`).

        Returns
        -------
        DataFrame
            The key columns (``run_id, task_id`` and ``step_id`` / ``call_id``) first, then
            ``columns`` in the given order; one row per row of the loaded frame.

        Raises
        ------
        ValueError
            An unknown ``name``.

        Examples
        --------
        >>> from dabench_analysis import load_run
        >>> run = load_run("data/sample_runs/baseline_react")
        >>> run.select("trajectory", ["tool", "action_input"]).columns.tolist()
        ['run_id', 'task_id', 'step_id', 'tool', 'action_input']
        """
        keys = {"tasks": ["run_id", "task_id"], "trajectory": ["run_id", "task_id", "step_id"],
                "tool_calls": ["run_id", "task_id", "call_id"]}
        if name not in keys:
            raise ValueError(f"name must be one of {', '.join(keys)}; got {name!r}")
        frame = getattr(self, name)
        want = list(dict.fromkeys([*keys[name], *columns]))
        if self.format != "eval-v2":  # another harness's frames are in memory, text and all
            frame = self.__dict__.get(f"_{name}_full", frame)
        elif name != "tasks" and any(c not in frame for c in want):
            kind, known = SIDE_FILES[name], len(self.findings)
            frame = _side_frames([self], kind, [c for c in want if c in kind.catalogue])[0][0]
            del self.findings[known:]  # the file's findings, recorded when it was loaded
        return frame[[c for c in want if c in frame]]

    def columns_of(self, name: str) -> set[str]:
        """The columns of ``"trajectory"`` or ``"tool_calls"`` with the free-text ones left out
        of the loaded frame (the file's header or the harness's records; empty without them).

        Examples
        --------
        >>> from dabench_analysis import load_run
        >>> "action_input" in load_run("data/sample_runs/baseline_react").columns_of("trajectory")
        True
        """
        kind = SIDE_FILES[name]
        if not self.has_file(kind.file):  # not the replays: their index lists every task
            return set()
        have = set(map(str, getattr(self, name).columns))
        text = [c for c in schema.columns.TEXT_TRAJECTORY_COLUMNS if c in kind.catalogue]
        if self.format != "eval-v2":
            return have | set(self.select(name, text).columns)
        try:
            header = {h.strip() for h in read_header(self.path / kind.file)}
        except RunLoadError:
            return have
        return have | (header & set(text))

    @property
    def side_files(self) -> set[str]:
        """The optional inputs the run has (entries of
        :data:`dabench_analysis.schema._files.OPTIONAL_FILES`): files of the run folder, or for
        another harness's run the steps and tool calls it records (:meth:`has_file` of each)."""
        return {f for f in OPTIONAL_FILES if self.has_file(f)}

    def has_file(self, file: str) -> bool:
        """Whether the run has the optional input ``file`` (an entry of
        :data:`dabench_analysis.schema._files.OPTIONAL_FILES`).

        Parameters
        ----------
        file : str
            ``trajectory.csv``, ``tool_calls.csv`` or the replays (``task_*/task_replay.json``).

        Returns
        -------
        bool
            A file of the run folder (for another harness's run: the steps or tool calls it
            records). Only the replays build the run's replay index (:attr:`replays`, one
            path per task, kept); asking about the CSV files reads no replay path.

        Raises
        ------
        ValueError
            ``file`` is not one of the optional inputs.

        Examples
        --------
        >>> from dabench_analysis import load_run
        >>> load_run("data/sample_runs/baseline_react").has_file("trajectory.csv")
        True
        """
        if file not in OPTIONAL_FILES:
            raise ValueError(f"file must be one of {', '.join(OPTIONAL_FILES)}; got {file!r}")
        if self.format != "eval-v2":
            return any(k.file == file and a in self.recorded for a, k in SIDE_FILES.items())
        if file == REPLAY_FILES:
            return len(self.replays) > 0
        return (self.path / file).is_file()

    @property
    def trials(self) -> int:
        """The most trials any task has (rows per ``task_id``; 1 for an eval-v2 run).

        Examples
        --------
        >>> from dabench_analysis import load_run
        >>> load_run("data/sample_runs/baseline_react").trials
        1
        """
        return rows_per_task(self.tasks)

    @property
    def size(self) -> str:
        """The run's size in words, as every report and ``validate`` state it: ``"80 tasks"``
        (``"1 task"``);
        for repeated trials the tasks and trials (``"50 tasks, up to 4 trials each"``), not the
        rows.

        Examples
        --------
        >>> from dabench_analysis import load_run
        >>> load_run("data/sample_runs/baseline_react").size
        '80 tasks'
        """
        trials = self.trials
        n = len(self.tasks) if trials < 2 else self.tasks["task_id"].nunique()
        size = f"{n} task{'' if n == 1 else 's'}"
        return size if trials < 2 else f"{size}, up to {trials} trials each"

    @property
    def files_present(self) -> list[str]:
        """The eval-v2 files the run holds (another harness's run: its file, its records)."""
        if self.format != "eval-v2":
            return [f"{self.path.name} ({self.format})", *sorted(self.recorded)]
        names = (TASK_FILE, LEGACY_TASK_FILE, TRAJECTORY_FILE, TOOL_CALLS_FILE)
        found = [n for n in names if (self.path / n).is_file()]
        n_replays = len(self.replays)
        return found + ([f"{n_replays} {REPLAY_FILE}"] if n_replays else [])

    @property
    def declared_threshold(self) -> float | None:
        """``run_config.json``'s success threshold (None: none); noted, never applied."""
        return declared_threshold(self.path) if self.format == "eval-v2" else None

    @property
    def files_absent(self) -> list[str]:
        """The eval-v2 files the run directory lacks: side files, tasks without a replay (the
        legacy file is never missed); another harness's run: the records its file lacks."""
        if self.format != "eval-v2":
            return [n for n in ("trajectory", "tool_calls") if n not in self.recorded]
        names = (TRAJECTORY_FILE, TOOL_CALLS_FILE)
        missing = [n for n in names if not (self.path / n).is_file()]
        if not any((self.path / n).is_file() for n in (TASK_FILE, LEGACY_TASK_FILE)):
            missing.insert(0, TASK_FILE)
        lacking = len(self.tasks) - len(self.replays)
        return missing + ([f"{REPLAY_FILE} for {lacking} of {len(self.tasks)} tasks"]
                          if lacking > 0 else [])

    def __repr__(self) -> str:
        t, n = self.tasks, len(self.tasks)
        per = schema.task_success(t["final_score"], t.get("task_id"), schema.SUCCESS_THRESHOLD) \
            if "final_score" in t else pd.Series([], dtype="float64")  # over tasks, as pages
        scored = int(t["final_score"].notna().sum()) if "final_score" in t else 0
        acc = (format_estimate(per.mean()) if len(per) else "n/a") + \
            (f" of {scored} scored" if scored < n else "")
        errs = sum(f.severity == "error" for f in self.findings)
        k = len(self.findings)
        found = f"{k} finding{'' if k == 1 else 's'}" + \
            (f" ({errs} error{'' if errs == 1 else 's'})" if errs else "")
        trials = self.trials
        if trials > 1:
            n = f"{self.tasks['task_id'].nunique()} tasks x up to {trials} trials ({n} rows),"
        else:
            n = f"{n} tasks,"
        return (f"<Run {self.run_id!r}: {n} answer accuracy {acc} "
                f"(final_score >= {schema.SUCCESS_THRESHOLD:g}), files: "
                f"{', '.join(self.files_present)}; {found}>")


def rows_per_task(tasks: pd.DataFrame, keys: Sequence[str] = ("task_id",)) -> int:
    """The most rows any task has in a task frame: its trials (:attr:`Run.trials`).

    Parameters
    ----------
    tasks : DataFrame
        One row per task and trial, with the ``keys`` columns.
    keys : sequence of str
        The columns naming a task: ``task_id``, or ``run_id, task_id`` for several runs'
        stacked tasks (the most rows of one task within one run).

    Returns
    -------
    int
        The largest count of rows sharing the keys (rows with a missing key left out); 0 for
        no rows or a frame without a key column.

    Examples
    --------
    >>> rows_per_task(pd.DataFrame({"task_id": ["a", "a", "b"]}))
    2
    """
    if not len(tasks) or any(k not in tasks for k in keys):
        return 0
    return int(tasks.groupby(list(keys), observed=True).size().max())


def _columns(kind, include_text: bool) -> list[str]:
    drop = () if include_text or kind is not SIDE_FILES["trajectory"] else \
        schema.columns.TEXT_TRAJECTORY_COLUMNS
    return [c for c in kind.catalogue if c not in drop]


def load_sides(runs: Sequence[Run], name: str, *, mapper: Callable = map) -> pd.DataFrame:
    """``trajectory`` or ``tool_calls`` of every run, stacked; each run's attribute is set to
    its slice (its findings added), as if its own attribute had been read.

    Parameters
    ----------
    runs : sequence of Run
    name : {"trajectory", "tool_calls"}
    mapper : callable
        ``map``-like, for reading the files (threads, progress).

    Returns
    -------
    DataFrame
        Every run's rows in order, a fresh RangeIndex (one run: its own frame, indexed by the
        0-based data row).

    Raises
    ------
    RunLoadError
        A file that exists but cannot be read as a whole (the message names its run folder).
    """
    kind = SIDE_FILES[name]
    todo = [r for r in runs if name not in r.__dict__]
    whole = None
    for group in _groups(todo):
        frames, whole = _side_frames(group, kind, _columns(kind, group[0].include_text),
                                     mapper=mapper)
        for run, frame in zip(group, frames, strict=True):
            run.__dict__[name] = frame
    if len(runs) == 1:
        return runs[0].__dict__[name]
    if whole is not None and len(todo) == len(runs) and len(_groups(todo)) == 1:
        return whole  # every run read now, in order: the stacked frame itself
    return pipeline.concat_frames([r.__dict__[name] for r in runs])


def record_input(run: Run, key: str, stamp: dict | None) -> None:
    """Note in ``run.inputs`` the bytes a file of the run was parsed from; a second read of the
    file that found other bytes (rewritten since) is an error: one run's frames never mix two
    versions of a file, and the report's manifest can name the bytes its numbers came from.

    Raises
    ------
    RunLoadError
        ``key`` was read before and held other bytes then.
    """
    was = run.inputs.get(key)
    if was is not None and stamp is not None and was.get("digest") != stamp.get("digest"):
        raise RunLoadError(f"{run.path}: {key} changed after it was first read ({was['size']:,} "
                           f"bytes then, {stamp['size']:,} now); load the run again",
                           [Finding("error", key, None, None, "input_changed",
                                    "the file changed while the run was in use")])
    if stamp is not None:
        run.inputs.setdefault(key, stamp)


def _groups(runs: Sequence[Run]) -> list[list[Run]]:
    """Runs that read their side files with the same columns and cache setting."""
    out: dict[tuple, list[Run]] = {}
    for r in runs:
        out.setdefault((r.include_text, r.cache), []).append(r)
    return list(out.values())


def _side_frames(runs: Sequence[Run], kind, columns: list[str], *,
                 mapper: Callable = map) -> tuple[list[pd.DataFrame], pd.DataFrame | None]:
    """Each run's ``kind`` file as a frame of ``columns`` (the pipeline; one ``to_pandas``),
    and the stacked frame when every run has the file (None otherwise)."""
    kinds = [kind if (r.path / kind.file).is_file() else None for r in runs]
    results = pipeline.read_files([r.path / kind.file for r in runs], kinds, columns,
                                  cache=runs[0].cache if runs else True, mapper=mapper)
    tables, own = [], []
    for run, res in zip(runs, results, strict=True):
        if res is None:
            warnings.warn(f"{run.run_id}: {kind.file} not found in {run.path}; using an empty "
                          "frame", stacklevel=outside_level())
            continue
        if res.error is not None:
            raise RunLoadError(f"{run.path}: {res.error.message}", res.error.findings)
        run.findings.extend(res.findings)
        record_input(run, kind.file, res.stamp)
        errors = sum(f.severity == "error" for f in res.findings)
        if errors:
            warnings.warn(f"{run.run_id}: {errors} problem(s) in {kind.file}; rejected values "
                          "set to missing (see run.findings)", stacklevel=outside_level())
        table, res.table = pipeline.fill_run_id(res.table, run.run_id), None
        tables.append(table)
        own.append((table.column_names, res.rows))
    n_tables, stacked, table = len(tables), pipeline.stacked(tables), None
    del tables  # the stacked table is the only reference: freed as it is converted
    frame = pipeline.to_frame(stacked, kind, destroy=True)
    out, start, it = [], 0, iter(own)
    for res in results:
        if res is None:
            out.append(pd.DataFrame({c: pd.Series(dtype=kind.catalogue[c].dtype)
                                     for c in dict.fromkeys(["run_id", *columns])}))
            continue
        names, rows = next(it)
        part = frame.iloc[start:start + len(rows)]
        start += len(rows)
        part = part[names] if list(frame.columns) != names else part
        out.append(part.set_axis(pd.Index(np.asarray(rows, dtype=np.int64) - 1), axis=0))
    return out, (frame if n_tables == len(runs) else None)
