# Over 400 lines (<= 500): the papermill run, its engine (failed cells, the page made ahead).
"""Execute one report notebook with papermill (its parameters checked first), keep the executed
notebook and export it to HTML.

A failing notebook is kept as ``report.failed.ipynb`` (+ ``report.failed.html``) whatever the
cause: an exception in a cell, a kernel that dies in a cell, or a cell that outlasts the per-cell
timeout (pitfall P15). The kernel's own stdout and stderr (its log: "KeyboardInterrupt caught in
kernel", ZMQ tracebacks at shutdown) go to a file, kept as ``report.failed.kernel.log`` when the
run fails and dropped when it succeeds; the terminal belongs to the caller.
"""

from __future__ import annotations

import ast
import contextlib
import copy
import functools
import logging
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from dabench_analysis._atomic import sync_all
from dabench_analysis.report import _outputs as outputs
from dabench_analysis.report._edge import cause
from dabench_analysis.report._figure_writer import _waits, writer_setting
from dabench_analysis.report._kernel import (  # noqa: F401
    INLINE_BACKEND,
    OWN_REPORT_ENV,
    _exit_status,
    _kernel_manager,
)

if TYPE_CHECKING:  # imported where used: nbformat's import takes seconds (jsonschema formats),
    import nbformat  # and every report kernel imports this package

#: The report notebooks: a source checkout's (or editable install's) top-level ``notebooks/``,
#: else the copy an installed wheel carries as ``dabench_analysis/notebooks`` (setup.py).
NOTEBOOK_DIR = (Path(__file__).resolve().parents[2] / "notebooks"
                if (Path(__file__).resolve().parents[2] / "pyproject.toml").is_file()
                and (Path(__file__).resolve().parents[2] / "notebooks").is_dir()
                else Path(__file__).resolve().parents[1] / "notebooks")

#: The notebooks the toolkit ships in ``notebooks/``: the report of each kind (the batch's jobs)
#: and the interactive ones. A notebook a user adds there (docs/guide/python.md, "Use it from Python /
#: JupyterLab") is theirs: the rules the tests hold these to do not apply to it.
SHIPPED_NOTEBOOKS: tuple[str, ...] = (
    "run_report.ipynb", "compare_runs.ipynb", "sweep.ipynb", "judge_agreement.ipynb",
    "research_eval.ipynb", "explore.ipynb", "trajectories.ipynb")
#: Default seconds one cell may run before the report fails (``--cell-timeout``).
CELL_TIMEOUT = 1200
#: Files a failed run leaves in its output folder (removed again by a successful run).
FAILED_FILES = outputs.FAILED_NAMES
_ENGINE = "dabench"


class ReportError(RuntimeError):
    """A notebook could not be prepared or executed; the message says why in one line."""


def check_notebook(nb: nbformat.NotebookNode, parameters: dict, *, name: str) -> None:
    """Refuse a notebook whose parameters would be silently ignored (pitfall P09).

    Raises
    ------
    ReportError
        No cell tagged ``parameters``, or a passed parameter that the tagged cell never assigns.
    """
    cells = [c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    if not cells:
        raise ReportError(f"{name}: no cell tagged 'parameters'; papermill would inject values "
                          "that a later cell overwrites")
    assigned: set[str] = set()
    for node in ast.walk(ast.parse("\n".join(c.source for c in cells))):
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            assigned |= {t.id for t in targets if isinstance(t, ast.Name)}
    unknown = sorted(set(parameters) - assigned)
    if unknown:
        raise ReportError(f"{name}: parameter(s) {unknown} are not assigned in the "
                          "'parameters' cell")


def _check_injected(nb: nbformat.NotebookNode, parameters: dict, name: str) -> None:
    cell = next(c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", []))
    seen = {}
    for stmt in ast.parse(cell.source).body:
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)):
            raise ReportError(f"{name}: injected parameter cell holds a statement that is not a "
                              "plain assignment; refusing to run")
        seen[stmt.targets[0].id] = ast.literal_eval(stmt.value)
    if seen != parameters:
        raise ReportError(f"{name}: injected parameters differ from those passed; refusing")


