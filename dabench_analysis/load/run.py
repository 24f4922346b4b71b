"""Load eval-v2 run directories into typed, tidy pandas frames.

Files → frames, nothing else: no statistics here, and nothing is ever written into a run
directory. Columns get the catalogue's dtypes (:mod:`dabench_analysis.schema`): flags as pandas
``boolean``, counts as ``Int64``, ``difficulty`` an ordered categorical Easy < Medium < Hard <
Extreme, the seed's enums categorical.

Parsing uses pyarrow's CSV reader with the catalogue's types (the fast path). When a value does
not convert, the file is re-read as text and typed column by column, so that every rejected value
is reported with its file, row and column (:class:`~dabench_analysis.load.findings.Finding`). The
catalogue's value checks (ranges, required values, unique keys) run through pandera. Rows are
numbered from 1 after the header; rows with the wrong number of fields are dropped and reported.
"""

from __future__ import annotations

import errno
import os
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import pandas as pd
import pyarrow as pa

from dabench_analysis import schema
from dabench_analysis.load import cache as parse_cache
from dabench_analysis.load.csv import PD_TYPES, read_header
from dabench_analysis.load.findings import Finding, RunLoadError
from dabench_analysis.load.replay import (
    plain_name,
    read_replay,
    replay_file,
    replay_paths,
)
from dabench_analysis.load.table import (
    _empty,
    read_table,
    requested_columns,
    warn_absent,
)

TASK_FILE = "task_metrics.csv"


LEGACY_TASK_FILE = "comprehensive_evaluation.csv"


TRAJECTORY_FILE = "trajectory.csv"


TOOL_CALLS_FILE = "tool_calls.csv"


