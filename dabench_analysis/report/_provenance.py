# Over 400 lines (<= 500): what a report records about its inputs and how the report shows it
# are one idea; the view reads exactly the fields the manifest writes.
"""Provenance of a report: which input files it read (SHA-256 and size), which toolkit and
library versions made it, with which parameters and random seeds, and when.

:func:`manifest` builds the ``manifest`` entry of a report's ``summary.json``;
:func:`show_manifest` displays it at the end of the notebook (and its HTML). A re-run gives
the same manifest but ``time_utc`` (and changed versions): equal manifests, same bytes.
"""

from __future__ import annotations

import functools
import hashlib
import html
import os
import platform
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from dabench_analysis.judge import JudgeStudy
from dabench_analysis.load import Run, Runs
from dabench_analysis.load import cache as parse_cache
from dabench_analysis.research_eval import ResearchEval
from dabench_analysis.schema import CONFIG_FILE as RUN_CONFIG_FILE
from dabench_analysis.schema import (
    LEGACY_TASK_FILE,
    REPLAY_FILE,
    TASK_FILE,
    TOOL_CALLS_FILE,
    TRAJECTORY_FILE,
)
from dabench_analysis.schema.numbers import format_parameter

#: Layout version of the ``manifest`` entry.
MANIFEST_VERSION = 1
#: The distribution whose version and git revision are recorded.
TOOLKIT = "dabench-analysis"
#: Libraries whose versions every manifest records (besides Python and the toolkit).
LIBRARIES = ("pandas", "numpy", "scipy", "statsmodels", "matplotlib", "seaborn", "papermill")
#: Files listed in the table that :func:`show_manifest` draws (every file is in the JSON).
SHOWN_FILES = 20

_PROJECT = Path(__file__).resolve().parents[2]
_CHUNK = 1 << 20


class InputChanged(RuntimeError):
    """An input file no longer holds the bytes the report parsed (rewritten while it ran)."""


def _sha256(path: Path) -> tuple[str, int, str]:
    """SHA-256 hex digest of ``path``, the number of bytes hashed and the loader's digest of
    them (:func:`dabench_analysis.load.cache.digest`), read once in 1 MiB chunks."""
    h, stamp, size = hashlib.sha256(), parse_cache.hasher(), 0
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)
            stamp.update(chunk)
            size += len(chunk)
    return h.hexdigest(), size, parse_cache.hexdigest_of(stamp)


def _parsed(inputs: Sequence[Any]) -> dict[Path, dict]:
    """Resolved path -> the stamp of the bytes a loaded input (anything with ``inputs``: a Run,
    each Run of a Runs, a judge study, a research-eval session) parsed from it."""
    loaded = [r for i in inputs for r in (i if isinstance(i, Runs) else [i])
              if isinstance(getattr(r, "inputs", None), Mapping)]
    return {Path(st["path"]).resolve(): st for r in loaded for st in r.inputs.values() if st}


def _present(folder: Path, names: Iterable[str]) -> list[Path]:
    return [folder / n for n in names if (folder / n).is_file()]


def _run_files(run: Run, *, side: bool, replays: bool, config: bool) -> list[Path]:
    """A run's files: task file, run_config.json (``config``), side files (all with ``side``),
    replays; another harness's run: the one file it was read from (a folder format, such as
    a folder of trajectories: every file under it)."""
    if run.format != "eval-v2":
        return _folder_files(Path(run.path)) if Path(run.path).is_dir() else [Path(run.path)]
    folder, loaded = Path(run.path), vars(run)
    names = [run.task_file or TASK_FILE] + [RUN_CONFIG_FILE] * config
    names += [f for f, attr in ((TRAJECTORY_FILE, "trajectory"), (TOOL_CALLS_FILE, "tool_calls"))
              if side or attr in loaded]
    files = _present(folder, names)
    if replays and "replay_path" in run.tasks:
        files += sorted((Path(p) for p in run.tasks["replay_path"].dropna().astype(str)
                         if os.path.isfile(p)), key=lambda p: p.parent.name)
    return files


def _folder_files(folder: Path) -> list[Path]:
    """A run folder's eval-v2 files, or every non-hidden file under any other folder."""
    if (folder / TASK_FILE).is_file() or (folder / LEGACY_TASK_FILE).is_file():
        task = TASK_FILE if (folder / TASK_FILE).is_file() else LEGACY_TASK_FILE
        files = _present(folder, [task, TRAJECTORY_FILE, TOOL_CALLS_FILE])
        return files + sorted(p for p in folder.glob(f"*/{REPLAY_FILE}") if p.is_file())
    found = []
    for root, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found += [Path(root) / n for n in sorted(names) if not n.startswith(".")]
    return [p for p in found if p.is_file()]


