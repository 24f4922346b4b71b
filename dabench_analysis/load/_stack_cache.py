"""One parse-cache entry for a whole sweep's tasks: what :func:`~dabench_analysis.load.load_runs`
built from every run's task file (the stacked Arrow table before ``to_pandas``, each run's id,
columns, data-row numbers, findings and input stamp), served when none of the files and folders
it was built from has changed.

A hit of the per-file entries (:mod:`.cache`) still costs, per run, opening an entry, listing the
task folders (``replay_path``) and stacking the tables; this entry costs a ``stat`` of each run
folder, task file and legacy task file, and one read of the entry. It is trusted by the rules of
:mod:`.cache`: the entry's own checksum, the request (the folders as given and as absolute
paths, the columns, ``strict``, the toolkit and the sources of the loader), and the stamps
(:func:`.cache.file_stamp`) of every folder and file taken before they were read, none of them
racily clean (:func:`.cache.racily_clean`). A folder's stamp changes when an entry is added to,
removed from or renamed in it (a task folder, a task file written by rename); a file's when it
is written. Anything else is a miss: the sweep is loaded file by file (through the per-file
entries) and this entry rewritten.

Only a sweep whose every run loaded without a warning of the loader is stored (no legacy-only
run, no error finding), so that a hit says and warns exactly what a first load does.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa

from dabench_analysis.load import cache as parse_cache
from dabench_analysis.load._findings import Finding
from dabench_analysis.schema._files import LEGACY_TASK_FILE, TASK_FILE

_ROWS = "__dabench_source_row__"  # each run's data-row numbers, in the entry only
#: Sources of what the entry holds beyond the per-file entries (their own are in the toolkit's).
_SOURCES = ("_loader.py", "_replay.py", "_task_files.py", "_folders.py", "_stack_cache.py")


@dataclasses.dataclass
class Part:
    """One run's share of the stacked task table: ``run_id``, its own columns ``own`` (in
    order), ``rows`` (1-based data row in the task file of each of its ``n`` rows),
    ``findings``, ``task_file`` (the file's name) and ``stamp`` (``path``, ``size``,
    ``mtime_ns``, ``digest`` of the bytes parsed: the Run's ``inputs``)."""

    run_id: str
    own: list[str]
    rows: np.ndarray
    findings: list[Finding]
    task_file: str
    stamp: dict

    @property
    def n(self) -> int:
        """Rows of the run."""
        return len(self.rows)


@functools.cache
def _fingerprint() -> str:
    return (f"{parse_cache.toolkit_fingerprint()} loader "
            f"{parse_cache._sources_digest(_SOURCES)}")


def _stamp(path: str) -> dict | None:
    try:
        return parse_cache.file_stamp(os.stat(path))
    except OSError:
        return None


class Sweep:
    """The sweep entry of loading ``dirs`` with ``columns`` and ``strict``: stamps every run
    folder and its task files when made (before anything is read), then :meth:`lookup` or
    :meth:`store`.

    Parameters
    ----------
    dirs : sequence of Path
        The run folders, as :func:`~dabench_analysis.load.load_runs` will give them to the Runs.
    columns : list of str or None
        Task columns requested.
    strict : bool
        As ``load_runs``.
    root : Path
        The cache directory (:func:`.cache.usable`).
    """

    def __init__(self, dirs: Sequence[Path], columns: list[str] | None, strict: bool,
                 root: Path) -> None:
        self.root = root
        self.request = {"kind": "sweep", "columns": columns, "strict": bool(strict),
                        "dirs": [[os.fspath(d), os.path.abspath(d)] for d in dirs],
                        "toolkit": _fingerprint()}
        self.read_ns = time.time_ns()
        self.stamps = [[_stamp(os.fspath(d)), _stamp(os.path.join(d, TASK_FILE)),
                        _stamp(os.path.join(d, LEGACY_TASK_FILE))] for d in dirs]

    def lookup(self) -> tuple[pa.Table, list[Part]] | None:
        """The stacked table and each run's part, if the entry's checksum and request hold and
        every stamp is the one recorded and was not racily clean; else None."""
        found = parse_cache.read_entry(self.root, self.request)
        if found is None:
            return None
        table, meta = found
        try:
            was, read_ns = meta["stamps"], int(meta["read_ns"])
            if was != self.stamps or any(s is not None and parse_cache.racily_clean(s, read_ns)
                                         for run in was for s in run):
                return None
            rows = table.column(_ROWS).to_numpy()
            table = table.drop_columns([_ROWS])
            parts, start = [], 0
            for p in meta["runs"]:
                n = int(p["n"])
                parts.append(Part(p["run_id"], list(p["own"]), rows[start:start + n],
                                  [Finding(**{**f, "rows": tuple(f["rows"])})
                                   for f in p["findings"]], p["task_file"], dict(p["stamp"])))
                start += n
        except (KeyError, TypeError, ValueError, pa.ArrowException):
            return None  # an entry of another layout: a miss
        if start != table.num_rows:
            return None
        return table, parts

    def store(self, table: pa.Table, parts: Sequence[Part]) -> None:
        """Write the entry: ``table`` (the stacked task table) and ``parts``, with the stamps
        taken when this object was made."""
        rows = np.concatenate([np.asarray(p.rows, dtype=np.int64) for p in parts]) \
            if parts else np.zeros(0, dtype=np.int64)
        runs = [{"run_id": p.run_id, "own": p.own, "n": p.n, "task_file": p.task_file,
                 "stamp": p.stamp, "findings": [dataclasses.asdict(f) for f in p.findings]}
                for p in parts]
        # one record batch: a hit converts one chunk per column, not one per run (0.44 s ->
        # 0.16 s for 120 runs x 400 tasks under load)
        table = table.append_column(_ROWS, pa.array(rows, pa.int64())).combine_chunks()
        parse_cache.write_entry(self.root, self.request, table,
                                {"stamps": self.stamps, "read_ns": self.read_ns, "runs": runs})
