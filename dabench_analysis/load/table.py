"""Any per-task table (CSV, JSON lines, Parquet) with a column mapping -> runs:
:func:`load_table`.

The mapping names, for catalogue columns, the table's own column (``task_id="sample_id",
final_score="score"``); every other column is kept under its own name. A CSV file goes through
the one CSV reader and the catalogue's rules (the mapping is read as the file's aliases), JSON
lines (each line one JSON object; ``NaN`` and ``Infinity`` refused, naming the line) and
Parquet (pyarrow) through the same rules. A 0/1 or pass/fail outcome column is read as 1.0 /
0.0 (:data:`dabench_analysis.schema.rules.OUTCOME_FLAG_COLUMNS`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType

import pyarrow as pa
import pyarrow.compute as pc

from dabench_analysis import schema
from dabench_analysis.load import pipeline
from dabench_analysis.load.findings import Finding, RunLoadError
from dabench_analysis.load.harness import Record, build_run
from dabench_analysis.load.rules import TEXT
from dabench_analysis.load.run import Run
from dabench_analysis.load.sweep import Runs
from dabench_analysis.schema import TASK_COLUMNS
from dabench_analysis.schema.files import FileKind
from dabench_analysis.schema.rules import NUMBER_KINDS


def check_mapping(mapping: Mapping[str, str]) -> dict[str, str]:
    """``{catalogue column: table column}``, checked: catalogue names and text values.

    Raises
    ------
    ValueError
        A name the catalogue does not know (listing the identification and correctness
        columns), a value that is not a column name, two names mapped from one column.

    Examples
    --------
    >>> check_mapping({"task_id": "sample_id", "final_score": "score"})
    {'task_id': 'sample_id', 'final_score': 'score'}
    """
    out = {}
    for name, source in mapping.items():
        if source is None:
            continue
        if name not in TASK_COLUMNS:
            known = ", ".join([*schema.IDENTIFICATION, "final_score", "total_tokens", "cost",
                               "execution_time"])
            raise ValueError(f"{name!r} is not a catalogue column to map onto (e.g. {known}; "
                             "all: dabench_analysis.schema.TASK_COLUMNS)")
        if not isinstance(source, str) or not source:
            raise ValueError(f"{name}= must name a column of the table, got {source!r}")
        out[name] = source
    twice = {s for s in out.values() if list(out.values()).count(s) > 1}
    if twice:
        raise ValueError(f"column(s) {sorted(twice)} mapped onto more than one catalogue name")
    return out


def _kind(path: Path, mapping: dict[str, str], trials: bool) -> FileKind:
    aliases = {src: dst for dst, src in mapping.items() if src != dst}
    keys = ("task_id", "trial") if trials else ("task_id",)
    return FileKind(path.name, "tasks", MappingProxyType(dict(TASK_COLUMNS)), keys, "error",
                    MappingProxyType(aliases))


def _jsonl(path: Path) -> list[dict]:
    def refuse(token: str):
        raise ValueError(f"{token} is not JSON")

    rows = []
    with open(path, encoding="utf-8", errors="strict") as fh:
        for i, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line, parse_constant=refuse)
            except ValueError as exc:
                raise RunLoadError(f"{path.name}, line {i}: not a JSON object ({exc})",
                                   [Finding("error", path.name, i, None, "json_line",
                                            str(exc))]) from None
            if not isinstance(obj, dict):
                raise RunLoadError(f"{path.name}, line {i}: a JSON {type(obj).__name__}, not "
                                   "an object (one task per line)")
            rows.append(obj)
    return rows


def _normalised(table: pa.Table, mapping: dict[str, str]) -> pa.Table:
    """Columns renamed by the mapping and shaped as the CSV reader gives them (numbers float64
    in number columns, text elsewhere; nested values as JSON)."""
    rename = {src: dst for dst, src in mapping.items()}
    arrays, names = [], []
    for name, col in zip(table.column_names, table.columns, strict=True):
        new = rename.get(name, name)
        spec = TASK_COLUMNS.get(new)
        if spec is not None and spec.kind in NUMBER_KINDS and (
                pa.types.is_integer(col.type) or pa.types.is_floating(col.type)):
            col = pc.cast(col, pa.float64())
        else:
            try:
                col = pc.cast(col, TEXT)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                col = pa.array([None if v is None else json.dumps(v, default=str)
                                for v in col.to_pylist()], TEXT)
        arrays.append(col)
        names.append(new)
    return pa.Table.from_arrays(arrays, names=names)


def _read(path: Path, mapping: dict[str, str]) -> tuple[pa.Table, list[Finding], FileKind]:
    """The whole table, typed by the rules, its findings and kind."""
    trials = "trial" in mapping
    kind = _kind(path, mapping, trials)
    if path.suffix.lower() == ".csv":
        (res,) = pipeline.read_files([path], [kind], cache=False)
        if res.error is not None:
            raise res.error
        return res.table, res.findings, kind
    from dabench_analysis.load.harness import arrow_table, typed

    if path.suffix.lower() in (".jsonl", ".ndjson"):
        rows = _jsonl(path)
        rename = {src: dst for dst, src in mapping.items()}
        raw = arrow_table([{rename.get(k, k): v for k, v in r.items()} for r in rows],
                          TASK_COLUMNS)
    else:
        import pyarrow.parquet as pq

        try:
            raw = _normalised(pq.read_table(path), mapping)
        except (OSError, pa.ArrowException) as exc:
            raise RunLoadError(f"{path}: not a readable Parquet file ({exc})") from None
    missing = [c for c in ("task_id", "final_score") if c not in raw.column_names]
    if missing:
        raise RunLoadError(f"{path.name}: required column(s) {missing} missing",
                           [Finding("error", path.name, None, c, "required_column", "missing")
                            for c in missing])
    table, found = typed(raw, kind, path.name)
    return table, found, kind


def read_table_records(path: Path, mapping: Mapping[str, str]) -> list[Record]:
    """A per-task table as one record per run (one run without a ``run_id`` mapping: named
    after the file), its rows already typed.

    Raises
    ------
    RunLoadError
        Unreadable file, or ``task_id`` / ``final_score`` absent (the message names the
        table's columns and the mapping that would fix it).
    """
    path = Path(path)
    mapping = check_mapping(mapping)
    try:
        table, findings, kind = _read(path, mapping)
    except RunLoadError as exc:
        if any(f.check == "required_column" for f in exc.findings):
            raise RunLoadError(f"{exc.message}; map the table's columns, e.g. load_table(path, "
                               "task_id='<id column>', final_score='<score column>') or "
                               "--map final_score=<score column>", exc.findings) from None
        raise
    if "run_id" not in table.column_names:
        return [Record(path.stem, [], findings=findings, table=table, kind=kind)]
    ids = table.column("run_id")
    if ids.null_count:
        findings.append(Finding("info", path.name, None, "run_id", "required_value",
                                f"{ids.null_count} row(s) without a run_id: filled with "
                                f"{path.stem!r}"))
        table = pipeline.fill_run_id(table, path.stem)
    out = []
    for rid in pc.unique(table.column("run_id")).to_pylist():
        part = table.filter(pc.equal(table.column("run_id"), rid))
        own = [f for f in findings if f.column != "run_id"] if out else findings
        out.append(Record(str(rid), [], findings=list(own), table=part, kind=kind))
    return out


def load_table(path: str | os.PathLike[str], *, task_id: str = "task_id",
               final_score: str = "final_score", run_id: str | None = None,
               trial: str | None = None, strict: bool = True, include_text: bool = False,
               success_threshold: float = schema.SUCCESS_THRESHOLD,
               **columns: str) -> Run | Runs:
    """Runs from any per-task table, with a column mapping: the one-line start for any harness.

    Parameters
    ----------
    path : path-like
        A CSV, JSON lines (``.jsonl``, ``.ndjson``) or Parquet file, one row per task (and
        trial).
    task_id, final_score : str
        The table's columns holding the task id and the score in [0, 1] (a 0/1, true/false
        or pass/fail column is read as 1.0 / 0.0).
    run_id : str, optional
        A column naming the run of each row: one run per value (a :class:`Runs`).
    trial : str, optional
        A column numbering repeated trials of a task (pass@k, pass^k).
    strict, include_text, success_threshold
        As :func:`dabench_analysis.load_run`.
    **columns : str
        More catalogue columns and the table's names for them (``total_tokens="tokens"``,
        ``cost="usd"``, ``difficulty="level"``).

    Returns
    -------
    Run or Runs
        A Run named after the file; with ``run_id``, a Runs of one run per value.

    Raises
    ------
    RunLoadError
        The file cannot be read; ``task_id`` or ``final_score`` not in it (naming the
        mapping to give); with ``strict``, any error finding (named by file, row, column).
    ValueError
        A name the catalogue does not know, or a success threshold outside (0, 1].

    Examples
    --------
    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "results.csv"
    >>> _ = p.write_text("sample_id,passed,tokens\\nq1,pass,120\\nq2,fail,80\\n")
    >>> run = load_table(p, task_id="sample_id", final_score="passed", total_tokens="tokens")
    >>> run.run_id, run.tasks["final_score"].tolist(), str(run.tasks["total_tokens"].dtype)
    ('results', [1.0, 0.0], 'Int64')
    """
    success_threshold = schema.check_threshold(success_threshold, name="success_threshold")
    mapping = {"task_id": task_id, "final_score": final_score, "run_id": run_id,
               "trial": trial, **columns}
    path = Path(path)
    runs = [build_run(path, rec, "table", strict=strict, include_text=include_text,
                      success_threshold=success_threshold)
            for rec in read_table_records(path, mapping)]
    return Runs(runs) if run_id is not None else runs[0]
