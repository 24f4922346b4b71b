"""Load eval-v2 run directories into typed, tidy pandas frames.

Files → frames, nothing else: no statistics here, and nothing is ever written into a run
directory. Columns get the catalogue's dtypes (:mod:`dabench_analysis.schema`): flags as pandas
``boolean``, counts as ``Int64``, ``difficulty`` an ordered categorical Easy < Medium < Hard <
Extreme, the seed's enums categorical.

Parsing uses pyarrow's CSV reader with the catalogue's types (the fast path). When a value does
not convert, the file is re-read as text and typed column by column, so that every rejected value
is reported with its file, row and column (:class:`~dabench_analysis._typing.Finding`).
"""

from __future__ import annotations

import errno
import json
import os
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv

from dabench_analysis import schema
from dabench_analysis._typing import (FLAG_FALSE, FLAG_TRUE, NULL_VALUES, Finding, check_number,
                                      type_column, type_enum)

__all__ = ["Run", "RunLoadError", "Finding", "load_run", "read_table", "read_header",
           "TASK_FILE", "LEGACY_TASK_FILE", "TRAJECTORY_FILE", "TOOL_CALLS_FILE"]

TASK_FILE = "task_metrics.csv"
LEGACY_TASK_FILE = "comprehensive_evaluation.csv"
TRAJECTORY_FILE = "trajectory.csv"
TOOL_CALLS_FILE = "tool_calls.csv"
REPLAY_FILE = "task_replay.json"
_PA_TYPES = {"flag": pa.bool_(), "count": pa.int64(), "tokens": pa.int64(), "bytes": pa.int64(),
             "score": pa.float64(), "float": pa.float64(), "seconds": pa.float64()}
_PD_TYPES = {pa.bool_(): pd.BooleanDtype(), pa.int64(): pd.Int64Dtype(),
             pa.string(): pd.StringDtype(), pa.large_string(): pd.StringDtype()}


class RunLoadError(ValueError):
    """A run (or one of its files) could not be loaded; ``findings`` lists every problem."""

    def __init__(self, message: str, findings: Sequence[Finding] = ()):
        self.findings = list(findings)
        lines = [message] + [f"  - {f}" for f in self.findings]
        super().__init__("\n".join(lines))


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


def read_header(path: str | os.PathLike[str], *, max_bytes: int = 1 << 20) -> list[str]:
    """Read only the header line of a CSV file (never the whole file).

    Parameters
    ----------
    path : path-like
        A CSV file, UTF-8 (a byte-order mark is allowed).
    max_bytes : int
        Longest header accepted.

    Returns
    -------
    list of str
        Column names.

    Raises
    ------
    RunLoadError
        Empty file, undecodable bytes, a header longer than ``max_bytes``, a header that looks
        ';'- or tab-delimited, or duplicated column names.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = p.write_bytes(b"\\xef\\xbb\\xbftask_id,final_score\\r\\nt1,0.5\\r\\n")
    >>> read_header(p)
    ['task_id', 'final_score']
    """
    path = Path(path)
    name = path.name
    try:
        with open(path, "rb") as fh:
            line = fh.readline(max_bytes + 1)
    except OSError as exc:
        raise RunLoadError(f"{path}: cannot read ({exc.strerror})") from None
    if not line.strip():
        raise RunLoadError(f"{name}: file is empty (no header line)",
                           [Finding("error", name, None, None, "empty_file", "no header")])
    if len(line) > max_bytes:
        raise RunLoadError(f"{name}: header line longer than {max_bytes} bytes")
    try:
        text = line.decode("utf-8-sig").rstrip("\r\n")
    except UnicodeDecodeError as exc:
        raise RunLoadError(f"{name}: header is not UTF-8 (byte {exc.start}); re-save the file "
                           "as UTF-8") from None
    table = pacsv.read_csv(pa.py_buffer(text.encode() + b"\n"),
                           read_options=pacsv.ReadOptions(autogenerate_column_names=True),
                           convert_options=pacsv.ConvertOptions(strings_can_be_null=False))
    names = [str(table.column(i)[0]) for i in range(table.num_columns)]
    if len(names) == 1:
        for sep, what in ((";", "';'"), ("\t", "tab")):
            if sep in names[0]:
                raise RunLoadError(f"{name}: header has one column but contains {what}: the file "
                                   f"looks {what}-delimited; eval-v2 writes comma-separated CSV")
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise RunLoadError(f"{name}: duplicated column name(s) {dup} in the header",
                           [Finding("error", name, None, d, "duplicate_column",
                                    "duplicated in the header") for d in dup])
    return names


