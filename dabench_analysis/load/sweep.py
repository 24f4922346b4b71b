# Over 400 lines (under 500): one concept (many runs: candidates, threads, progress, the lazy
# side tables), most of it docstrings; the batched task path already lives in fast.py.
"""Load many eval-v2 runs at once (a sweep): :func:`load_runs` -> :class:`Runs`.

A sweep is a list of run directories, a glob (``"artifacts/runs/sweep_*"``) or a parent folder
whose subfolders are runs. Its task files (on load) and its trajectory and tool-call files (on
first access to :attr:`Runs.trajectory` / :attr:`Runs.tool_calls`) are parsed by pyarrow in
threads, stacked, checked and converted to pandas once for the whole sweep
(:mod:`dabench_analysis.load.fast`), whatever columns each run has; a file with anything to
report beyond notes and coerced spellings goes through :func:`dabench_analysis.load.load_run`
(or :attr:`Run.trajectory`) instead, so both give the same frames and findings. Each stacked
table is cached as one Arrow file keyed by every file's stamp. Folders without eval-v2
artifacts, runs that fail to load (with ``strict=False``) and repeated run ids are skipped and
listed in :attr:`Runs.skipped`.
"""

from __future__ import annotations

import glob
import os
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cached_property, partial
from pathlib import Path

import pandas as pd
import pyarrow as pa

from dabench_analysis import schema
from dabench_analysis.load import cache as parse_cache
from dabench_analysis.load import fast as _batch
from dabench_analysis.load import stacked_cache
from dabench_analysis.load.findings import Finding, RunLoadError
from dabench_analysis.load.replay import replay_paths
from dabench_analysis.load.run import (
    LEGACY_TASK_FILE,
    TASK_FILE,
    Run,
    load_run,
    requested_columns,
    warn_absent,
)

#: Most threads used by ``parallel=True``.
MAX_THREADS = 8


_SKIPPED_COLUMNS = ["path", "reason"]


def _evaluated(path: Path) -> bool:
    return (path / TASK_FILE).is_file() or (path / LEGACY_TASK_FILE).is_file()


def _candidates(paths) -> tuple[list[Path], list[tuple[str, str]]]:
    """Run directories named by ``paths`` (list, glob or parent folder) and what was skipped."""
    skipped: list[tuple[str, str]] = []
    if isinstance(paths, (str, os.PathLike)):
        text = os.path.expanduser(os.fspath(paths))
        if not text.strip():
            raise ValueError("paths is an empty string; give a run folder, a folder of runs, "
                             "a glob or a list")
        if glob.has_magic(text):
            matches = sorted(glob.glob(text, recursive=True))
            if not matches:
                raise ValueError(f"no path matches the pattern {text!r}")
            items = [Path(m).parent if Path(m).name in (TASK_FILE, LEGACY_TASK_FILE)
                     else Path(m) for m in matches]
        else:
            root = Path(text)
            if not root.is_dir():
                raise RunLoadError(f"{root} does not exist" if not root.exists()
                                   else f"{root} is a file, not a run directory or a folder of runs")
            if _evaluated(root):
                return [root], skipped
            own = _cache_layout()  # $DABENCH_CACHE_DIR may be the sweep folder itself
            items = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")
                           and not (own and p.name == own.name and p.resolve() == own))
    else:
        try:
            items = [Path(p) for p in paths]
        except TypeError:
            raise TypeError(f"paths must be a path, a glob pattern or a list of paths, got "
                            f"{paths!r}") from None
    dirs, seen = [], set()
    for p in items:
        if not p.is_dir():
            skipped.append((str(p), "does not exist" if not p.exists() else
                            "not a directory"))
        elif not _evaluated(p):
            skipped.append((str(p), f"not evaluated: no {TASK_FILE} (run `dabench eval-v2 "
                                    "<RUN_ID>` first)"))
        elif p.resolve() in seen:
            skipped.append((str(p), "listed twice"))
        else:
            seen.add(p.resolve())
            dirs.append(p)
    return dirs, skipped


def _cache_layout() -> Path | None:
    try:
        return (parse_cache.cache_dir() / parse_cache._LAYOUT).resolve()
    except (OSError, RuntimeError):
        return None


