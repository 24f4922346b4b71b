"""Execute one report notebook with papermill (its parameters checked first), keep the executed
notebook and export it to HTML.
"""

from __future__ import annotations

import ast
import contextlib
import os
import shutil
import tempfile
import uuid
from pathlib import Path

import nbformat

from dabench_analysis._atomic import atomic_write

NOTEBOOK_DIR = Path(__file__).resolve().parents[2] / "notebooks"


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


def _kernel_manager() -> dict:
    """nbclient's kernel manager with IPC sockets on POSIX.

    With TCP, jupyter_client picks five free ports and the kernel binds them a moment later;
    two kernels started at once (``--jobs 2``) can pick the same port, and one fails with
    "Address already in use" after a 60 s start timeout (seen in ``bench/run_bench.py``).
    IPC sockets are files named after each kernel's own connection file, so they cannot
    collide (and the kernel's "running over TCP without encryption" warning goes away).
    """
    if os.name != "posix":
        return {}
    from jupyter_client.manager import AsyncKernelManager
    from traitlets import default

    class IPCKernelManager(AsyncKernelManager):
        @default("transport")
        def _transport_default(self) -> str:
            return "ipc"

        @default("ip")
        def _ip_default(self) -> str:
            # jupyter_client's default ("kernel-ipc" in the working directory when the
            # connection file is not named yet) is shared by kernels started in one folder
            return os.path.join(tempfile.gettempdir(), f"dabench-kernel-{uuid.uuid4().hex}-ipc")

    return {"kernel_manager_class": IPCKernelManager}


def _kernel_exists(kernel_name: str) -> None:
    from jupyter_client.kernelspec import KernelSpecManager

    specs = KernelSpecManager().find_kernel_specs()
    if kernel_name not in specs:
        raise ReportError(f"Jupyter kernel {kernel_name!r} is not installed (found: "
                          f"{', '.join(sorted(specs)) or 'none'}); run `make venv`")


@contextlib.contextmanager
def _inline_backend():
    """Run the kernel with the inline backend even when the caller set MPLBACKEND=Agg (as
    headless scripts and CI do): otherwise figures are not embedded in report.html."""
    old = os.environ.get("MPLBACKEND")
    os.environ["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("MPLBACKEND", None)
        else:
            os.environ["MPLBACKEND"] = old


def _export_html(nb_path: Path, html_path: Path) -> None:
    from nbconvert import HTMLExporter

    body, _ = HTMLExporter(template_name="lab").from_filename(str(nb_path))
    with atomic_write(html_path) as fh:
        fh.write(body)


def run_notebook(
    notebook: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    parameters: dict,
    *,
    kernel_name: str = "python3",
    html_export: bool = True,
    timeout: int = 1200,
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
        Also write ``report.html`` (nbconvert, lab template; outputs are escaped by pandas and
        nbconvert).
    timeout : int
        Seconds allowed per cell.

    Returns
    -------
    Path
        The executed notebook. Both files are written to temporary names and renamed into place.

    Raises
    ------
    ReportError
        Missing notebook or kernel, untagged parameters cell, or a cell that raised (the message
        names the exception).
    """
    import papermill as pm
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
    out.mkdir(parents=True, exist_ok=True)
    final = out / "report.ipynb"
    with tempfile.TemporaryDirectory(dir=out, prefix=".papermill-") as tmp:
        src, dst = Path(tmp) / "input.ipynb", Path(tmp) / "report.ipynb"
        nbformat.write(nb, src)
        try:
            with _inline_backend():
                # The notebook is written once at the end (and on a cell error), not before and
                # after every cell: those ~2 saves per cell land in a temporary folder nobody
                # reads and cost a full JSON dump each of a notebook that grows with its figures.
                pm.execute_notebook(str(src), str(dst), parameters=None,
                                    kernel_name=kernel_name, cwd=str(notebook.parent),
                                    progress_bar=False, execution_timeout=timeout,
                                    request_save_on_cell_execute=False,
                                    **_kernel_manager())
        except pm.PapermillExecutionError as exc:
            shutil.copyfile(dst, out / "report.failed.ipynb") if dst.exists() else None
            raise ReportError(f"{notebook.name} failed in cell {exc.exec_count}: {exc.ename}: "
                              f"{exc.evalue}".strip()) from None
        os.replace(dst, final)
    with contextlib.suppress(FileNotFoundError):
        (out / "report.failed.ipynb").unlink()
    if html_export:
        _export_html(final, out / "report.html")
    return final