def _arrow_read(path: Path, column_types: dict, include: list[str]) -> pa.Table:
    return pacsv.read_csv(
        path,
        read_options=pacsv.ReadOptions(use_threads=True, block_size=1 << 22),
        convert_options=pacsv.ConvertOptions(
            column_types=column_types, include_columns=include, null_values=list(NULL_VALUES),
            true_values=list(FLAG_TRUE), false_values=list(FLAG_FALSE),
            strings_can_be_null=True, quoted_strings_can_be_null=True))


def _arrow_error(path: Path, exc: Exception) -> RunLoadError:
    msg = str(exc).splitlines()[0]
    check = "malformed_csv"
    if "Expected" in msg and "columns" in msg:
        msg += " (truncated or malformed line?)"
        check = "column_count"
    elif "UTF8" in msg or "utf8" in msg.lower():
        msg = "contains bytes that are not UTF-8 (Latin-1?); re-save the file as UTF-8"
        check = "encoding"
    return RunLoadError(f"{path.name}: cannot parse: {msg}",
                        [Finding("error", path.name, None, None, check, msg)])


def _typed_fast(table: pa.Table, specs: dict, name: str, findings: list) -> pd.DataFrame:
    df = table.to_pandas(types_mapper=_PD_TYPES.get)
    for col, spec in specs.items():
        if col not in df:
            continue
        if spec.kind == "enum":
            df[col] = type_enum(df[col], spec, name, findings)
        elif spec.kind in _PA_TYPES and spec.kind != "flag":
            df[col] = check_number(df[col], spec, name, findings)
    return df


def _typed_slow(path: Path, header: list[str], specs: dict, include: list[str],
                findings: list) -> pd.DataFrame:
    try:
        table = _arrow_read(path, {c: pa.string() for c in header}, include)
    except (pa.ArrowInvalid, OSError) as exc:
        raise _arrow_error(path, exc) from None
    raw = table.to_pandas(types_mapper=_PD_TYPES.get)
    out = {}
    for col in raw.columns:
        out[col] = type_column(raw[col], specs[col], path.name, findings) if col in specs \
            else raw[col]
    return pd.DataFrame(out, index=raw.index)


def read_table(
    path: str | os.PathLike[str],
    catalogue: Mapping[str, schema.Column],
    *,
    columns: Sequence[str] | None = None,
    aliases: Mapping[str, str] | None = None,
) -> tuple[pd.DataFrame, list[Finding]]:
    """Parse one eval-v2 CSV into catalogue dtypes, collecting findings instead of raising.

    Parameters
    ----------
    path : path-like
        The CSV file (UTF-8, comma-separated, header line; CRLF line ends accepted).
    catalogue : mapping of str to Column
        :data:`~dabench_analysis.schema.TASK_COLUMNS`, ``TRAJECTORY_COLUMNS`` or
        ``TOOL_CALL_COLUMNS``.
    columns : sequence of str, optional
        Load only these catalogue columns (plus the required ones); default all.
    aliases : mapping, optional
        Old column name -> catalogue name, renamed on read (e.g. ``schema_agent_called``).

    Returns
    -------
    frame : DataFrame
        One row per data row; catalogue columns typed, unknown columns kept as ``string``.
    findings : list of Finding
        Values rejected (set to missing; severity ``error``), values coerced (``warning``),
        unknown columns (``info``), missing required columns (``error``).

    Raises
    ------
    RunLoadError
        When the file as a whole cannot be read (empty, not UTF-8, wrong delimiter, a line with
        the wrong number of fields, duplicated header names).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "task_metrics.csv"
    >>> _ = p.write_text("task_id,difficulty,final_score,execution_success\\nt1,Easy,0.9,1\\n")
    >>> df, found = read_table(p, schema.TASK_COLUMNS)
    >>> df.dtypes.astype(str).tolist()
    ['string', 'category', 'float64', 'boolean']
    """
    path = Path(path)
    name = path.name
    aliases = dict(aliases or {})
    header = read_header(path)
    findings: list[Finding] = []
    renamed = {h: aliases[h] for h in header if h in aliases and aliases[h] not in header}
    specs = {h: catalogue[renamed.get(h, h)] for h in header if renamed.get(h, h) in catalogue}
    if columns is not None:
        wanted = set(columns) | {c for c, s in catalogue.items() if s.required}
        include = [h for h in header if renamed.get(h, h) in wanted]
    else:
        include = list(header)
    for h in header:
        if h not in specs and h not in aliases:
            findings.append(Finding("info", name, None, h, "unknown_column",
                                    "not in the eval-v2 catalogue; kept as text"))
    missing = [c for c, s in catalogue.items() if s.required and c not in
               {renamed.get(h, h) for h in header}]
    for col in missing:
        findings.append(Finding("error", name, None, col, "required_column", "missing"))
    specs = {h: specs[h] for h in include if h in specs}
    types = {h: _PA_TYPES.get(s.kind, pa.string()) for h, s in specs.items()}
    types |= {h: pa.string() for h in include if h not in specs}
    try:
        df = _typed_fast(_arrow_read(path, types, include), specs, name, findings)
    except pa.ArrowInvalid:
        df = _typed_slow(path, header, specs, include, findings)
    except OSError as exc:
        raise RunLoadError(f"{name}: cannot read ({exc})") from None
    return df.rename(columns=renamed), findings