def _workers(parallel: bool | int, n: int) -> int:
    if isinstance(parallel, bool):
        return min(MAX_THREADS, os.cpu_count() or 1, n) if parallel else 1
    if parallel < 1:
        raise ValueError(f"parallel must be True, False or a number of threads >= 1, "
                         f"got {parallel}")
    return max(1, min(int(parallel), n))


def _in_notebook() -> bool:
    shell = getattr(sys.modules.get("IPython"), "get_ipython", lambda: None)()
    return type(shell).__name__ == "ZMQInteractiveShell"


def _show_progress(progress: bool | None, n: int) -> bool:
    if progress is not None:
        return bool(progress)
    return n > 1 and sys.stderr.isatty() and not _in_notebook()


def _map(fn: Callable, items: Sequence, *, workers: int, show: bool, label: str) -> list:
    """``[fn(x) for x in items]`` in ``workers`` threads, with a rich progress bar if ``show``."""
    if not show and (workers <= 1 or len(items) <= 1):
        return [fn(x) for x in items]
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=Console(stderr=True), disable=not show, transient=False) as bar:
        task = bar.add_task(label, total=len(items))

        def one(x):
            try:
                return fn(x)
            finally:
                bar.advance(task)

        if workers <= 1 or len(items) <= 1:
            return [one(x) for x in items]
        with ThreadPoolExecutor(workers, thread_name_prefix="load_runs") as pool:
            return list(pool.map(one, items))


def _release() -> None:
    """Hand pyarrow's freed pages back to the OS after each file (peak RSS ~10% lower on a
    sweep's trajectories; ``bench/run_bench.py``)."""
    pa.default_memory_pool().release_unused()