def _check_dir(path: Path) -> Path:
    try:
        st = path.stat()
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise RunLoadError(f"run directory {path} is a symlink loop") from None
        if isinstance(exc, PermissionError):
            raise RunLoadError(f"run directory {path} is not readable: {exc.strerror}") from None
        raise RunLoadError(f"run directory {path} does not exist") from None
    if not os.path.isdir(path):
        raise RunLoadError(f"run directory {path} is a file, not a directory "
                           f"(size {st.st_size} bytes)")
    if not os.access(path, os.R_OK | os.X_OK):
        raise RunLoadError(f"run directory {path} is not readable (permission denied)")
    return path


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
        From the ``run_id`` column of task_metrics.csv, else the folder name.
    path : Path
        The run directory (read only).
    tasks : DataFrame
        One row per task: eval-v2 columns (catalogue dtypes) plus ``replay_path``
        (``<run>/<task_id>/task_replay.json`` when the run directory lists an entry named
        after the task, else <NA>; found by one directory listing, so the file itself, and
        that it stays inside the run, is checked when read: :attr:`replays` holds only files
        that exist).
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
    success_threshold : float
        The analysis' success threshold in (0, 1]: a task is correct when ``final_score >=
        success_threshold`` (:func:`dabench_analysis.schema.correct`). Every table called with
        this Run defaults to it. Default 0.8 (:data:`~dabench_analysis.schema.SUCCESS_THRESHOLD`).
    """

    run_id: str
    path: Path
    tasks: pd.DataFrame = _Frame()
    findings: list[Finding] = field(default_factory=list)
    include_text: bool = False
    source_rows: list[int] = field(default_factory=list)
    task_file: str = TASK_FILE
    cache: bool = True
    success_threshold: float = schema.SUCCESS_THRESHOLD
    #: attribute -> frame maker, set by ``load_runs`` for files it read already (batched)
    _pending: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def _side_table(self, file: str, catalogue: Mapping[str, schema.Column],
                    drop: Sequence[str] = (), name: str = "") -> pd.DataFrame:
        pending = self._pending.pop(name, None)
        if pending is not None:  # read by load_runs with the other runs' files
            return pending()
        cols = [c for c in catalogue if c not in drop]
        path = self.path / file
        if not path.exists():
            warnings.warn(f"{self.run_id}: {file} not found in {self.path}; using an empty "
                          "frame", stacklevel=3)
            return _empty(catalogue, cols)
        try:
            df, found = parse_cache.cached_read(read_table, path, catalogue, columns=cols,
                                                enabled=self.cache)
        except RunLoadError as exc:  # name the run: in a sweep, file names alone do not
            raise RunLoadError(f"{self.path}: {exc.message}", exc.findings) from exc
        self.findings.extend(found)
        errors = [f for f in found if f.severity == "error"]
        if errors:
            warnings.warn(f"{self.run_id}: {len(errors)} problem(s) in {file}; rejected values "
                          f"set to missing (see run.findings)", stacklevel=3)
        if "run_id" in df:
            df["run_id"] = df["run_id"].fillna(self.run_id)
        return df

    @cached_property
    def trajectory(self) -> pd.DataFrame:
        """One row per trajectory step (``trajectory.csv``), keyed by run_id, task_id, step_id.

        Raises :class:`RunLoadError` if the file exists but cannot be parsed as a whole.
        """
        drop = () if self.include_text else schema.TEXT_TRAJECTORY_COLUMNS
        return self._side_table(TRAJECTORY_FILE, schema.TRAJECTORY_COLUMNS, drop, "trajectory")

    @cached_property
    def tool_calls(self) -> pd.DataFrame:
        """One row per tool call (``tool_calls.csv``), keyed by run_id, task_id, call_id.

        Raises :class:`RunLoadError` if the file exists but cannot be parsed as a whole.
        """
        return self._side_table(TOOL_CALLS_FILE, schema.TOOL_CALL_COLUMNS, name="tool_calls")

    @cached_property
    def replays(self) -> Mapping[str, dict]:
        """task_id -> parsed ``task_replay.json``, each file read on first access."""
        return _Replays(self)

    def replay(self, task_id: str) -> dict:
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
        if name != "tasks" and any(c not in frame for c in want):
            file, catalogue = ((TRAJECTORY_FILE, schema.TRAJECTORY_COLUMNS) if name == "trajectory"
                               else (TOOL_CALLS_FILE, schema.TOOL_CALL_COLUMNS))
            path = self.path / file
            if path.is_file():
                frame, _ = parse_cache.cached_read(
                    read_table, path, catalogue, columns=[c for c in want if c in catalogue],
                    enabled=self.cache)
                if "run_id" in frame:
                    frame["run_id"] = frame["run_id"].fillna(self.run_id)
                else:
                    frame.insert(0, "run_id", pd.Series(self.run_id, index=frame.index,
                                                        dtype="string"))
        return frame[[c for c in want if c in frame]]

    @property
    def files_present(self) -> list[str]:
        """Which eval-v2 files the run directory holds."""
        names = (TASK_FILE, LEGACY_TASK_FILE, TRAJECTORY_FILE, TOOL_CALLS_FILE)
        found = [n for n in names if (self.path / n).is_file()]
        n_replays = len(self.replays)
        return found + ([f"{n_replays} task_replay.json"] if n_replays else [])

    def __repr__(self) -> str:
        n = len(self.tasks)
        score = (self.tasks["final_score"] if "final_score" in self.tasks
                 else pd.Series([], dtype="float64")).astype("float64").dropna()
        acc = f"{schema.correct(score, self.success_threshold).mean():.1%}" if len(score) \
            else "n/a"
        if len(score) < n:
            acc += f" of {len(score)} scored"
        errs = sum(f.severity == "error" for f in self.findings)
        return (f"<Run {self.run_id!r}: {n} tasks, answer accuracy {acc} "
                f"(final_score >= {self.success_threshold:g}), files: "
                f"{', '.join(self.files_present)}{f', {errs} load errors' if errs else ''}>")


class _Replays(Mapping[str, dict]):
    """task_id -> parsed replay; lists the tasks whose replay file exists (one stat each, on
    first use), reads each file on first access."""

    def __init__(self, run: Run):
        paths = run.tasks.set_index("task_id")["replay_path"].dropna()
        self._paths = {str(k): Path(v) for k, v in paths.items() if os.path.isfile(v)}
        self._run_dir = run.path
        self._cache: dict[str, dict] = {}

    def __getitem__(self, task_id: str) -> dict:
        if task_id not in self._paths:
            raise KeyError(f"no task_replay.json for task {task_id!r}")
        if task_id not in self._cache:
            path = replay_file(self._run_dir, self._paths[task_id])
            if path is None:
                raise KeyError(f"no task_replay.json for task {task_id!r} (removed?)")
            self._cache[task_id] = read_replay(path)
        return self._cache[task_id]

    def __contains__(self, task_id: object) -> bool:
        return task_id in self._paths  # without reading (a corrupt file raises when read)

    def __iter__(self) -> Iterator[str]:
        return iter(self._paths)

    def __len__(self) -> int:
        return len(self._paths)


def _read_tasks(run_dir: Path, columns: Sequence[str] | None,
                cache: bool = True) -> tuple[pd.DataFrame, list, str]:
    name = TASK_FILE
    if not (run_dir / TASK_FILE).is_file():
        if not (run_dir / LEGACY_TASK_FILE).is_file():
            raise RunLoadError(f"{run_dir / TASK_FILE} not found: {run_dir} has no eval-v2 "
                               f"artifacts (not evaluated: run `dabench eval-v2 <RUN_ID>` first)",
                               [Finding("error", TASK_FILE, None, None, "missing_file",
                                        "not found (run not evaluated)")])
        name = LEGACY_TASK_FILE
        warnings.warn(f"{run_dir.name}: only the legacy {LEGACY_TASK_FILE} is present; "
                      "loading its subset of columns", stacklevel=3)
    try:
        header = read_header(run_dir / name)
    except RunLoadError as exc:  # name the run, not only the file
        raise RunLoadError(f"{run_dir}: {exc.args[0].splitlines()[0]}", exc.findings) from None
    present = {schema.ALIASES.get(h.strip(), h.strip()) for h in header}
    if not {"task_id", "final_score"} <= present:  # before reading a possibly huge file
        missing = [c for c, s in schema.TASK_COLUMNS.items() if s.required and c not in present
                   and c != "run_id"]
        raise RunLoadError(f"{run_dir / name}: required column(s) {missing} missing from the "
                           "header", [Finding("error", name, None, c, "required_column",
                                              "missing") for c in missing])
    try:
        df, findings = parse_cache.cached_read(read_table, run_dir / name, schema.TASK_COLUMNS,
                                               columns=columns, aliases=schema.ALIASES,
                                               enabled=cache)
    except RunLoadError as exc:
        first = exc.args[0].splitlines()[0]
        if str(run_dir) in first:
            raise
        raise RunLoadError(f"{run_dir}: {first}", exc.findings) from None
    return df, findings, name


def load_run(
    path: str | os.PathLike[str],
    *,
    columns: Sequence[str] | None = None,
    strict: bool = True,
    include_text: bool = False,
    cache: bool = True,
    success_threshold: float = schema.SUCCESS_THRESHOLD,
) -> Run:
    """Load one eval-v2 run directory.

    Parameters
    ----------
    path : path-like
        ``artifacts/runs/<RUN_ID>`` holding ``task_metrics.csv`` (or only the legacy
        ``comprehensive_evaluation.csv``), optionally ``trajectory.csv``, ``tool_calls.csv`` and
        ``task_*/task_replay.json`` (seed 000 §Generated Artifacts).
    columns : sequence of str, optional
        Task columns to load, e.g. ``schema.CORRECTNESS + schema.COST``; the identification
        columns are always loaded. Default: all.
    strict : bool
        If True, any error finding in the task file (a value that is not a 0/1 flag, a score
        outside [0, 1], an unknown difficulty, a duplicated task_id, a malformed row, a missing
        required column or value) raises one :class:`RunLoadError` listing all of them. If
        False, rejected values become missing, rows without a task_id and later duplicates of
        a task_id are dropped, and the findings are attached to ``run.findings`` with a
        warning.
    include_text : bool
        Keep the heavy free-text trajectory columns (thought, action_input, observation,
        raw_response, metadata_json) in :attr:`Run.trajectory`.
    cache : bool
        Read parsed files from, and add them to, the parse cache (:mod:`dabench_analysis.load.cache`:
        Parquet in the user cache directory, keyed by path, size, mtime and content hash, so a
        changed file is parsed again). False parses every file.
    success_threshold : float
        The analysis' success threshold in (0, 1], carried by the Run
        (:attr:`Run.success_threshold`).

    Returns
    -------
    Run
        ``tasks`` is loaded now; ``trajectory``, ``tool_calls`` and ``replays`` on first access
        (a missing trajectory.csv or tool_calls.csv gives an empty frame with the catalogue
        columns and a warning).

    Raises
    ------
    RunLoadError
        The directory is missing, a file, unreadable or a symlink loop; the task file is
        missing, empty, lacks ``task_id`` or ``final_score``, is not UTF-8 in its header, or
        is not comma-separated; or (with ``strict=True``) any error finding.
    TypeError
        ``columns`` given as one string, or holding something other than names.

    Warns
    -----
    UserWarning
        Requested ``columns`` that are not in the file; with ``strict=False``, rejected
        values and dropped rows; a legacy run (only ``comprehensive_evaluation.csv``).

    Examples
    --------
    >>> run = load_run("data/sample_runs/baseline_react")
    >>> run.run_id, len(run.tasks), str(run.tasks["difficulty"].dtype)
    ('baseline_react', 80, 'category')
    >>> run.tasks["difficulty"].cat.categories.tolist()
    ['Easy', 'Medium', 'Hard', 'Extreme']
    """
    columns = requested_columns(columns)
    success_threshold = schema.check_threshold(success_threshold, name="success_threshold")
    run_dir = _check_dir(Path(path))
    tasks, findings, name = _read_tasks(run_dir, columns, cache)
    errors = [f for f in findings if f.severity == "error"]
    if errors and strict:
        raise RunLoadError(f"{run_dir / name}: {len(errors)} problem(s) (in Python, "
                           "load_run(path, strict=False) keeps the valid values)", errors)
    keep = ~tasks["task_id"].duplicated() & tasks["task_id"].notna()
    tasks = tasks[keep]
    folder_id = run_dir.resolve().name
    if "run_id" not in tasks:
        tasks.insert(0, "run_id", pd.Series(folder_id, index=tasks.index, dtype="string"))
    ids = tasks["run_id"].dropna().unique()
    run_id = str(ids[0]) if len(ids) == 1 else folder_id
    tasks["run_id"] = tasks["run_id"].fillna(run_id)
    tasks = tasks.drop(columns="replay_path", errors="ignore")  # the loader's own column, last
    tasks["replay_path"] = pd.Series(
        replay_paths(run_dir, pa.Array.from_pandas(tasks["task_id"].array, type=pa.string()))
        .to_pandas(types_mapper=PD_TYPES.get).array, index=tasks.index)
    unsafe = [str(t) for t in tasks["task_id"] if not plain_name(t)]
    if unsafe:
        findings.append(Finding("warning", name, None, "task_id", "task_id_path",
                                f"task_id(s) {unsafe[:5]} are not plain folder names; their "
                                "task_replay.json is not looked up"))
    rows = [int(i) + 1 for i in tasks.index]
    tasks = tasks.reset_index(drop=True)
    if errors:
        dropped = int((~keep).sum()) + sum(len(f.rows) for f in errors
                                           if f.check in ("column_count", "repeated_header"))
        warnings.warn(f"{run_id}: {len(errors)} problem(s) in {name}; rejected values set to "
                      f"missing, {dropped} row(s) dropped (see run.findings)",
                      stacklevel=2)
    warn_absent(columns, tasks.columns, f"{run_id}: {name}")
    return Run(run_id=run_id, path=run_dir, tasks=tasks, findings=findings,
               include_text=include_text, source_rows=rows, task_file=name, cache=cache,
               success_threshold=success_threshold)
