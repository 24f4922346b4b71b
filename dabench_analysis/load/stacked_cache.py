"""The stacked sweep in the parse cache: one Arrow IPC entry per sweep of task files,
``trajectory.csv`` or ``tool_calls.csv`` (:mod:`.fast`), keyed by every file's stamp (path,
size, mtime, digest), with each run's rows, columns and findings in its metadata."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from dabench_analysis._atomic import atomic_write
from dabench_analysis.load import cache as parse_cache
from dabench_analysis.load.fast import TASKS, Checked, Kind
from dabench_analysis.load.findings import Finding

_META = b"dabench.batch"


@dataclass
class Batch:
    """The checked part of a sweep: the stacked table and its runs, and which runs were not."""

    table: pa.Table | None  # converted, the runs of ``checked`` in order
    checked: list[Checked]
    slow: list[int]  # positions (in the directory list) of runs that need the per-file path


def lookup(run_dirs: Sequence[Path], columns: Sequence[str] | None, kind: Kind = TASKS,
           run_ids: list | None = None) -> tuple[Batch | None, list | None]:
    """The cached batch of these run directories if every file is unchanged.

    Returns ``(batch or None, stamps)``; the stamps (None if a file cannot be stat'ed or
    read, e.g. a legacy run) are taken before any parsing, for :func:`store`. ``run_ids``
    (side files: the runs' ids, which fill their run_id column) are part of the key.
    """
    files = [Path(d).absolute() / kind.file for d in run_dirs]
    stamps = parse_cache.batch_stamps(files)
    if stamps is None:
        return None, None
    try:
        with pa.memory_map(str(parse_cache.batch_entry(files, columns, run_ids))) as source:
            reader = pa.ipc.open_file(source)
            meta = json.loads(reader.schema.metadata[_META])
            if meta["stamps"] != stamps:
                return None, stamps
            table = reader.read_all().replace_schema_metadata(None)
        checked = []
        for run in meta["runs"]:
            found = [Finding(**{**f, "rows": tuple(f["rows"])}) for f in run["findings"]]
            checked.append(Checked(Path(run_dirs[run["position"]]), run["run_id"], None, [], {},
                                   findings=found, rows=run["rows"], columns=run["columns"]))
        if sum(c.rows for c in checked) != table.num_rows:
            return None, stamps
    except (OSError, KeyError, ValueError, TypeError, IndexError, pa.ArrowException):
        return None, stamps  # unreadable, foreign or older entry: a miss
    return Batch(table if checked else None, checked, meta["slow"]), stamps


def store(run_dirs: Sequence[Path], columns: Sequence[str] | None, batch: Batch,
          stamps: list | None, kind: Kind = TASKS, run_ids: list | None = None) -> None:
    """Write the batch as one Arrow IPC file, atomically. Skipped when a file changed while it
    was parsed or cannot be stamped; a cache that cannot be written is skipped silently (the
    per-file cache warns about it)."""
    files = [Path(d).absolute() / kind.file for d in run_dirs]
    if stamps is None or parse_cache.batch_stamps(files) != stamps:
        return
    position = {Path(d): i for i, d in enumerate(run_dirs)}
    meta = {"stamps": stamps, "slow": batch.slow,
            "runs": [{"position": position[c.run_dir], "run_id": c.run_id, "rows": c.rows,
                      "columns": c.columns, "findings": [dataclasses.asdict(f) for f in c.findings]}
                     for c in batch.checked]}
    table = (batch.table if batch.table is not None else pa.table({})) \
        .replace_schema_metadata({_META: json.dumps(meta).encode()})
    try:
        with atomic_write(parse_cache.batch_entry(files, columns, run_ids), mode="wb", fsync=False) as fh, \
                pa.ipc.new_file(fh, table.schema) as writer:
            writer.write_table(table)
    except (OSError, pa.ArrowException):
        return