def _input_files(item: Any) -> list[Path]:
    if isinstance(item, Runs):
        loaded = vars(item)  # the stacked side tables, if the sweep read them
        extra = [f for f, attr in ((TRAJECTORY_FILE, "trajectory"), (TOOL_CALLS_FILE, "tool_calls"))
                 if attr in loaded]
        return [f for r in item for f in _run_files(r, side=False, replays=False, config=True)
                + _present(Path(r.path), extra)]
    if isinstance(item, Run):
        return _run_files(item, side=True, replays=True, config=False)
    if isinstance(item, (JudgeStudy, ResearchEval)):
        return _folder_files(Path(item.path))
    if isinstance(item, (str, os.PathLike)):
        path = Path(item).expanduser()
        if path.is_file():
            return [path]
        if path.is_dir():
            return _folder_files(path)
        raise FileNotFoundError(f"manifest input {str(item)!r} is neither a file nor a folder "
                                f"(looked in {os.getcwd()})")
    raise TypeError(f"manifest inputs must be paths, Run, Runs, JudgeStudy or ResearchEval, got "
                    f"{type(item).__name__}")


def input_files(inputs: Sequence[Any]) -> list[dict]:
    """Every file the given inputs stand for, with its SHA-256 and size.

    Parameters
    ----------
    inputs : sequence of path-like, Run, Runs, JudgeStudy or ResearchEval
        What the report read. A :class:`~dabench_analysis.load.Run` (a run or comparison
        report, which validates the run): its task file (``task_metrics.csv``, or
        ``comprehensive_evaluation.csv`` for a legacy run), ``trajectory.csv``,
        ``tool_calls.csv`` and every ``<task>/task_replay.json`` that exists. A
        :class:`~dabench_analysis.load.Runs` (a sweep): each run's task file and
        ``run_config.json`` (the configuration it declares), and ``trajectory.csv`` /
        ``tool_calls.csv`` only if the sweep loaded them (a sweep report reads no replay). A
        run folder path: as a Run. Any other folder, or a judge study or research-eval session
        as loaded: every file under it except hidden ones. A file: itself.

    Returns
    -------
    list of dict
        One per distinct file (resolved path, first occurrence kept), in input order:
        ``path`` (str, absolute, links resolved), ``sha256`` (str, 64 hex digits), ``bytes``
        (int).

    Raises
    ------
    FileNotFoundError
        An input path that is neither a file nor a folder.
    TypeError
        An input that is not a path, a Run or a Runs; ``inputs`` given as one string.
    InputChanged
        A file a loaded Run parsed holds other bytes now (rewritten while the report ran),
        naming it.

    Notes
    -----
    Every file is read again, in 1 MiB chunks (:mod:`hashlib`), several files at a time in
    threads, with the loader's digest (:func:`dabench_analysis.load.cache.digest`): where a
    loaded input parsed the file, the two must agree (the manifest describes the bytes used).

    Examples
    --------
    >>> files = input_files(["data/judge_study"])
    >>> [Path(f["path"]).name for f in files][:2], len(files[0]["sha256"])
    (['README.md', 'cases.csv'], 64)
    """
    if isinstance(inputs, (str, os.PathLike)):
        raise TypeError("inputs must be a list of paths, Run or Runs, not one path; "
                        f"write [{str(inputs)!r}]")
    paths: dict[Path, None] = {}
    for item in inputs:
        for p in _input_files(item):
            paths.setdefault(p.resolve(), None)
    order = list(paths)
    workers = min(4, os.cpu_count() or 1)
    if len(order) > 16 and workers > 1:
        with ThreadPoolExecutor(workers, thread_name_prefix="manifest") as pool:
            digests = list(pool.map(_sha256, order))
    else:
        digests = [_sha256(p) for p in order]
    parsed = _parsed(inputs)
    for p, (_, n, stamp) in zip(order, digests, strict=True):
        was = parsed.get(p)
        if was is not None and was["digest"] != stamp:
            raise InputChanged(f"{p} changed while the report ran: the tables come from the "
                               f"{was['size']:,} bytes read first, the file now holds {n:,} "
                               "other bytes; run the report again")
    return [{"path": p.as_posix(), "sha256": d, "bytes": n}
            for p, (d, n, _) in zip(order, digests, strict=True)]


def _version(name: str) -> str | None:
    try:
        return version(name)
    except PackageNotFoundError:
        return None


