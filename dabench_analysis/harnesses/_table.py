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
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType

import pyarrow as pa
import pyarrow.compute as pc

from dabench_analysis import schema
from dabench_analysis.load import _pipeline as pipeline
from dabench_analysis.load._findings import Finding, RunLoadError
from dabench_analysis.load._harness import Record, build_run
from dabench_analysis.load._header import TEXT, read_header
from dabench_analysis.load._rules import decimal_float64
from dabench_analysis.load._run import Run
from dabench_analysis.load._sweep import Runs
from dabench_analysis.load._threshold import refuse_threshold
from dabench_analysis.schema import TASK_COLUMNS
from dabench_analysis.schema._files import FileKind
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
            known = ", ".join([*schema.columns.IDENTIFICATION, "final_score", "total_tokens", "cost",
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


#: Catalogue columns a table must hold (the mapping's defaults name them as they are).
_ESSENTIAL = ("task_id", "final_score")
#: How many of a table's columns an error lists.
_LISTED = 30


def mapped_columns(columns: Sequence[str], mapping: Mapping[str, str],
                   file: str) -> tuple[dict[str, str], list[Finding]]:
    """The renames a mapping makes of a table's columns, checked against them.

    Parameters
    ----------
    columns : sequence of str
        The table's own column names.
    mapping : mapping of str to str
        Catalogue column -> the table's column (:func:`check_mapping`).
    file : str
        The file's name, as findings give it.

    Returns
    -------
    rename : dict of str to str
        The table's column -> its name in the run's frame. The mapping always wins: a column
        of the table named like a mapped catalogue column (``final_score`` beside
        ``final_score="score"``) is kept as text under ``<name>_shadowed``.
    findings : list of Finding
        A warning (check ``mapped_column_shadowed``) naming each column so shadowed.

    Raises
    ------
    RunLoadError
        A mapped column the table does not have (check ``mapped_column``: the message names
        the file, the column and the columns it has). A table without ``task_id`` or
        ``final_score`` that maps neither is left to the required-column check.

    Examples
    --------
    >>> rename, found = mapped_columns(["id", "score", "final_score"],
    ...                                {"task_id": "id", "final_score": "score"}, "r.jsonl")
    >>> rename
    {'id': 'task_id', 'score': 'final_score', 'final_score': 'final_score_shadowed'}
    >>> print(found[0])  # doctest: +ELLIPSIS
    warning: r.jsonl, column 'final_score': the file's own column 'final_score' is shadowed ...
    """
    have = list(dict.fromkeys(columns))
    missing = [(dst, src) for dst, src in mapping.items()
               if src not in have and (src != dst or dst not in _ESSENTIAL)]
    if missing:
        listed = ", ".join(have[:_LISTED]) + (" ..." if len(have) > _LISTED else "")
        raise RunLoadError(
            f"{file}: mapped column(s) {', '.join(repr(s) for _, s in missing)} not in the "
            f"file; its columns: {listed or '(none)'}",
            [Finding("error", file, None, src, "mapped_column",
                     f"{dst}={src!r}: no column {src!r} in the file") for dst, src in missing])
    rename = {src: dst for dst, src in mapping.items() if src != dst}
    found = []
    for dst, src in mapping.items():
        if src == dst or dst not in have or dst in rename:
            continue
        shadow = f"{dst}_shadowed"
        while shadow in have or shadow in rename.values():
            shadow += "_"
        rename[dst] = shadow
        found.append(Finding("warning", file, None, dst, "mapped_column_shadowed",
                             f"the file's own column {dst!r} is shadowed by the mapping "
                             f"{dst}={src!r}: {src!r} is read as {dst}, {dst!r} is kept as "
                             f"text under {shadow!r}"))
    return rename, found


def _kind(path: Path, rename: dict[str, str], names: Sequence[str]) -> FileKind:
    """The table as a task file: the rename as its aliases; one key per run and trial."""
    keys = tuple(k for k in ("run_id", "task_id", "trial") if k in names or k == "task_id")
    return FileKind(path.name, "tasks", MappingProxyType(dict(TASK_COLUMNS)), keys, "error",
                    MappingProxyType(rename))


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
    if not rows:
        raise RunLoadError(f"{path}: 0 task rows (no JSON object in the file)",
                           [Finding("warning", path.name, None, None, "no_rows",
                                    "0 task rows: no JSON object in the file")])
    return rows


def _normalised(table: pa.Table, rename: dict[str, str]) -> pa.Table:
    """Columns renamed and shaped as the CSV reader gives them (numbers in number columns:
    whole numbers float64, or text when float64 would round one; float32 as it is, which the
    rules widen by its shortest repr; text elsewhere; nested values as JSON)."""
    arrays, names = [], []
    for name, col in zip(table.column_names, table.columns, strict=True):
        new = rename.get(name, name)
        spec = TASK_COLUMNS.get(new)
        number = spec is not None and spec.kind in NUMBER_KINDS
        if number and pa.types.is_floating(col.type):
            pass
        elif number and pa.types.is_integer(col.type):
            try:
                col = pc.cast(col, pa.float64())  # a safe cast: refuses a value it would round
            except pa.ArrowInvalid:
                col = pc.cast(col, TEXT)  # the rules report that value, as written
        else:
            try:
                col = pc.cast(decimal_float64(col), TEXT)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                col = pa.array([None if v is None else json.dumps(v, default=str)
                                for v in col.to_pylist()], TEXT)
        arrays.append(col)
        names.append(new)
    return pa.Table.from_arrays(arrays, names=names)


def _read_csv(path: Path, mapping: dict[str, str]):
    """A CSV table through the one CSV reader, the mapping as the file's aliases."""
    header = [h.strip() for h in read_header(path)]
    rename, found = mapped_columns(header, mapping, path.name)
    kind = _kind(path, rename, [rename.get(h, h) for h in header])
    (res,) = pipeline.read_files([path], [kind], cache=False)
    if res.error is not None:
        raise res.error
    shadowed = {f.column for f in found}  # said once, by the shadowing warning
    own = [f for f in res.findings if f.column not in shadowed
           or f.check not in ("column_alias", "unknown_column")]
    own = [replace(f, message=f"read as {rename[f.column]!r} (the mapping "
                              f"{rename[f.column]}={f.column!r})")
           if f.check == "column_alias" and f.column in rename else f for f in own]
    return res.table, res.rows, [*found, *own], kind


def _read(path: Path, mapping: dict[str, str]):
    """The whole table typed by the rules: ``(table, rows, findings, kind)``, ``rows`` the
    1-based row (record) of the file of each row kept."""
    if path.suffix.lower() == ".csv":
        return _read_csv(path, mapping)
    from dabench_analysis.load._harness import arrow_table, typed

    if path.suffix.lower() in (".jsonl", ".ndjson"):
        rows = _jsonl(path)
        rename, found = mapped_columns(list(dict.fromkeys(k for r in rows for k in r)),
                                       mapping, path.name)
        raw = arrow_table([{rename.get(k, k): v for k, v in r.items()} for r in rows],
                          TASK_COLUMNS)
    else:
        import pyarrow.parquet as pq

        try:
            rename, found = mapped_columns(pq.read_schema(path).names, mapping, path.name)
            raw = _normalised(pq.read_table(path), rename)
        except (OSError, pa.ArrowException) as exc:
            raise RunLoadError(f"{path}: not a readable Parquet file ({exc})") from None
    missing = [c for c in _ESSENTIAL if c not in raw.column_names]
    if missing:
        raise RunLoadError(f"{path.name}: required column(s) {missing} missing",
                           [Finding("error", path.name, None, c, "required_column", "missing")
                            for c in missing])
    kind = _kind(path, rename, raw.column_names)
    table, typed_found, kept = typed(raw, kind, path.name, rows=True)
    return table, kept, [*found, *typed_found], kind


def _own(findings: list[Finding], rows: set[int], first: bool) -> list[Finding]:
    """The findings of one run of a table: those of its rows, and those of the whole file
    (the ``run_id`` column's own with the first run only)."""
    return [f for f in findings if (rows.intersection(f.rows) if f.rows else
                                    first or f.column != "run_id")]


def read_table_records(path: Path, mapping: Mapping[str, str]) -> list[Record]:
    """A per-task table as one record per run (one run without a ``run_id`` column: named
    after the file), its rows already typed.

    Raises
    ------
    RunLoadError
        Unreadable file; a mapped column not in it (check ``mapped_column``); ``task_id`` /
        ``final_score`` absent (the message names the table's columns and the mapping that
        would fix it); no row at all (check ``no_rows``).
    """
    path = Path(path)
    mapping = check_mapping(mapping)
    try:
        table, rows, findings, kind = _read(path, mapping)
    except RunLoadError as exc:
        if any(f.check == "required_column" for f in exc.findings):
            raise RunLoadError(f"{exc.message}; map the table's columns, e.g. load_table(path, "
                               "task_id='<id column>', final_score='<score column>') or "
                               "--map final_score=<score column>", exc.findings) from None
        raise
    if "run_id" not in table.column_names or table.num_rows == 0:
        return [Record(path.stem, [], findings=findings, table=table, kind=kind,
                       rows=rows.tolist())]
    ids = table.column("run_id")
    if ids.null_count:
        findings.append(Finding("info", path.name, None, "run_id", "required_value",
                                f"{ids.null_count} row(s) without a run_id: filled with "
                                f"{path.stem!r}"))
        table = pipeline.fill_run_id(table, path.stem)
    out = []
    for rid in pc.unique(table.column("run_id")).to_pylist():
        mask = pc.equal(table.column("run_id"), rid)
        part = rows[mask.to_numpy(zero_copy_only=False)]
        out.append(Record(str(rid), [], findings=_own(findings, set(part.tolist()), not out),
                          table=table.filter(mask), kind=kind, rows=part.tolist()))
    return out


def load_table(path: str | os.PathLike[str], *, task_id: str = "task_id",
               final_score: str = "final_score", run_id: str | None = None,
               trial: str | None = None, strict: bool = True, include_text: bool = False,
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
    strict, include_text
        As :func:`dabench_analysis.load_run`.
    **columns : str
        More catalogue columns and the table's names for them (``total_tokens="tokens"``,
        ``cost="usd"``, ``difficulty="level"``).

    Returns
    -------
    Run or Runs
        A Run named after the file; with ``run_id`` (or a ``run_id`` column of several
        values), a Runs of one run per value, in order of first appearance, each with the
        findings of its own rows (a repeated task_id is a repeat within one run).

    Raises
    ------
    RunLoadError
        The file cannot be read; a mapped column not in it (naming the file, the column and
        the columns it has; check ``mapped_column``); ``task_id`` or ``final_score`` not in
        it (naming the mapping to give); 0 task rows (check ``no_rows``); with ``strict``,
        any error finding (named by file, row, column).
    ValueError
        A name the catalogue does not know.
    TypeError
        ``success_threshold=`` (removed: the threshold is the analysis' ``threshold=``).

    Notes
    -----
    The mapping always wins: a column of the file named like a mapped catalogue column is
    kept as text under ``<name>_shadowed``, with a warning finding
    (:func:`mapped_columns`). Float32 scores are read by their shortest decimal repr (0.7,
    not 0.699999988; :func:`dabench_analysis.load._rules.decimal_float64`).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "results.csv"
    >>> _ = p.write_text("sample_id,passed,tokens\\nq1,pass,120\\nq2,fail,80\\n")
    >>> run = load_table(p, task_id="sample_id", final_score="passed", total_tokens="tokens")
    >>> run.run_id, run.tasks["final_score"].tolist(), str(run.tasks["total_tokens"].dtype)
    ('results', [1.0, 0.0], 'Int64')
    >>> _ = p.write_text("id,model,ok\\nq1,a,1\\nq2,a,0\\nq1,b,1\\nq2,b,1\\n")
    >>> runs = load_table(p, task_id="id", final_score="ok", run_id="model")
    >>> runs.run_ids, [float(r.tasks["final_score"].mean()) for r in runs]
    (['a', 'b'], [0.5, 1.0])
    """
    refuse_threshold("load_table", {k: v for k, v in columns.items()
                                    if k in ("success_threshold", "threshold")})
    mapping = {"task_id": task_id, "final_score": final_score, "run_id": run_id,
               "trial": trial, **columns}
    path = Path(path)
    runs = [build_run(path, rec, "table", strict=strict, include_text=include_text)
            for rec in read_table_records(path, mapping)]
    return Runs(runs) if run_id is not None or len(runs) > 1 else runs[0]