def _fail_cell(nb_man, index: int, ename: str, evalue: str) -> None:
    """Give cell ``index`` the error output a raising cell would have, numbered as the kernel
    would have numbered it, so that papermill saves and reports it as any failing cell.

    An error output already there is a consequence, not the cause: the KeyboardInterrupt of
    the interrupt that jupyter_client sends a still-busy kernel before shutting it down."""
    import nbformat

    cells = nb_man.nb.cells
    cell = cells[index]
    if cell.get("execution_count") is None:
        cell.execution_count = 1 + max((c.get("execution_count") or 0 for c in cells[:index]
                                        if c.cell_type == "code"), default=0)
    cell.outputs = [o for o in cell.get("outputs", []) if o.get("output_type") != "error"]
    cell.outputs.append(nbformat.v4.new_output("error", ename=ename, evalue=evalue,
                                               traceback=[f"{ename}: {evalue}"]))
    nb_man.cell_exception(cell, cell_index=index)


@functools.cache
def _engine() -> str:
    """Register (once per process) the papermill engine used by :func:`run_notebook`.

    It is papermill's nbclient engine, except that a kernel that dies in a cell
    (``DeadKernelError``) or a cell that outlasts the timeout (``CellTimeoutError``) becomes
    an error output of that cell: papermill then saves the notebook with its error banner and
    raises ``PapermillExecutionError``, exactly as when a cell raises (pitfall P15); and that
    ``on_last_cell(nb)`` is called when the last cell completed with an "ok" reply (not after
    an error, a timeout, a dead kernel or an interrupt), before the kernel is shut down.
    """
    from nbclient.exceptions import CellTimeoutError, DeadKernelError
    from papermill.engines import NBClientEngine, papermill_engines

    class CellFailureEngine(NBClientEngine):
        @classmethod
        def execute_managed_notebook(cls, nb_man, kernel_name, *, on_last_cell=None, **kwargs):
            running: dict[str, int] = {}
            replied: dict[int, bool] = {}  # cell index -> its execute reply said "ok"

            def executed(cell, cell_index, execute_reply, **_):
                running.clear()
                replied[cell_index] = (execute_reply or {}).get("content", {}).get(
                    "status") == "ok"

            kwargs["on_cell_execute"] = lambda cell, cell_index: running.update(index=cell_index)
            kwargs["on_cell_executed"] = executed
            if on_last_cell is not None:  # called with the notebook before the kernel stops
                complete = nb_man.cell_complete

                def cell_complete(cell, cell_index=None, **kw):  # also after an error (finally)
                    complete(cell, cell_index=cell_index, **kw)
                    if cell_index == len(nb_man.nb.cells) - 1 \
                            and (cell.cell_type != "code" or replied.get(cell_index)):
                        on_last_cell(nb_man.nb)  # an earlier failure never reaches the last
                nb_man.cell_complete = cell_complete
            try:
                return super().execute_managed_notebook(nb_man, kernel_name, **kwargs)
            except (DeadKernelError, CellTimeoutError) as exc:
                if "index" not in running:
                    raise  # not inside a cell (after the last one): run_notebook reports it
                if isinstance(exc, CellTimeoutError):
                    ename, evalue = "CellTimeoutError", (
                        f"the cell was still running after the per-cell timeout of "
                        f"{kwargs.get('execution_timeout')} s")
                else:
                    launched = getattr(kwargs.get("kernel_manager_class"), "launched", [])
                    ename, evalue = "DeadKernelError", (
                        f"the kernel died while running this cell ({_exit_status(launched)})")
                _fail_cell(nb_man, running["index"], ename, evalue)
                return nb_man.nb

    papermill_engines.register(_ENGINE, CellFailureEngine)
    return _ENGINE


class _Restated(logging.Filter):
    """Drops nbclient's log lines about a timeout or a dead kernel: the ReportError says it."""

    PREFIXES = ("Timeout waiting for execute reply", "Interrupting kernel",
                "Kernel died while waiting for execute reply")

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(self.PREFIXES)


