"""``task_*/task_replay.json``: bounded, JSON-only reading and the path of each task's replay
(one directory listing per run; files are opened only when read, and never outside the run).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from dabench_analysis.load import cache as parse_cache
from dabench_analysis.load._findings import RunLoadError
from dabench_analysis.schema._files import REPLAY_FILE
from dabench_analysis.schema.numbers import format_estimate

#: Largest task_replay.json parsed (bytes).
MAX_REPLAY_BYTES = 256 << 20


class Replay(dict):
    """A parsed ``task_replay.json``: the JSON object as a dict, shown in one line.

    Everything a dict does (``replay["evaluation_result"]``, ``json.dumps(replay)``); only the
    text representation is short, so that a notebook cell or a print does not fill screens
    with the snapshot (``dict(replay)`` or ``json.dumps(replay, indent=1)`` shows it all; in
    JupyterLab the report layer's HTML display shows its parts).

    Examples
    --------
    >>> Replay({"task_id": "task_1", "outcome_status": "failed", "tool_calls": [{}, {}],
    ...         "evaluation_result": {"final_score": 0.25},
    ...         "failure_attribution": {"failure_category": "TOOL_EXECUTION_FAILURE"}})
    <Replay task_1: failed, final_score 0.250, 2 tool calls, failure TOOL_EXECUTION_FAILURE>
    """

    def __repr__(self) -> str:
        score = (self.get("evaluation_result") or {}).get("final_score") \
            if isinstance(self.get("evaluation_result"), dict) else None
        calls = self.get("tool_calls")
        fa = self.get("failure_attribution")
        parts = [str(self.get("outcome_status") or "no outcome_status"),
                 f"final_score {format_estimate(score)}" if isinstance(score, int | float) else "no score",
                 f"{len(calls)} tool calls" if isinstance(calls, list) else "no tool calls",
                 f"failure {fa.get('failure_category')}" if isinstance(fa, dict)
                 else "no failure attribution"]
        return f"<Replay {self.get('task_id', '?')}: {', '.join(parts)}>"


def read_replay(path: str | os.PathLike[str], *, stamped: bool = False
                ) -> Replay | tuple[Replay, dict]:
    """Parse one ``task_replay.json`` with :func:`json.loads` (data only, never executed).

    Parameters
    ----------
    path : path-like
    stamped : bool
        Also return the stamp of the bytes parsed (:func:`dabench_analysis.load.cache.stamp`),
        which a :class:`~dabench_analysis.load.Run` keeps for the report's manifest.

    Returns
    -------
    Replay
        The JSON object (a dict with a one-line text representation); with ``stamped``, a
        tuple of it and the stamp.

    Raises
    ------
    RunLoadError
        If the file is unreadable, larger than 256 MiB, empty, not valid JSON (names line and
        column), nested too deeply, or not a JSON object.

    Examples
    --------
    >>> read_replay("data/sample_runs/baseline_react/task_1/task_replay.json")["task_id"]
    'task_1'
    """
    path = Path(path)
    where = f"{path.parent.name}/{path.name}"
    try:
        if path.stat().st_size > MAX_REPLAY_BYTES:
            raise RunLoadError(f"{where}: larger than {MAX_REPLAY_BYTES >> 20} MiB; not parsed")
        raw = path.read_bytes()
        text = raw.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RunLoadError(f"{where}: cannot read ({exc})") from None
    if not text.strip():
        raise RunLoadError(f"{where}: file is empty")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RunLoadError(f"{where}: not valid JSON at line {exc.lineno}, column {exc.colno}: "
                           f"{exc.msg}") from None
    except RecursionError:
        raise RunLoadError(f"{where}: JSON nested too deeply") from None
    if not isinstance(data, dict):
        raise RunLoadError(f"{where}: expected a JSON object, got {type(data).__name__}")
    return (Replay(data), parse_cache.stamp(path, raw)) if stamped else Replay(data)


def plain_name(task_id: object) -> bool:
    """Whether a task id can name a folder: no separators, not '.' or '..', no NUL."""
    t = str(task_id)
    return not (task_id is pd.NA or t in ("", ".", "..") or any(c in t for c in "/\\\x00"))


def replay_folders(run_dir: Path) -> list[str]:
    """The entries of ``run_dir`` that may be a task's folder: every name in the listing
    (``os.listdir``: plain, never ``.``, ``..`` or with a separator) without a backslash.

    Whether the entry is a folder holding the file, and whether a symlink on the way stays
    inside ``run_dir``, is checked when the replay is read (:func:`replay_file`); the listing
    itself costs ~0.1 ms per 500 entries, a ``scandir`` with a type check per entry twice that.
    """
    try:
        return [n for n in os.listdir(run_dir) if "\\" not in n]
    except OSError:
        return []


def replay_paths(run_dirs: Sequence[Path], task_ids, sizes: Sequence[int],
                 folders: Sequence[list[str]] | None = None) -> pa.ChunkedArray:
    """Where each task's ``task_replay.json`` is, for the tasks of several runs stacked:
    ``run_dir/<task_id>/task_replay.json`` for every task id that names a folder of its run's
    ``run_dir``, else null.

    One directory listing per run (:func:`replay_folders`) and vectorised Arrow lookups over
    all runs at once, no stat per task: 100,000 tasks cost ~0.05 s instead of ~0.3 s with one
    ``os.path.isfile`` each (``bench/run_bench.py``). Whether the file exists, and stays
    inside ``run_dir`` (a task folder may be a symlink), is checked when it is read
    (:func:`replay_file`).

    Parameters
    ----------
    run_dirs : sequence of Path
        The runs, in stacking order.
    task_ids : pyarrow array or sequence of str (None / pd.NA for a missing id)
        Every run's task ids, stacked.
    sizes : sequence of int
        The number of task ids of each run.
    folders : sequence of list of str, optional
        :func:`replay_folders` of each run, if already listed.

    Returns
    -------
    pyarrow.ChunkedArray of string, one per task id.

    Examples
    --------
    >>> d = Path("data/sample_runs/baseline_react")
    >>> replay_paths([d, d], ["task_1", "task_x", "task_2"], [2, 1]).to_pylist()[:2]
    ['data/sample_runs/baseline_react/task_1/task_replay.json', None]
    """
    if not isinstance(task_ids, (pa.Array, pa.ChunkedArray)):
        task_ids = pa.array([None if t is None or t is pd.NA else str(t) for t in task_ids],
                            pa.string())
    if folders is None:
        folders = [replay_folders(d) for d in run_dirs]
    run = np.repeat(np.arange(len(sizes), dtype=np.int32), sizes)
    # a task id is looked up among its own run's folders: "<run>\0<name>" (no name holds NUL)
    task_ids = pc.cast(task_ids, pa.string())
    keys = pc.binary_join_element_wise(pc.cast(pa.array(run), pa.string()), task_ids, "\0")
    names = pa.array([f"{i}\0{n}" for i, names in enumerate(folders) for n in names],
                     pa.string())
    bases = pc.take(pa.array([os.fspath(d) for d in run_dirs], pa.string()), pa.array(run))
    paths = pc.binary_join_element_wise(bases, task_ids, REPLAY_FILE, os.sep)
    found = pc.is_in(keys, value_set=names)
    out = pc.if_else(found, paths, pa.scalar(None, pa.string()))
    return out if isinstance(out, pa.ChunkedArray) else pa.chunked_array([out], pa.string())


def _inside(path: Path, run_dir: Path) -> bool:
    try:
        return path.resolve().is_relative_to(run_dir.resolve())
    except (OSError, RuntimeError, ValueError):
        return False


def replay_file(run_dir: Path, path: str | os.PathLike[str]) -> Path | None:
    """The replay at ``path`` if it is a file that resolves inside ``run_dir``; None if there is
    no such file.

    Raises
    ------
    RunLoadError
        If the file (or a link on its way) leads outside the run directory.
    """
    p = Path(path)
    if not p.is_file():
        return None
    if not _inside(p, Path(run_dir)):
        raise RunLoadError(f"{p.parent.name}/{p.name}: leads outside the run directory "
                           f"{run_dir}; not read")
    return p


class RunReplays(Mapping[str, Replay]):
    """task_id -> parsed replay of one run (``Run.replays``).

    Lists the tasks whose replay file exists (one stat each), reads a file on access. The
    last :data:`KEPT` replays read are kept; every read is stamped through ``record`` (the
    run's ``inputs``: a file that changed between two reads is an error).

    Parameters
    ----------
    run_dir : Path
        The run directory (a replay path outside it is never read).
    paths : iterable of (task_id, path)
        The task table's ``replay_path`` column, missing values left out.
    record : callable
        ``record(key, stamp)``, called after each read with ``<task_id>/task_replay.json``.
    """

    #: Parsed replays kept in memory (a validation reads every replay of a run once).
    KEPT = 256

    def __init__(self, run_dir: Path, paths: Iterable[tuple[object, object]],
                 record: Callable[[str, dict | None], None]):
        self._paths = {str(k): Path(v) for k, v in paths if os.path.isfile(v)}
        self._run_dir, self._record = run_dir, record
        self._cache: dict[str, Replay] = {}

    def __getitem__(self, task_id: str) -> Replay:
        if task_id not in self._paths:
            raise KeyError(f"no {REPLAY_FILE} for task {task_id!r}")
        if task_id not in self._cache:
            path = replay_file(self._run_dir, self._paths[task_id])
            if path is None:
                raise KeyError(f"no {REPLAY_FILE} for task {task_id!r} (removed?)")
            data, stamp = read_replay(path, stamped=True)
            self._record(f"{task_id}/{REPLAY_FILE}", stamp)
            if len(self._cache) >= self.KEPT:
                del self._cache[next(iter(self._cache))]
            self._cache[task_id] = data
        return self._cache[task_id]

    def __contains__(self, task_id: object) -> bool:
        return task_id in self._paths  # without reading (a corrupt file raises when read)

    def __iter__(self) -> Iterator[str]:
        return iter(self._paths)

    def __len__(self) -> int:
        return len(self._paths)

    def __repr__(self) -> str:
        return (f"<replays of {self._run_dir.name!r}: {len(self._paths)} {REPLAY_FILE} files, "
                "each read when asked for: run.replay(task_id)>")
