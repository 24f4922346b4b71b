"""Which harness wrote a path: :func:`detect_format` looks at the content (a folder is an eval-v2
run, unless a registered folder format claims it), and :func:`read_records` calls the reader
of that format. The formats of other harnesses are registered with :mod:`._readers` by the
folder that reads them (:mod:`dabench_analysis.harnesses`: Inspect logs, tau-bench, ATIF,
SWE-agent trajectories, group chats, per-task tables); this module imports none of them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from dabench_analysis.load import _readers as readers
from dabench_analysis.load._findings import RunLoadError

_HEAD = 1 << 16


def harness_folder(path: Path) -> str | None:
    """The format of a folder of another harness's files, or None (an eval-v2 run folder, one
    holding a task file, or a folder of runs): ``swe-agent`` when it holds ``*.traj.json`` /
    ``*.traj`` files (up to three levels down), ``groupchat`` when its own ``*.json`` files are group
    chats with a ``history`` (the first one is looked at).

    Examples
    --------
    >>> harness_folder(Path("tests/data/harness/mini-swe-agent"))
    'swe-agent'
    >>> harness_folder(Path("tests/data/harness/whowhen/Hand-Crafted"))
    'groupchat'
    >>> harness_folder(Path("data/sample_runs/baseline_react")) is None
    True
    """
    from dabench_analysis.load._folders import task_file

    if not path.is_dir() or task_file(path) is not None:
        return None
    return readers.sniff_folder(path)


def eval_folder(path: Path, fmt: str | None = None) -> bool:
    """Whether ``path`` is read as an eval-v2 run folder: a folder, not of a folder format
    (``fmt`` given, or :func:`harness_folder`)."""
    if not path.is_dir():
        return False
    return fmt in (None, "eval-v2") and harness_folder(path) is None if fmt is None \
        else fmt == "eval-v2"


def detect_format(path: str | os.PathLike[str]) -> str | None:
    """The format of ``path`` from its content (None: no format this toolkit reads).

    Parameters
    ----------
    path : path-like
        A run folder, or a file written by another harness.

    Returns
    -------
    str or None
        ``"eval-v2"`` for a folder; ``"inspect"`` for a zip named ``.eval`` or a JSON object
        with Inspect's ``version``, ``status`` and ``eval`` keys; ``"tau-bench"`` for a JSON
        list of results with ``task_id`` and ``reward`` (tau-bench) or a JSON object with
        ``simulations`` (tau2-bench); ``"atif"`` for a JSON object whose ``schema_version``
        names ATIF (``"ATIF-v1.7"``, in its first 64 KiB); ``"table"`` for a Parquet file or a
        ``._csv``, ``.jsonl``/``.ndjson`` file; ``"swe-agent"`` for a ``.traj`` file, a
        ``.traj.json`` object with ``messages`` or a folder holding such files; ``"groupchat"``
        for a folder of group chats (:func:`harness_folder`); None otherwise (or for a path that
        does not exist).

    Examples
    --------
    >>> detect_format("data/sample_runs/baseline_react")
    'eval-v2'
    >>> detect_format("tests/data/harness/tau-bench/gpt-4o-airline.json")
    'tau-bench'
    >>> detect_format("tests/data/harness/inspect_ai/log_streaming.eval")
    'inspect'
    """
    p = Path(path)
    if p.is_dir():
        return harness_folder(p) or "eval-v2"
    if not p.is_file():
        return None
    with open(p, "rb") as fh:
        head = fh.read(_HEAD)
    return readers.sniff_file(p, head)


def check_format(fmt: str | None) -> str | None:
    """``format=`` as given, or a ValueError naming the known formats.

    Examples
    --------
    >>> check_format("inspect")
    'inspect'
    """
    if fmt is not None and fmt not in readers.formats():
        raise ValueError(f"format must be one of {', '.join(readers.formats())} (or none given: detected from "
                         f"the content), got {fmt!r}")
    return fmt


def read_records(path: Path, fmt: str, mapping: Mapping[str, str] | None = None) -> list:
    """The :class:`~dabench_analysis.load._harness.Record` (s) of a file of format ``fmt``
    (one run; a per-task table with a ``run_id`` column: one per run).

    Raises
    ------
    RunLoadError
        The file cannot be read as that format (naming file, line or field where known).
    ValueError
        ``fmt`` is eval-v2 (a folder, read by the pipeline) or unknown.
    """
    if fmt == readers.EVAL_V2:
        raise ValueError(f"read_records reads files of another harness, not {fmt!r}")
    return readers.reader(fmt).read(path, mapping or {})


def not_evaluated(path: str | os.PathLike[str], fmt: str | None = None) -> str:
    """Why a run cannot be analysed yet, or ``""`` when it can (read only as far as needed).

    Returns
    -------
    str
        For an eval-v2 folder without a task file, its hint; for an Inspect log without any
        score, why (its results are read first, its samples only when they are absent); for a
        file of no known format, that; else ``""``.

    Examples
    --------
    >>> not_evaluated("data/sample_runs/pending_run")[:29]
    'no task_metrics.csv: evaluate'
    >>> not_evaluated("tests/data/harness/inspect_ai/log_streaming.eval")
    ''
    """
    from dabench_analysis.schema._files import NOT_EVALUATED_HINT, TASK_FILES

    p = Path(path)
    fmt = fmt or detect_format(p)
    if fmt == "eval-v2" or (p.is_dir() and fmt not in readers.folder_formats()):
        return "" if any((p / f).is_file() for f in TASK_FILES) else NOT_EVALUATED_HINT
    if fmt is None:
        return "not a run this toolkit reads (pass its format)"
    scored = readers.reader(fmt).scored if fmt in readers.formats()[1:] else None
    if scored is not None:
        if scored(p):
            return ""
        try:
            return read_records(p, fmt)[0].not_evaluated
        except RunLoadError:
            return ""  # readable or not, the report says why
    return ""


def run_count(path: str | os.PathLike[str], fmt: str | None = None,
              mapping: Mapping[str, str] | None = None) -> int:
    """How many runs ``path`` holds for a report.

    Parameters
    ----------
    path : path-like
        A run folder or a file of another harness.
    fmt : str, optional
        Its format (:func:`._readers.formats`); default: detected.
    mapping : mapping of str to str, optional
        A per-task table's column mapping (``{"run_id": "model", ...}``).

    Returns
    -------
    int
        0 when it is not evaluated (:func:`not_evaluated`), a per-task table's number of runs
        with rows (one per ``run_id`` value; the table is read), else 1 (also for a table that
        cannot be read: its report says why).

    Examples
    --------
    >>> run_count("data/sample_runs/baseline_react"), run_count("data/sample_runs/pending_run")
    (1, 0)
    """
    p = Path(path)
    fmt = fmt or detect_format(p)
    if not_evaluated(p, fmt):
        return 0
    if fmt != "table" or p.is_dir():
        return 1
    try:
        return sum(1 for r in read_records(p, fmt, mapping) if r.table is None or r.table.num_rows)
    except (RunLoadError, ValueError):
        return 1  # the report says what is wrong with it


def not_readable(path: Path) -> RunLoadError:
    """The error for a file of no known format."""
    return RunLoadError(f"{path} is a file, not a run folder, and not a run this toolkit reads "
                        "(an Inspect log, a tau-bench results file, an ATIF trajectory, a "
                        "SWE-agent trajectory or a per-task table; pass "
                        f"format= one of {', '.join(readers.formats())})")


def load_file(path: Path, fmt: str, *, mapping: Mapping[str, str] | None = None,
              strict: bool = True, include_text: bool = False) -> list:
    """The runs of one file of another harness (:func:`read_records`, then
    :func:`dabench_analysis.load._harness.build_run` for each).

    Raises
    ------
    RunLoadError
        As :func:`read_records` and :func:`~dabench_analysis.load._harness.build_run` (a log
        without scores: *not evaluated*).
    """
    from dabench_analysis.load._harness import build_run

    return [build_run(path, rec, fmt, strict=strict, include_text=include_text)
            for rec in read_records(path, fmt, mapping)]


def one_run(path: Path, fmt: str | None, **kw):
    """The one run of another harness's file (:func:`dabench_analysis.load_run`).

    Raises
    ------
    RunLoadError
        A file of no known format, or as :func:`load_file`.
    ValueError
        A file holding several runs (a per-task table with a ``run_id`` column).
    """
    if fmt is None:
        raise not_readable(path)
    runs = load_file(path, fmt, **kw)
    if len(runs) != 1:
        raise ValueError(f"{path} holds {len(runs)} runs ({', '.join(r.run_id for r in runs)}"
                         "); load them with load_runs or load_table(path, run_id=...)")
    return runs[0]


def runs_in_place(paths: list[Path], loaded: list, fmt: str | None,
                  skipped: list[tuple[str, str]], **kw) -> list:
    """``loaded`` (the folders' runs, in order) with each file's runs (a list) in its place
    (:func:`dabench_analysis.load_runs`); a file whose run is *not evaluated* or has 0 task
    rows goes to ``skipped`` (with its reason), any other failure stays as its error."""
    it, out = iter(loaded), []
    for p in paths:
        if eval_folder(p, fmt):
            out.append(next(it))
            continue
        try:
            out.append(load_file(p, fmt or detect_format(p), **kw))
        except RunLoadError as exc:
            why = [f for f in exc.findings if f.check in ("missing_file", "no_rows")]
            if why:
                skipped.append((str(p), why[0].message))
                out.append([])
            else:
                out.append(exc)
    return out