@contextlib.contextmanager
def _quiet_restated():
    logger, quiet = logging.getLogger("papermill"), _Restated()  # nbclient logs through it
    logger.addFilter(quiet)
    try:
        yield
    finally:
        logger.removeFilter(quiet)


def _kernel_exists(kernel_name: str) -> None:
    from jupyter_client.kernelspec import KernelSpecManager

    specs = KernelSpecManager().find_kernel_specs()
    if kernel_name not in specs:
        raise ReportError(f"Jupyter kernel {kernel_name!r} is not installed (found: "
                          f"{', '.join(sorted(specs)) or 'none'}); run `make venv`")


def _export_html(nb_path: Path, html_path: Path, page: str | None = None) -> None:
    """The report page: no code, a table of contents, warnings as notes, nothing loaded from
    the network (:func:`dabench_analysis.report.export_html`)."""
    from dabench_analysis.report._html import export_html  # nbconvert: only when a page is written

    export_html(nb_path, html_path, page=page)


def _in_thread(fn, *args):
    """``fn(*args)`` run in a thread of its own; the Future of its result."""
    from concurrent.futures import ThreadPoolExecutor

    pool = ThreadPoolExecutor(1, thread_name_prefix="dabench-page")
    future = pool.submit(fn, *args)
    pool.shutdown(wait=False)  # its thread ends with fn
    return future


class _PageAhead:
    """The report page made in a thread: its exporter prepared while the kernel starts
    (:func:`~dabench_analysis.report._html.prepare_exporter`), the page made from the notebook
    as its last cell left it, while the kernel shuts down (bench/README, "The page made while
    the kernel stops"); :meth:`page` is None when it was not made (the caller makes it then)."""

    def __init__(self) -> None:
        self._prepared = None
        self._future = None

    def prepare(self) -> None:
        from dabench_analysis.report._html import prepare_exporter

        self._prepared = _in_thread(prepare_exporter)

    def start(self, nb) -> None:
        from dabench_analysis.report._html import page_of

        def make(nb, prepared):
            if prepared is not None:
                prepared.exception()  # waited for: its exporter is then the one taken
            return page_of(nb, "report")

        self._future = _in_thread(make, copy.deepcopy(nb), self._prepared)

    def page(self) -> str | None:
        if self._future is None or self._future.exception() is not None:
            return None  # an error is raised again when the caller makes the page
        return self._future.result()