def _concat(frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """Stack frames whose columns may differ (legacy runs): a column missing from a frame is
    filled with missing values of the dtype it has elsewhere; categoricals stay categorical."""
    if not frames:
        return pd.DataFrame()
    dtypes: dict[str, object] = {}
    for f in frames:
        for col, dt in f.dtypes.items():
            if col in dtypes and isinstance(dt, pd.CategoricalDtype) and dt != dtypes[col]:
                old = dtypes[col]
                cats = pd.Index(old.categories).append(dt.categories).unique() \
                    if isinstance(old, pd.CategoricalDtype) else dt.categories
                dtypes[col] = pd.CategoricalDtype(cats, ordered=False)
            dtypes.setdefault(col, dt)
    cols = list(dtypes)
    aligned = []
    for f in frames:
        if list(f.columns) != cols:
            f = f.reindex(columns=cols)
        fix = {c: t for c, t in dtypes.items() if f[c].dtype != t}
        aligned.append(f.astype(fix) if fix else f)
    return pd.concat(aligned, ignore_index=True)


def _starts(checked: Sequence[_batch.Checked]) -> dict[int, int]:
    """id of each file's entry -> its first row in the stacked table."""
    out, start = {}, 0
    for c in checked:
        out[id(c)], start = start, start + c.rows
    return out


def _side_batch(runs: Sequence[Run], name: str, *, workers: int,
                show: bool) -> pd.DataFrame | None:
    """``trajectory`` or ``tool_calls`` of the runs not loaded yet, through the batched path
    (:mod:`.fast`): each such run gets its findings and its slice of the stacked frame (its
    attribute, built on access), as if its own attribute had been read. Returns the stacked
    frame when it holds every run, in order; else None (the caller stacks the runs' frames)."""
    kind = _batch.SIDES[name]
    todo = [r for r in runs if name not in r.__dict__ and (r.path / kind.file).is_file()]
    if not todo or len({(r.include_text, r.cache) for r in runs}) > 1:
        return None
    drop = schema.TEXT_TRAJECTORY_COLUMNS if name == "trajectory" and \
        not todo[0].include_text else ()
    columns = [c for c in kind.catalogue if c not in drop]
    dirs, ids = [r.path for r in todo], [r.run_id for r in todo]
    use_cache = todo[0].cache and parse_cache.batch_usable()
    batch, stamps = stacked_cache.lookup(dirs, columns, kind, ids) if use_cache else (None, None)
    if batch is None:
        read = _map(lambda r: _batch.read_checked(r.path, columns, kind, r.run_id), todo,
                    workers=workers, show=show, label=name)
        table, passed, _ = _batch.stack([c for c in read if c is not None], kind)
        del read
        done = {c.run_dir for c in passed}
        batch = stacked_cache.Batch(table, passed, [i for i, d in enumerate(dirs) if d not in done])
        del table
        if use_cache:
            stacked_cache.store(dirs, columns, batch, stamps, kind, ids)
    if batch.table is None:
        return None
    table, batch.table = batch.table.select(_batch.column_order(batch.checked, kind)), None
    frame = _batch.to_frame(table, kind, destroy=True)
    del table
    _release()
    run_of, starts = {r.path: r for r in todo}, _starts(batch.checked)
    for c in batch.checked:
        run = run_of[c.run_dir]
        run.findings.extend(c.findings)
        run._pending[name] = partial(_batch.part, frame, starts[id(c)], c, kind)
    # the caller's frame is its own (copy on write): editing it never changes a run's slice
    return frame.copy(deep=False) if len(batch.checked) == len(runs) else None


@dataclass
class Runs:
    """Several loaded runs, with their tasks, steps and tool calls stacked.

    Attributes
    ----------
    runs : list of Run
        In the order found (sorted paths for a glob or parent folder).
    skipped : DataFrame
        One row per folder or path not loaded: ``path`` (str), ``reason`` (str: not
        evaluated, does not exist, the load error's first line, duplicate run_id, ...).
    tasks : DataFrame
        ``run.tasks`` of every run stacked (catalogue dtypes; ``run_id`` tells them apart),
        with a fresh RangeIndex. A column absent from a legacy run is missing there.
    trajectory, tool_calls : DataFrame
        Loaded on first access, every run's file at once (each run's own attribute is then
        its slice, with its findings added), and stacked the same way.
    findings : DataFrame
        Every run's findings: ``run_id``, ``severity``, ``file``, ``row``, ``column``,
        ``check``, ``message``.
    """

    runs: list[Run]
    skipped: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=_SKIPPED_COLUMNS))
    workers: int = field(default=1, repr=False)
    progress: bool = field(default=False, repr=False)
    stacked: pd.DataFrame | None = field(default=None, repr=False)  # tasks, if built already

    @cached_property
    def tasks(self) -> pd.DataFrame:
        """Every run's tasks stacked (one row per run and task)."""
        if self.stacked is not None:
            return self.stacked
        return _concat([r.tasks for r in self.runs])

    def _side(self, name: str) -> pd.DataFrame:
        stacked = _side_batch(self.runs, name, workers=self.workers, show=self.progress)
        if stacked is not None:
            return stacked

        def one(run: Run) -> pd.DataFrame:
            frame = getattr(run, name)
            _release()
            return frame

        return _concat(_map(one, self.runs, workers=self.workers, show=self.progress,
                            label=name))

    @cached_property
    def trajectory(self) -> pd.DataFrame:
        """Every run's ``trajectory.csv`` stacked (text columns only with ``include_text``)."""
        return self._side("trajectory")

    @cached_property
    def tool_calls(self) -> pd.DataFrame:
        """Every run's ``tool_calls.csv`` stacked."""
        return self._side("tool_calls")

    @property
    def findings(self) -> pd.DataFrame:
        """Every run's findings, one row each (see :class:`~dabench_analysis.load.Finding`)."""
        rows = [{"run_id": r.run_id, "severity": f.severity, "file": f.file, "row": f.row,
                 "column": f.column, "check": f.check, "message": f.message}
                for r in self.runs for f in r.findings]
        cols = ["run_id", "severity", "file", "row", "column", "check", "message"]
        return pd.DataFrame(rows, columns=cols).astype({"row": "Int64"})

    @property
    def run_ids(self) -> list[str]:
        """The run ids, in order."""
        return [r.run_id for r in self.runs]

    def __len__(self) -> int:
        return len(self.runs)

    def __iter__(self) -> Iterator[Run]:
        return iter(self.runs)

    def __getitem__(self, key: int | str) -> Run:
        if isinstance(key, str):
            for r in self.runs:
                if r.run_id == key:
                    return r
            raise KeyError(f"no run {key!r}; loaded: {', '.join(self.run_ids[:10])}"
                           f"{' ...' if len(self.runs) > 10 else ''}")
        return self.runs[key]

    def __repr__(self) -> str:
        n_tasks = sum(len(r.tasks) for r in self.runs)
        ids = ", ".join(self.run_ids[:3]) + (", ..." if len(self.runs) > 3 else "")
        skip = f", {len(self.skipped)} skipped (see .skipped)" if len(self.skipped) else ""
        return f"<Runs: {len(self.runs)} runs ({ids}), {n_tasks} tasks{skip}>"