@functools.cache
def _git() -> dict:
    """The project's git revision and whether tracked files differ from it; None for both
    when the package is not in its own git checkout (an installed wheel) or git is absent."""
    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(["git", "-C", str(_PROJECT), *args], capture_output=True,
                                  text=True, timeout=10, check=False)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    top = git("rev-parse", "--show-toplevel")
    if top is None or Path(top).resolve() != _PROJECT:
        return {"git_revision": None, "git_dirty": None}  # another repository's checkout
    status = git("status", "--porcelain", "--untracked-files=no")
    return {"git_revision": git("rev-parse", "HEAD"),
            "git_dirty": None if status is None else bool(status)}


def versions() -> dict:
    """Python, the toolkit and the :data:`LIBRARIES` as installed (None if not installed).

    Examples
    --------
    >>> v = versions()
    >>> sorted(v) == sorted(["python", TOOLKIT, *LIBRARIES])
    True
    """
    return {"python": platform.python_version(), TOOLKIT: _version(TOOLKIT),
            **{name: _version(name) for name in LIBRARIES}}


def _plain(value: Any, where: str) -> Any:
    """``value`` as JSON data (paths and tuples converted); a clear error otherwise."""
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, Mapping):
        return {str(k): _plain(v, f"{where}[{k!r}]") for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if hasattr(value, "item") and callable(value.item):  # numpy scalars
        return value.item()
    raise TypeError(f"{where} has type {type(value).__name__}, which a manifest cannot hold; "
                    "pass strings, numbers, booleans, lists or dicts")


def manifest(*, inputs: Sequence[Any], parameters: Mapping[str, Any],
             seeds: Mapping[str, Any] | None = None) -> dict:
    """The provenance of one report, for ``summary["manifest"]``.

    Parameters
    ----------
    inputs : sequence of path-like, Run, Runs, JudgeStudy or ResearchEval
        Everything the report read (see :func:`input_files` for which files each stands for).
    parameters : mapping
        The notebook's parameters, name -> value (paths become strings).
    seeds : mapping, optional
        The random seeds used, name -> value (e.g. ``{"bootstrap": 0}``); default none.

    Returns
    -------
    dict
        ``manifest_version`` (int, :data:`MANIFEST_VERSION`); ``time_utc`` (str, ISO 8601 with
        ``+00:00``, to the second); ``toolkit`` (``name``, ``version``, ``git_revision`` (40
        hex digits) and ``git_dirty`` (tracked files changed since that revision), both None
        outside the project's git checkout); ``versions`` (``python`` and every library of
        :data:`LIBRARIES` plus the toolkit, None if not installed); ``platform`` (str);
        ``parameters``; ``seeds``; ``files`` (list of ``{path, sha256, bytes}``, see
        :func:`input_files`); ``n_files`` (int) and ``total_bytes`` (int).

    Raises
    ------
    FileNotFoundError, TypeError, InputChanged
        As :func:`input_files`; TypeError also for a parameter or seed that JSON cannot hold.

    Notes
    -----
    The git revision: ``git rev-parse HEAD`` of the checkout holding this package, once per
    process (a failure of git leaves it None).

    Examples
    --------
    >>> m = manifest(inputs=["data/judge_study/cases.csv"], parameters={"seed": 0},
    ...              seeds={"bootstrap": 0})
    >>> m["files"][0]["bytes"] == Path("data/judge_study/cases.csv").stat().st_size
    True
    >>> m["toolkit"]["name"], m["seeds"], m["time_utc"].endswith("+00:00")
    ('dabench-analysis', {'bootstrap': 0}, True)
    """
    if not isinstance(parameters, Mapping):
        raise TypeError(f"parameters must be a dict of name -> value, got "
                        f"{type(parameters).__name__}")
    if seeds is not None and not isinstance(seeds, Mapping):
        raise TypeError(f"seeds must be a dict of name -> seed, got {type(seeds).__name__}")
    files = input_files(inputs)
    return {
        "manifest_version": MANIFEST_VERSION,
        "time_utc": datetime.now(UTC).isoformat(timespec="seconds"),
        "toolkit": {"name": TOOLKIT, "version": _version(TOOLKIT), **_git()},
        "versions": versions(),
        "platform": platform.platform(),
        "parameters": _plain(dict(parameters), "parameters"),
        "seeds": _plain(dict(seeds or {}), "seeds"),
        "files": files,
        "n_files": len(files),
        "total_bytes": sum(f["bytes"] for f in files),
    }


def _shown(value: Any) -> str:
    """A parameter as a reader reads it: text as is, lists joined, a mapping as ``key =
    value`` pairs, None (or empty) as "none"; no repr."""
    if value is None or value == "":
        return "none"
    if isinstance(value, (list, tuple)):
        return ", ".join(_shown(v) for v in value) or "none"
    if isinstance(value, Mapping):
        return ", ".join(f"{k} = {_shown(v)}" for k, v in value.items()) or "none"
    return format_parameter(value)


def _cell(text: str, *, limit: int = 160) -> str:
    """A manifest value as HTML: a long one (the folders of a 40-run sweep) opens on a click."""
    if len(text) <= limit:
        return html.escape(text)
    return (f"<details><summary>{html.escape(text[:limit // 2])}…</summary>"
            f"{html.escape(text)}</details>")


@dataclass(frozen=True)
class ManifestView:
    """A manifest as displayed: HTML in a notebook (and its export), Markdown or text elsewhere."""

    manifest: Mapping[str, Any]

    def _rows(self) -> list[tuple[str, str]]:
        m = self.manifest
        tk = m.get("toolkit", {})
        rev = tk.get("git_revision") or "not a git checkout"
        if tk.get("git_dirty"):
            rev += " (with uncommitted changes)"
        rows = [("created (UTC)", str(m.get("time_utc"))),
                ("toolkit", f"{tk.get('name')} {tk.get('version')}, git {rev}")]
        rows += [(k, str(v)) for k, v in m.get("versions", {}).items() if k != TOOLKIT]
        rows += [(f"parameter {k}", _shown(v)) for k, v in m.get("parameters", {}).items()] \
            or [("parameters", "none")]
        rows += [("seeds", "; ".join(f"{k} {_shown(v)}" for k, v in m.get("seeds", {}).items())
                  or "none"),
                 ("input files", f"{m.get('n_files', 0)} ({m.get('total_bytes', 0)} bytes)")]
        return rows

    def _files(self) -> tuple[list[dict], int]:
        files = list(self.manifest.get("files", []))
        return files[:SHOWN_FILES], max(0, len(files) - SHOWN_FILES)

    def _repr_html_(self) -> str:
        e = html.escape
        info = "".join(f"<tr><th style='text-align:left'>{e(k)}</th><td>{_cell(v)}</td></tr>"
                       for k, v in self._rows())
        shown, more = self._files()
        files = "".join(f"<tr><td><code>{e(f['path'])}</code></td><td>{f['bytes']}</td>"
                        f"<td><code>{e(f['sha256'])}</code></td></tr>" for f in shown)
        tail = (f"<p>… and {more:,} more files (every file is in summary.json)</p>"
                if more else "")
        return ("<h3>Manifest</h3><table>" + info + "</table><details><summary>input files "
                "(SHA-256)</summary><table><tr><th>path</th><th>bytes</th><th>sha256</th></tr>"
                + files + "</table>" + tail + "</details>")

    def _repr_markdown_(self) -> str:
        lines = ["**Manifest**", "", "| | |", "|---|---|"]
        lines += [f"| {k} | {v.replace('|', '/')} |" for k, v in self._rows()]
        shown, more = self._files()
        lines += ["", "| path | bytes | sha256 |", "|---|---:|---|"]
        lines += [f"| `{f['path']}` | {f['bytes']} | `{f['sha256']}` |" for f in shown]
        if more:
            lines.append(f"\n… and {more:,} more files (every file is in summary.json)")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return "\n".join(f"{k}: {v}" for k, v in self._rows())


def show_manifest(m: Mapping[str, Any]) -> ManifestView:
    """Display a manifest at the end of a notebook: versions, parameters, seeds and the input
    files with their SHA-256 (the first :data:`SHOWN_FILES`; all of them are in the JSON).

    Parameters
    ----------
    m : mapping
        As returned by :func:`manifest` (or read back from ``summary.json``).

    Returns
    -------
    ManifestView
        Shown as HTML by Jupyter (every text HTML-escaped), as Markdown by
        ``_repr_markdown_``, as plain lines by ``repr``.

    Raises
    ------
    TypeError
        If ``m`` is not a mapping.

    Examples
    --------
    >>> view = show_manifest({"time_utc": "2026-01-01T00:00:00+00:00", "files": [],
    ...                       "parameters": {"run_dir": "<x>"}})
    >>> "&lt;x&gt;" in view._repr_html_(), repr(view).splitlines()[0]
    (True, 'created (UTC): 2026-01-01T00:00:00+00:00')
    """
    if not isinstance(m, Mapping):
        raise TypeError(f"show_manifest needs the manifest dict, got {type(m).__name__}")
    return ManifestView(m)
