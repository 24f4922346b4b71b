# Over 400 lines (<= 500): load_run and load_runs with their full docstrings, and the sweep read whole from the cache or file by file
"""Load eval-v2 runs: :func:`load_runs` (a sweep) and :func:`load_run` (one run), one code path.

Both read every task file through :func:`dabench_analysis.load._pipeline.read_files` (threads,
the parse cache, the catalogue's rules once over all files, one ``to_pandas``); ``load_run(path)``
is ``load_runs([path])`` for one run, raising instead of skipping. A sweep is a list of run
directories, a glob (``"artifacts/runs/sweep_*"``) or a parent folder whose subfolders are runs.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from dabench_analysis import schema
from dabench_analysis._caller import outside_level
from dabench_analysis.load import _folders as folders
from dabench_analysis.load import _formats as formats
from dabench_analysis.load import _pipeline as pipeline
from dabench_analysis.load import _stack_cache as stack_cache
from dabench_analysis.load import cache as parse_cache
from dabench_analysis.load._findings import Finding, RunLoadError, dropped_rows
from dabench_analysis.load._folders import NOT_EVALUATED, candidates, check_dir
from dabench_analysis.load._header import TEXT
from dabench_analysis.load._replay import replay_folders, replay_paths
from dabench_analysis.load._run import Run
from dabench_analysis.load._sweep import SKIPPED_COLUMNS, Runs
from dabench_analysis.load._task_files import read_second, second_task_files
from dabench_analysis.load._threshold import refuse_threshold
from dabench_analysis.schema._files import (
    LEGACY_TASK_FILE,
    LEGACY_TASKS,
    REPLAY_FILE,
    TASK_FILE,
    TASKS,
)

_UNSAFE_ID = r"^\.{0,2}$|[/\\\x00]"  # '', '.', '..', or a separator or NUL anywhere


def load_run(
    path: str | os.PathLike[str],
    *,
    columns: Sequence[str] | None = None,
    strict: bool = True,
    include_text: bool = False,
    cache: bool = True,
    format: str | None = None,
    mapping: Mapping[str, str] | None = None,
    **removed,
) -> Run:
    """Load one run: an eval-v2 run directory, or another harness's output.

    Parameters
    ----------
    path : path-like
        ``artifacts/runs/<RUN_ID>`` holding ``task_metrics.csv`` (or only the legacy
        ``comprehensive_evaluation.csv``), optionally ``trajectory.csv``, ``tool_calls.csv`` and
        ``task_*/task_replay.json`` (seed 000 §Generated Artifacts). Or a file of another
        harness (the docs' "Other harnesses", ``docs/guide/harnesses.md``): an Inspect log (``.eval``, ``.json``), a
        tau-bench or tau2-bench results JSON, a per-task table (CSV, JSON lines, Parquet).
    columns : sequence of str, optional
        Task columns to load, e.g. ``schema.columns.CORRECTNESS + schema.columns.COST``; the required columns
        are always loaded. Default: all.
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
        Read parsed files from, and add them to, the parse cache (:mod:`dabench_analysis.load.cache`).
    format : {"eval-v2", "inspect", "tau-bench", "table"}, optional
        The format of ``path``; default: detected from the content
        (:func:`dabench_analysis.load.detect_format`).
    mapping : mapping of str to str, optional
        For a per-task table: catalogue column -> the table's column
        (``{"final_score": "score"}``; :func:`dabench_analysis.load_table`).

    Returns
    -------
    Run
        Another harness's run: its tasks (one row per task and trial), steps and tool calls
        as it records them (:attr:`Run.format`). An eval-v2 run: ``tasks`` is loaded now; ``trajectory``, ``tool_calls`` and ``replays`` on first access
        (a missing trajectory.csv or tool_calls.csv gives an empty frame with the catalogue
        columns and a warning).

    Raises
    ------
    RunLoadError
        The directory is missing, a file, unreadable or a symlink loop; the task file is
        missing, empty, lacks ``task_id`` or ``final_score``, is not UTF-8 in its header, or
        is not comma-separated; or (with ``strict=True``) any error finding.
    TypeError
        ``columns`` given as one string, or holding something other than names;
        ``success_threshold=`` (removed: the threshold is the analysis' ``threshold=``,
        :func:`refuse_threshold`) or another unknown keyword.

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
    refuse_threshold("load_run", removed)
    columns = requested_columns(columns)
    fmt = formats.check_format(format) or formats.detect_format(path)
    if fmt not in (None, "eval-v2") or (fmt is None and Path(path).is_file()):
        return formats.one_run(Path(path), fmt, mapping=mapping, strict=strict,
                               include_text=include_text)
    run_dir = check_dir(Path(path))
    if folders.task_file(run_dir) is None:
        raise RunLoadError(f"{run_dir / TASK_FILE} not found: {run_dir} has no eval-v2 "
                           f"artifacts ({NOT_EVALUATED})",
                           [Finding("error", TASK_FILE, None, None, "missing_file",
                                    "not found (run not evaluated)")])
    (run,), _ = _load([run_dir], columns=columns, strict=strict, include_text=include_text,
                      cache=cache, mapper=folders.mapper(False, False, 1), stack=False)
    if isinstance(run, Exception):
        raise run
    warn_absent(columns, run.tasks.columns, f"{run.run_id}: {run.task_file}")
    return run


def load_runs(
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    columns: Sequence[str] | None = None,
    strict: bool = True,
    include_text: bool = False,
    parallel: bool | int = True,
    progress: bool | None = None,
    cache: bool = True,
    format: str | None = None,
    mapping: Mapping[str, str] | None = None,
    **removed,
) -> Runs:
    """Load every run of a sweep: eval-v2 run folders and other harnesses' files.

    Parameters
    ----------
    paths : path-like, glob pattern or sequence of path-like
        A list of run directories or files of other harnesses (Inspect logs, tau-bench
        results, per-task tables: see :func:`load_run`); a glob string (``"runs/sweep_*"``,
        ``"logs/*.eval"``, or ``"runs/*/task_metrics.csv"``: matched task files stand for
        their folder); or one folder, which is loaded as a run if it holds
        ``task_metrics.csv`` and otherwise searched for run subfolders, Inspect logs and
        tau-bench files (hidden ones ignored).
    columns : sequence of str, optional
        Task columns to load (see :func:`load_run`); default all.
    strict : bool
        If True, a run that fails to load (or has an error finding in its task file) raises
        one :class:`RunLoadError` naming every such run. If False, those runs are loaded with
        their valid values, and any that still fail are skipped and listed in ``skipped``.
    include_text : bool
        Keep the heavy free-text trajectory columns in :attr:`Runs.trajectory`.
    parallel : bool or int
        Threads that read files (pyarrow releases the GIL while parsing). True: min(8, CPU
        cores); a number: that many; False: one.
    progress : bool, optional
        Show a progress bar on stderr. Default: only in a terminal, not inside a notebook.
    cache : bool
        Read and fill the parse cache (:mod:`dabench_analysis.load.cache`).
    format, mapping
        As :func:`load_run`, for the files among ``paths`` (folders are eval-v2 runs).

    Returns
    -------
    Runs
        The loaded runs in path order, ``tasks`` stacked, and ``skipped`` (path, reason) for
        folders without eval-v2 artifacts, missing paths, repeated folders, runs of 0 task
        rows (a task file with a header only: "0 task rows in task_metrics.csv ..."; with a
        warning), duplicate run ids (the later one is skipped, with a warning) and, with
        ``strict=False``, failed runs (one warning names them). A per-task table of several
        runs gives each of its runs (:func:`dabench_analysis.load_table`). No run at all
        (an empty folder, every path skipped) gives an empty ``Runs`` with a warning.

    Raises
    ------
    ValueError
        A glob that matches nothing, an empty string, ``parallel`` < 1.
    TypeError
        ``paths`` that is neither a path, a pattern nor an iterable of paths; ``columns``
        given as one string; ``success_threshold=`` (removed, :func:`refuse_threshold`) or
        another unknown keyword.
    RunLoadError
        A single folder that does not exist or is a file; with ``strict=True``, any run that
        cannot be loaded (the message lists each with its reason and its findings;
        ``findings`` has them all).

    Examples
    --------
    >>> runs = load_runs("data/sample_runs", progress=False)
    >>> runs.run_ids, len(runs.tasks)
    (['baseline_react', 'proposed_aat'], 160)
    >>> runs.skipped["reason"].str.startswith("not evaluated").tolist()
    [True]
    """
    refuse_threshold("load_runs", removed)
    columns = requested_columns(columns)
    fmt = formats.check_format(format)
    dirs, skipped = candidates(paths, fmt)
    mapper = folders.mapper(parallel, progress, len(dirs))
    folders_ = [d for d in dirs if formats.eval_folder(d, fmt)]
    loaded, stacked = _load(folders_, columns=columns, strict=strict,
                            include_text=include_text, cache=cache, mapper=mapper, stack=True)
    if len(folders_) < len(dirs):  # files of other harnesses, in their place among the paths
        loaded, stacked = formats.runs_in_place(dirs, loaded, fmt, skipped, mapping=mapping,
                                                strict=strict, include_text=include_text), None
    dirs = [d for d, r in zip(dirs, loaded, strict=True) for _ in (r if isinstance(r, list)
                                                                    else [r])]
    loaded = [x for r in loaded for x in (r if isinstance(r, list) else [r])]
    failed = [(d, r) for d, r in zip(dirs, loaded, strict=True) if isinstance(r, Exception)]
    if failed and strict:
        lines = [line for d, e in failed for line in (
            f"{d}: {_reason(d, e)}", *(f"  - {f}" for f in getattr(e, "findings", [])))]
        found: list[Finding] = [f for _, e in failed for f in getattr(e, "findings", [])]
        raise RunLoadError(f"{len(failed)} of {len(dirs)} run(s) could not be loaded (use "
                           "strict=False to skip them):\n  " + "\n  ".join(lines), found,
                           listed=False)
    skipped += [(str(d), _reason(d, e)) for d, e in failed]
    if failed:
        shown = "; ".join(f"{d}: {_reason(d, e)}" for d, e in failed[:3])
        warnings.warn(f"{len(failed)} run(s) could not be loaded and are not in the sweep (see "
                      f".skipped): {shown}{' ...' if len(failed) > 3 else ''}",
                      stacklevel=outside_level())
    runs, first = [], {}
    for d, r in zip(dirs, loaded, strict=True):
        if isinstance(r, Exception):
            continue
        # nothing to count: never a run the sweep's counts leave out (an eval-v2 run's count
        # without building its slice of the stacked frame: one source row per task row)
        if not (len(r.source_rows) if r.format == "eval-v2" else len(r.tasks)):
            skipped.append((str(d), _no_rows(r)))
            warnings.warn(f"{r.run_id}: {_no_rows(r)}; not in the sweep (see .skipped)",
                          stacklevel=outside_level())
            continue
        if r.run_id in first:
            skipped.append((str(d), f"duplicate run_id {r.run_id!r} (kept {first[r.run_id]})"))
            warnings.warn(f"run_id {r.run_id!r} appears in {first[r.run_id]} and {d}; "
                          "skipping the later one (see .skipped)", stacklevel=outside_level())
            continue
        first[r.run_id] = str(d)
        runs.append(r)
    if stacked is not None and len(runs) != len(dirs):
        stacked = None
    if not runs and not failed:
        warnings.warn(f"no run loaded from {_described(paths)}: " + (
            f"{len(skipped)} path(s) skipped (see .skipped)" if skipped else
            f"no run folder (with {TASK_FILE}), Inspect log or tau-bench file there"),
            stacklevel=outside_level())
    if columns is not None:
        warn_absent(columns, {c for r in runs for c in r.tasks.columns}, "load_runs")
    return Runs(runs, pd.DataFrame(skipped, columns=SKIPPED_COLUMNS, dtype="string"),
                mapper=mapper, stacked=stacked)


def _load(dirs: list[Path], *, columns, strict: bool, include_text: bool, cache: bool,
          mapper: Callable,
          stack: bool) -> tuple[list[Run | RunLoadError], pd.DataFrame | None]:
    """Every run's tasks through the pipeline: the runs (or their load errors) in ``dirs``
    order, and the stacked frame (``stack``) of the runs loaded. A sweep (``stack``) is first
    looked up as a whole in the parse cache (:mod:`._stack_cache`)."""
    root = parse_cache.usable() if cache and stack and dirs else None
    sweep = stack_cache.Sweep(dirs, columns, strict, root) if root is not None else None
    hit = sweep.lookup() if sweep is not None else None
    if hit is not None:
        table, parts = hit
        if folders.shows_progress(mapper):  # the bar a first load shows, at once
            mapper(lambda p: p, parts, label="runs")
        loaded: list = [None] * len(dirs)
        good = list(enumerate(parts))
    else:
        loaded, good, table = _read_tasks(dirs, columns=columns, strict=strict, cache=cache,
                                          mapper=mapper)
        if sweep is not None and len(good) == len(dirs) and all(
                p.task_file != LEGACY_TASK_FILE and not any(f.severity == "error"
                                                            for f in p.findings)
                for _, p in good):  # a hit warns as a first load: only runs without warnings
            sweep.store(table, [p for _, p in good])
    frame = pipeline.to_frame(table, TASKS) if good else pd.DataFrame()
    del table
    start = 0
    for i, p in good:
        tasks = partial(_part, frame, start, p.n, p.own)
        start += p.n
        loaded[i] = Run(run_id=p.run_id, path=dirs[i], tasks=tasks, findings=list(p.findings),
                        include_text=include_text, source_rows=p.rows.tolist(),
                        task_file=p.task_file, cache=cache, inputs={p.task_file: p.stamp})
    return loaded, (frame.copy(deep=False) if stack and len(good) == len(dirs) else None)


def _read_tasks(dirs: list[Path], *, columns, strict: bool, cache: bool, mapper: Callable
                ) -> tuple[list, list[tuple[int, stack_cache.Part]], pa.Table]:
    """Every run's task file read (:func:`._pipeline.read_files`) and accepted: the load error
    of each run that failed (None where a run was loaded), each loaded run's position and
    part, and their tables stacked with the loader's columns (:func:`_loader_columns`)."""
    kinds = [{TASK_FILE: TASKS, LEGACY_TASK_FILE: LEGACY_TASKS}.get(folders.task_file(d))
             for d in dirs]
    files = [d / (k.file if k else TASK_FILE) for d, k in zip(dirs, kinds, strict=True)]
    side: dict[str, Future] = {}
    with ThreadPoolExecutor(1, thread_name_prefix="load_runs") as beside:
        def start(read: list) -> None:  # on another core while the rules run on this one
            side["second"] = beside.submit(read_second, dirs, read, cache=cache, mapper=map)
            side["folders"] = beside.submit(lambda: [replay_folders(d) for d in dirs])

        results = pipeline.read_files(files, kinds, columns, cache=cache,
                                      mapper=partial(mapper, label="runs"),
                                      workers=folders.workers(mapper), on_read=start)
        second = second_task_files(results, side["second"].result(), cache=cache)
        listed = side["folders"].result()
    loaded: list = []
    good, accepted = [], []
    for i, (d, res) in enumerate(zip(dirs, results, strict=True)):
        got = _accept(d, res, strict)
        if not isinstance(got, tuple):
            loaded.append(got)
            continue
        run_id, findings = got
        loaded.append(None)
        accepted.append(i)
        good.append((i, stack_cache.Part(run_id, [], res.rows, findings, res.kind.file,
                                         res.stamp)))
    table = _loader_columns([dirs[i] for i in accepted], [results[i] for i in accepted],
                            [p for _, p in good], [listed[i] for i in accepted])
    for i, p in good:
        if i in second:
            p.findings.append(second[i])
    return loaded, good, table


def _loader_columns(dirs: list[Path], results: list, parts: list[stack_cache.Part],
                    listed: list[list[str]]) -> pa.Table:
    """The accepted runs' tables stacked, with the loader's columns: ``run_id`` first where a
    file lacks it (its missing values filled with the run's id) and ``replay_path`` last
    (:func:`._replay.replay_paths`); each part's ``own`` columns, and a finding on task ids
    that cannot name a folder (``listed``: each run's :func:`._replay.replay_folders`). The
    columns are in order of first appearance over the runs, as if each run's table were
    stacked on its own."""
    if not parts:
        return pipeline.stacked([])
    tables = [r.table.drop_columns(["replay_path"])
              if r.table.schema.get_field_index("replay_path") >= 0 else r.table
              for r in results]
    for t, p in zip(tables, parts, strict=True):
        names = t.schema.names
        p.own = [*(() if "run_id" in names else ("run_id",)), *names, "replay_path"]
    order = list(dict.fromkeys(c for p in parts for c in p.own))
    table = pipeline.stacked(tables)
    del tables
    sizes = [len(p.rows) for p in parts]
    table = pipeline.fill_run_id(table, pa.DictionaryArray.from_arrays(
        pa.array(np.repeat(np.arange(len(parts), dtype=np.int32), sizes)),
        pa.array([p.run_id for p in parts], TEXT)).cast(TEXT))
    task_ids = table.column("task_id")
    table = table.append_column("replay_path", replay_paths(dirs, task_ids, sizes, listed))
    unsafe = np.flatnonzero(pc.fill_null(pc.match_substring_regex(task_ids, _UNSAFE_ID),
                                         False).to_numpy(zero_copy_only=False))
    starts = np.cumsum([0, *sizes])
    for run in np.unique(np.searchsorted(starts, unsafe, side="right") - 1):
        at = unsafe[(unsafe >= starts[run]) & (unsafe < starts[run + 1])][:5]
        parts[run].findings.append(Finding(
            "warning", results[run].name, None, "task_id", "task_id_path",
            f"task_id(s) {pc.take(task_ids, pa.array(at)).to_pylist()} are not plain folder "
            f"names; their {REPLAY_FILE} is not looked up"))
    return table.select(order)


def _part(frame: pd.DataFrame, start: int, n: int, own: list[str]) -> pd.DataFrame:
    out = frame.iloc[start:start + n]
    if own != list(frame.columns):
        out = out[own]
    return out.set_axis(pd.RangeIndex(n), axis=0)


def _accept(run_dir: Path, res, strict: bool):
    """A run's task file as read: its ``(run_id, findings)`` ready to stack
    (:func:`_loader_columns` adds the loader's columns), or the RunLoadError that stops it."""
    if res is None:
        return RunLoadError(f"{run_dir}: {NOT_EVALUATED}",
                            [Finding("error", TASK_FILE, None, None, "missing_file",
                                     "not found (run not evaluated)")])
    name = res.name
    if res.error is not None:
        first = res.error.message.splitlines()[0]
        return RunLoadError(f"{run_dir}: {first}" if str(run_dir) not in first else first,
                            res.error.findings)
    errors = [f for f in res.findings if f.severity == "error"]
    if errors and strict:
        return RunLoadError(f"{run_dir / name}: {len(errors)} problem(s) (in Python, "
                            "load_run(path, strict=False) keeps the valid values)", errors)
    table = res.table
    ids = pc.unique(table.column("run_id").drop_null()) if "run_id" in table.column_names \
        else ()
    run_id = str(ids[0]) if len(ids) == 1 else folder_name(run_dir)
    if name == LEGACY_TASK_FILE:
        warnings.warn(f"{run_dir.name}: only the legacy {LEGACY_TASK_FILE} is present; "
                      "loading its subset of columns", stacklevel=outside_level())
    if errors:
        warnings.warn(f"{run_id}: {len(errors)} problem(s) in {name}; rejected values set to "
                      f"missing, {dropped_rows(errors)} row(s) dropped (see run.findings)",
                      stacklevel=outside_level())
    return run_id, list(res.findings)


def folder_name(run_dir: Path) -> str:
    """The name of a run's folder: its own, or what it links to (``latest -> run_0412``), or
    the current folder's for ``.``."""
    if run_dir.name in ("", ".", "..") or run_dir.is_symlink():
        return run_dir.resolve().name
    return run_dir.name


def _reason(run_dir: Path, error: Exception) -> str:
    """The first line of why a run could not be loaded, without the run's folder in front."""
    first = str(error).splitlines()[0] if str(error) else type(error).__name__
    for before in (f"{run_dir}: ", f"{run_dir}{os.sep}"):
        if first.startswith(before):
            return first[len(before):]
    return first


def _described(paths) -> str:
    """``paths`` of :func:`load_runs` as a warning names them."""
    if isinstance(paths, (str, os.PathLike)):
        return str(paths)
    return f"{len(paths)} path(s)" if hasattr(paths, "__len__") else "the paths given"


def _no_rows(run: Run) -> str:
    """Why a run of 0 task rows is not in a sweep."""
    if any(f.check == "no_rows" for f in run.findings):
        return f"0 task rows in {run.task_file} (a header and no data rows)"
    return f"0 task rows left in {run.task_file} once its errors were set aside (see findings)"


def requested_columns(columns: Sequence[str] | None) -> list[str] | None:
    """Check ``columns=`` of :func:`load_run` / :func:`load_runs`: a list of names.

    Raises
    ------
    TypeError
        If ``columns`` is a string or not an iterable of strings.
    """
    if columns is None:
        return None
    if isinstance(columns, (str, bytes)) or not hasattr(columns, "__iter__"):
        raise TypeError(f"columns must be a list of column names, got {columns!r}"
                        + (f" (did you mean [{columns!r}]?)" if isinstance(columns, str) else ""))
    cols = list(columns)
    bad = [c for c in cols if not isinstance(c, str)]
    if bad:
        raise TypeError(f"columns must be column names (str), got {bad[:3]!r}")
    return [schema.ALIASES.get(c, c) for c in cols]


def warn_absent(columns: Sequence[str] | None, loaded, where: str) -> None:
    """Warn about requested columns that are in no loaded file (a typo loads nothing)."""
    if columns is None:
        return
    have = set(loaded)
    absent = [c for c in columns if schema.ALIASES.get(c, c) not in have]
    if absent:
        warnings.warn(f"{where}: requested column(s) {absent} not found (not in the file; "
                      "names as eval-v2 writes them, see dabench_analysis.schema)",
                      stacklevel=outside_level())