def load_runs(
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    columns: Sequence[str] | None = None,
    strict: bool = True,
    include_text: bool = False,
    parallel: bool | int = True,
    progress: bool | None = None,
    cache: bool = True,
    success_threshold: float = schema.SUCCESS_THRESHOLD,
) -> Runs:
    """Load every eval-v2 run of a sweep.

    Parameters
    ----------
    paths : path-like, glob pattern or sequence of path-like
        A list of run directories; a glob string (``"runs/sweep_*"``, or
        ``"runs/*/task_metrics.csv"``: matched files stand for their folder); or one folder,
        which is loaded as a run if it holds ``task_metrics.csv`` and otherwise searched for
        run subfolders (hidden ones ignored).
    columns : sequence of str, optional
        Task columns to load (see :func:`~dabench_analysis.load.load_run`); default all.
    strict : bool
        If True, a run that fails to load (or has an error finding in its task file) raises
        one :class:`RunLoadError` naming every such run. If False, those runs are loaded with
        ``strict=False`` and any that still fail are skipped and listed in ``skipped``.
    include_text : bool
        Keep the heavy free-text trajectory columns (thought, observation, raw_response, ...)
        in :attr:`Runs.trajectory`; default leaves them out (they are most of the bytes).
    parallel : bool or int
        Threads that parse files (pyarrow releases the GIL while parsing). True: min(8, CPU
        cores); a number: that many; False: one.
    progress : bool, optional
        Show a progress bar on stderr. Default: only in a terminal, not inside a notebook.
    cache : bool
        Read and fill the parse cache (:mod:`dabench_analysis.load.cache`); False parses every file.
    success_threshold : float
        The analysis' success threshold in (0, 1], carried by every Run.

    Returns
    -------
    Runs
        The loaded runs in path order, ``tasks`` stacked, and ``skipped`` (path, reason) for
        folders without eval-v2 artifacts, missing paths, repeated folders, duplicate run ids
        (the later one is skipped, with a warning) and, with ``strict=False``, failed runs.

    Raises
    ------
    ValueError
        A glob that matches nothing, an empty string, or ``parallel`` < 1.
    TypeError
        ``paths`` that is neither a path, a pattern nor an iterable of paths; ``columns``
        given as one string.
    RunLoadError
        A single folder that does not exist or is a file; with ``strict=True``, any run that
        cannot be loaded (the message lists each with its reason; ``findings`` has them all).

    Warns
    -----
    UserWarning
        Requested ``columns`` found in no task file; a duplicate run id (the later run is
        skipped); runs loaded with ``strict=False`` that had values rejected.

    Examples
    --------
    >>> runs = load_runs("data/sample_runs", progress=False)
    >>> runs.run_ids, len(runs.tasks)
    (['baseline_react', 'proposed_aat'], 160)
    >>> runs.skipped["reason"].str.startswith("not evaluated").tolist()
    [True]
    """
    columns = requested_columns(columns)
    success_threshold = schema.check_threshold(success_threshold, name="success_threshold")
    dirs, skipped = _candidates(paths)
    workers = _workers(parallel, len(dirs))
    show = _show_progress(progress, len(dirs))
    loaded, stacked = _load_tasks(dirs, columns=columns, strict=strict,
                                  include_text=include_text, cache=cache, workers=workers,
                                  show=show, success_threshold=success_threshold)
    failed = [(d, r) for d, r in zip(dirs, loaded, strict=True) if isinstance(r, Exception)]
    if failed and strict:
        lines = [f"{d}: {str(e).splitlines()[0]}" for d, e in failed]
        found: list[Finding] = [f for _, e in failed for f in getattr(e, "findings", [])]
        raise RunLoadError(f"{len(failed)} of {len(dirs)} run(s) could not be loaded (use "
                           "strict=False to skip them):\n  " + "\n  ".join(lines), found)
    skipped += [(str(d), str(e).splitlines()[0]) for d, e in failed]
    runs, first = [], {}
    for d, r in zip(dirs, loaded, strict=True):
        if isinstance(r, Exception):
            continue
        if r.run_id in first:
            skipped.append((str(d), f"duplicate run_id {r.run_id!r} (kept {first[r.run_id]})"))
            warnings.warn(f"run_id {r.run_id!r} appears in {first[r.run_id]} and {d}; "
                          "skipping the later one (see .skipped)", stacklevel=2)
            continue
        first[r.run_id] = str(d)
        runs.append(r)
    if stacked is not None and len(runs) != len(dirs):
        stacked = None
    if columns is not None:
        have = stacked.columns if stacked is not None else \
            {c for r in runs for c in r.tasks.columns}
        warn_absent(columns, have, "load_runs")
    return Runs(runs, pd.DataFrame(skipped, columns=_SKIPPED_COLUMNS, dtype="string"),
                workers=workers, progress=show, stacked=stacked)