def _empty(catalogue: Mapping[str, schema.Column], columns: Sequence[str]) -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=catalogue[c].dtype) for c in columns})


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
        One row per task: eval-v2 columns (catalogue dtypes) plus ``replay_path`` (the task's
        ``task_replay.json``, or <NA>).
    findings : list of Finding
        What the loader rejected or coerced (empty for a clean run).
    include_text : bool
        Whether :attr:`trajectory` keeps the free-text columns (thought, observation, ...).
    """

    run_id: str
    path: Path
    tasks: pd.DataFrame
    findings: list[Finding] = field(default_factory=list)
    include_text: bool = False

    def _side_table(self, file: str, catalogue: Mapping[str, schema.Column],
                    drop: Sequence[str] = ()) -> pd.DataFrame:
        cols = [c for c in catalogue if c not in drop]
        path = self.path / file
        if not path.exists():
            warnings.warn(f"{self.run_id}: {file} not found in {self.path}; using an empty "
                          "frame", stacklevel=3)
            return _empty(catalogue, cols)
        df, found = read_table(path, catalogue, columns=cols)
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
        """One row per trajectory step (``trajectory.csv``), keyed by run_id, task_id, step_id."""
        drop = () if self.include_text else schema.TEXT_TRAJECTORY_COLUMNS
        return self._side_table(TRAJECTORY_FILE, schema.TRAJECTORY_COLUMNS, drop)

    @cached_property
    def tool_calls(self) -> pd.DataFrame:
        """One row per tool call (``tool_calls.csv``), keyed by run_id, task_id, call_id."""
        return self._side_table(TOOL_CALLS_FILE, schema.TOOL_CALL_COLUMNS)

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

    @property
    def files_present(self) -> list[str]:
        """Which eval-v2 files the run directory holds."""
        names = (TASK_FILE, LEGACY_TASK_FILE, TRAJECTORY_FILE, TOOL_CALLS_FILE)
        found = [n for n in names if (self.path / n).is_file()]
        n_replays = int(self.tasks["replay_path"].notna().sum())
        return found + ([f"{n_replays} task_replay.json"] if n_replays else [])

    def __repr__(self) -> str:
        n = len(self.tasks)
        acc = (self.tasks["final_score"] >= schema.SUCCESS_THRESHOLD).mean() if n else float("nan")
        errs = sum(f.severity == "error" for f in self.findings)
        return (f"<Run {self.run_id!r}: {n} tasks, answer accuracy {acc:.1%} "
                f"(final_score >= {schema.SUCCESS_THRESHOLD}), files: "
                f"{', '.join(self.files_present)}{f', {errs} load errors' if errs else ''}>")


class _Replays(Mapping[str, dict]):
    def __init__(self, run: Run):
        paths = run.tasks.set_index("task_id")["replay_path"].dropna()
        self._paths = {str(k): Path(v) for k, v in paths.items()}
        self._cache: dict[str, dict] = {}

    def __getitem__(self, task_id: str) -> dict:
        if task_id not in self._paths:
            raise KeyError(f"no task_replay.json for task {task_id!r}")
        if task_id not in self._cache:
            self._cache[task_id] = read_replay(self._paths[task_id])
        return self._cache[task_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._paths)

    def __len__(self) -> int:
        return len(self._paths)


def read_replay(path: str | os.PathLike[str]) -> dict:
    """Parse one ``task_replay.json`` with :func:`json.loads` (data only, never executed).

    Raises
    ------
    RunLoadError
        If the file is unreadable, empty, not valid JSON (names line and column), or not a
        JSON object.
    """
    path = Path(path)
    where = f"{path.parent.name}/{path.name}"
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RunLoadError(f"{where}: cannot read ({exc})") from None
    if not text.strip():
        raise RunLoadError(f"{where}: file is empty")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RunLoadError(f"{where}: not valid JSON at line {exc.lineno}, column {exc.colno}: "
                           f"{exc.msg}") from None
    if not isinstance(data, dict):
        raise RunLoadError(f"{where}: expected a JSON object, got {type(data).__name__}")
    return data


def _duplicates(tasks: pd.DataFrame, name: str) -> list[Finding]:
    dup = tasks["task_id"].duplicated(keep=False) & tasks["task_id"].notna()
    out = []
    for task_id, rows in tasks.index[dup].to_series().groupby(tasks["task_id"][dup]):
        out.append(Finding("error", name, int(rows.iloc[1]) + 1, "task_id", "duplicate_task_id",
                           f"task_id {task_id!r} appears in rows "
                           f"{', '.join(str(r + 1) for r in rows)}"))
    return out


def _read_tasks(run_dir: Path, columns: Sequence[str] | None) -> tuple[pd.DataFrame, list, str]:
    name = TASK_FILE
    if not (run_dir / TASK_FILE).is_file():
        if not (run_dir / LEGACY_TASK_FILE).is_file():
            raise RunLoadError(f"{run_dir / TASK_FILE} not found: {run_dir} has no eval-v2 "
                               f"artifacts (run `dabench eval-v2 <RUN_ID>` first)",
                               [Finding("error", TASK_FILE, None, None, "missing_file",
                                        "not found")])
        name = LEGACY_TASK_FILE
        warnings.warn(f"{run_dir.name}: only the legacy {LEGACY_TASK_FILE} is present; "
                      "loading its subset of columns", stacklevel=3)
    df, findings = read_table(run_dir / name, schema.TASK_COLUMNS, columns=columns,
                              aliases=schema.ALIASES)
    return df, findings + (_duplicates(df, name) if "task_id" in df else []), name


def load_run(
    path: str | os.PathLike[str],
    *,
    columns: Sequence[str] | None = None,
    strict: bool = True,
    include_text: bool = False,
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
        If True, any error finding in task_metrics.csv (a value that is not a 0/1 flag, a score
        outside [0, 1], an unknown difficulty, a duplicated task_id, a missing required column)
        raises one :class:`RunLoadError` listing all of them. If False, rejected values become
        missing, duplicated task_ids keep their first row, and the findings are attached to
        ``run.findings`` with a warning.
    include_text : bool
        Keep the heavy free-text trajectory columns (thought, action_input, observation,
        raw_response, metadata_json) in :attr:`Run.trajectory`.

    Returns
    -------
    Run
        ``tasks`` is loaded now; ``trajectory``, ``tool_calls`` and ``replays`` on first access
        (a missing trajectory.csv or tool_calls.csv gives an empty frame with the catalogue
        columns and a warning).

    Raises
    ------
    RunLoadError
        The directory is missing, a file, unreadable or a symlink loop; task_metrics.csv is
        missing, empty, header-only with no required columns, not UTF-8, or malformed; or (with
        ``strict=True``) any error finding.

    Examples
    --------
    >>> run = load_run("data/sample_runs/baseline_react")
    >>> run.run_id, len(run.tasks), str(run.tasks["difficulty"].dtype)
    ('baseline_react', 80, 'category')
    >>> run.tasks["difficulty"].cat.categories.tolist()
    ['Easy', 'Medium', 'Hard', 'Extreme']
    """
    run_dir = _check_dir(Path(path))
    tasks, findings, name = _read_tasks(run_dir, columns)
    errors = [f for f in findings if f.severity == "error"]
    if errors and strict:
        raise RunLoadError(f"{run_dir / name}: {len(errors)} problem(s) (load with strict=False "
                           "to keep the valid values)", errors)
    missing_required = [f.column for f in errors if f.check == "required_column"]
    if {"task_id", "final_score"} & set(missing_required):
        raise RunLoadError(f"{run_dir / name}: required column(s) missing", errors)
    if "task_id" in tasks:
        tasks = tasks[~tasks["task_id"].duplicated() | tasks["task_id"].isna()]
    folder_id = run_dir.resolve().name
    if "run_id" not in tasks:
        tasks.insert(0, "run_id", pd.Series(folder_id, index=tasks.index, dtype="string"))
    ids = tasks["run_id"].dropna().unique()
    run_id = str(ids[0]) if len(ids) == 1 else folder_id
    tasks["run_id"] = tasks["run_id"].fillna(run_id)
    replay = [run_dir / str(t) / REPLAY_FILE for t in tasks["task_id"]]
    tasks["replay_path"] = pd.array([str(p) if p.is_file() else pd.NA for p in replay],
                                    dtype="string")
    tasks = tasks.reset_index(drop=True)
    if errors:
        warnings.warn(f"{run_id}: {len(errors)} problem(s) in {name}; rejected values set to "
                      "missing (see run.findings)", stacklevel=2)
    return Run(run_id=run_id, path=run_dir, tasks=tasks, findings=findings,
               include_text=include_text)