def _clip(text: str, limit: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _raising_line(exc) -> str | None:
    """The cell's line that raised: IPython marks it ``----> n`` in the traceback (``---> nn``
    from line 10 on)."""
    for entry in getattr(exc, "traceback", None) or []:
        for text in re.sub(r"\x1b\[[0-9;]*m", "", str(entry)).splitlines():
            match = re.match(r"\s*-+>\s*\d+\s+(.*\S)", text)
            if match:
                return match.group(1)
    return None


def _cell_reason(name: str, exc) -> str:
    """One line: notebook, cell number (its ``In [n]``), the line that raised (else the cell's
    first line) and the exception."""
    line = _raising_line(exc) or next((s for s in str(exc.source).splitlines() if s.strip()), "")
    number = exc.exec_count if exc.exec_count is not None else "?"
    what = exc.ename + (f": {_clip(exc.evalue, 300)}" if str(exc.evalue).strip() else "")
    return f"{name} failed in cell {number} `{_clip(line, 80)}`: {what}"


def _keep_failed(tmp: Path, out: Path, *, html_export: bool) -> None:
    """Install the failed notebook (+ HTML) and a non-empty kernel log as ``out``'s report: the
    previous report's files go, the failed run's partial tables are not kept (its notebook
    shows every output it made)."""
    failed = tmp / "failed"
    failed.mkdir()
    with contextlib.suppress(FileNotFoundError):
        os.replace(tmp / "report.ipynb", failed / "report.failed.ipynb")
        if html_export:
            with contextlib.suppress(Exception):  # the cell's error matters more than the HTML
                _export_html(failed / "report.failed.ipynb", failed / "report.failed.html")
    log = tmp / "kernel.log"
    if log.is_file() and log.stat().st_size:
        os.replace(log, failed / "report.failed.kernel.log")
    outputs.install(failed, out)


def _kernel_log_tail(tmp: Path) -> str:
    with contextlib.suppress(OSError):
        lines = (tmp / "kernel.log").read_text(errors="replace").splitlines()
        last = next((s for s in reversed(lines) if s.strip()), "")
        return f" (kernel log: {_clip(last, 200)})" if last else ""
    return ""


def run_notebook(
    notebook: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    parameters: dict,
    *,
    kernel_name: str = "python3",
    html_export: bool = True,
    timeout: int | None = CELL_TIMEOUT,
) -> Path:
    """Execute one notebook with papermill into ``out_dir/report.ipynb`` (+ ``report.html``).

    Parameters
    ----------
    notebook : path-like
        The source notebook (never modified).
    out_dir : path-like
        Folder of the executed notebook; created.
    parameters : dict
        Values for the ``parameters`` cell (paths should be absolute).
    kernel_name : str
        Jupyter kernel to run, checked to exist first (pitfall P10a).
    html_export : bool
        Also write ``report.html``: the page of :func:`dabench_analysis.report.export_html`
        (nbconvert's lab template without code, with a table of contents, warnings as notes and
        nothing loaded from the network; outputs are escaped by the package and nbconvert).
    timeout : int or None
        Seconds one cell may run (default :data:`CELL_TIMEOUT`, 1200 s); None: no limit.

    Returns
    -------
    Path
        The executed notebook. The notebook runs with its outputs in a staging folder inside
        ``out_dir`` (its ``output_dir`` parameter, when it names ``out_dir``, is that folder:
        :func:`dabench_analysis.report._outputs.staged`); when it has finished, every file the
        previous run wrote there is removed or replaced by the new ones, ``report.ipynb``,
        ``summary.json`` and ``report.html`` last (:func:`dabench_analysis.report._outputs.install`).
        A killed run leaves no file under those names and nothing the next run does not remove.

    Raises
    ------
    ReportError
        Missing notebook or kernel, untagged parameters cell, or a cell that failed: raised,
        killed its kernel or timed out. The one-line message names the notebook, the cell (its
        number as in ``In [n]`` and its first line) and the exception with its message; the
        executed notebook is kept as ``out_dir/report.failed.ipynb`` (with ``html_export`` also
        ``report.failed.html``) and the kernel's log, if any, as
        ``report.failed.kernel.log`` (the previous report's files removed, the failed run's
        partial tables not kept). A kernel that cannot start or dies outside a cell gives a
        ReportError naming the exception and the last line of the kernel's log; an output
        folder that cannot be written, one naming the folder and the cause (errno text).

    Notes
    -----
    The kernel's stdout and stderr go to a file, not to the terminal (see
    :func:`_kernel_manager`); nbclient's log lines about a timeout or a dead kernel are dropped
    while the notebook runs, since the ReportError says the same with the cell named.

    Examples
    --------
    >>> run_notebook("no_such.ipynb", "out", {})
    Traceback (most recent call last):
    ...
    dabench_analysis.report.runner.ReportError: notebook no_such.ipynb not found
    """
    from papermill.iorw import load_notebook_node
    from papermill.parameterize import parameterize_notebook

    notebook, out = Path(notebook), Path(out_dir)
    if not notebook.is_file():
        raise ReportError(f"notebook {notebook} not found")
    _kernel_exists(kernel_name)
    nb = load_notebook_node(str(notebook))  # also gives every cell a metadata.tags list
    check_notebook(nb, parameters, name=notebook.name)
    nb = parameterize_notebook(nb, parameters, kernel_name=kernel_name)
    _check_injected(nb, parameters, notebook.name)
    try:
        with outputs.stage(out) as tmp:
            return _execute(nb, notebook, out, tmp, kernel_name=kernel_name,
                            html_export=html_export, timeout=timeout)
    except OSError as exc:
        raise ReportError(f"{notebook.name}: cannot write the report into {out}: "
                          f"{cause(exc)}") from None


def _execute(nb, notebook: Path, out: Path, tmp: Path, *, kernel_name: str, html_export: bool,
             timeout: int | None) -> Path:
    """Run ``nb`` with its outputs in the staging folder ``tmp`` and install them into
    ``out`` (:mod:`dabench_analysis.report._outputs`)."""
    import nbformat
    import papermill as pm

    files = tmp / "out"  # what the notebook writes into its output_dir lands here first
    files.mkdir()
    src, dst = tmp / "input.ipynb", tmp / "report.ipynb"
    nbformat.write(nb, src)
    env = {outputs.OUTPUT_ENV: str(out.resolve()), outputs.STAGE_ENV: str(files),
           OWN_REPORT_ENV: "1" if _waits(notebook) else "0"}
    ahead = _PageAhead()
    if html_export:
        ahead.prepare()
    try:
        with _quiet_restated(), open(tmp / "kernel.log", "wb") as log, \
                writer_setting(env, notebook):
            # The notebook is written once at the end (and on a cell error), not before and
            # after every cell: those ~2 saves per cell land in a temporary folder nobody
            # reads and cost a full JSON dump each of a notebook that grows with its figures.
            pm.execute_notebook(str(src), str(dst), parameters=None,
                                kernel_name=kernel_name, cwd=None,
                                progress_bar=False, execution_timeout=timeout,
                                request_save_on_cell_execute=False, engine_name=_engine(),
                                on_last_cell=ahead.start if html_export else None,
                                **_kernel_manager(log, str(notebook.parent.resolve()), env))
    except pm.PapermillExecutionError as exc:
        _keep_failed(tmp, out, html_export=html_export)
        raise ReportError(_cell_reason(notebook.name, exc).replace(
            str(files), str(out.resolve()))) from None  # the folder it was meant for
    except Exception as exc:  # noqa: BLE001 - a kernel that would not start, died outside a cell
        reason = f"{notebook.name} failed: {type(exc).__name__}: {_clip(exc, 300)}"
        reason += _kernel_log_tail(tmp)
        _keep_failed(tmp, out, html_export=html_export)
        raise ReportError(reason.replace(str(files), str(out.resolve()))) from None
    os.replace(dst, files / "report.ipynb")
    if html_export:
        _export_html(files / "report.ipynb", files / "report.html", ahead.page())
    sync_all(files)  # the kernel's files were not flushed one by one (_atomic.STAGE_ENV)
    outputs.install(files, out)
    return out / "report.ipynb"


def notebook_outputs(notebook: str | os.PathLike[str]) -> list[str]:
    """What a report notebook writes, from its cells: the stems its ``out.table``,
    ``out.figure`` and ``out.text`` calls name (``tables/<stem>`` for a table).

    Parameters
    ----------
    notebook : path-like
        A report notebook (a name under :data:`NOTEBOOK_DIR`, or a path).

    Returns
    -------
    list of str
        Relative paths without extension (``tables/main_results``, ``difficulty_breakdown``),
        in cell order; a text's name keeps its ``.md``.

    Examples
    --------
    >>> notebook_outputs("run_report.ipynb")[:2]
    ['tables/health', 'tables/main_results']
    """
    import json

    path = Path(notebook)
    path = path if path.is_file() else NOTEBOOK_DIR / path.name
    if not path.is_file():
        return []
    found: list[str] = []
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] != "code":
            continue
        try:
            tree = ast.parse("".join(cell["source"]))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr in ("table", "figure", "text") \
                    and len(node.args) > 1 and isinstance(node.args[1], ast.Constant) \
                    and isinstance(node.args[1].value, str) and node.args[1].value:
                stem = node.args[1].value
                found.append(f"tables/{stem}" if node.func.attr == "table" else stem)
    return list(dict.fromkeys(found))