def _load_tasks(dirs: list[Path], *, columns, strict: bool, include_text: bool, cache: bool,
                workers: int, show: bool, success_threshold: float) -> tuple[list[Run | Exception], pd.DataFrame | None]:
    """Every run's tasks: task files through the batched path (:mod:`.fast`), those it leaves
    through :func:`load_run`. Returns the runs (or load errors) in ``dirs`` order and the
    stacked frame when every run took the batched path."""
    kind = _batch.TASKS
    use_cache = cache and parse_cache.batch_usable()
    batch, stamps = stacked_cache.lookup(dirs, columns) if use_cache else (None, None)
    hit = batch is not None  # no file read: the bar shows the replay folders listed
    position = {d: i for i, d in enumerate(dirs)}
    if batch is None:
        read = _map(lambda d: _batch.read_checked(d, columns), dirs, workers=workers,
                    show=show, label="runs")
        table, passed, failed = _batch.stack([c for c in read if c is not None])
        slow = sorted([i for i, c in enumerate(read) if c is None]
                      + [position[c.run_dir] for c in failed])
        batch = stacked_cache.Batch(table, passed, slow)
        if use_cache:
            stacked_cache.store(dirs, columns, batch, stamps)
    loaded: list[Run | Exception | None] = [None] * len(dirs)
    stacked = None
    if batch.table is not None:
        ids, starts = batch.table.column("task_id").cast(pa.string()), _starts(batch.checked)
        paths = _map(lambda c: replay_paths(c.run_dir, ids.slice(starts[id(c)], c.rows)),
                     batch.checked, workers=1, show=show and hit, label="runs")
        table = batch.table.append_column(
            "replay_path", pa.chunked_array([c for p in paths for c in p.chunks], pa.string()))
        frame = _batch.to_frame(table.select(_batch.column_order(batch.checked, kind)))
        for c in batch.checked:
            loaded[position[c.run_dir]] = Run(
                run_id=c.run_id, path=c.run_dir, findings=list(c.findings),
                tasks=partial(_batch.part, frame, starts[id(c)], c, kind),
                include_text=include_text, source_rows=list(range(1, c.rows + 1)),
                task_file=TASK_FILE, cache=cache, success_threshold=success_threshold)
        stacked = frame.copy(deep=False) if not batch.slow else None  # see _side_batch
    kwargs = {"columns": columns, "strict": strict, "include_text": include_text,
              "cache": cache, "success_threshold": success_threshold}
    for i in batch.slow:
        try:
            loaded[i] = load_run(dirs[i], **kwargs)
        except RunLoadError as exc:
            loaded[i] = exc
        finally:
            _release()
    return loaded, stacked
