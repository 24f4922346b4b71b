"""Run the report notebooks with papermill, in batch, and write the index page.

Each job executes one notebook of ``notebooks/`` into ``<out>/<name>/report.ipynb`` and exports
``report.html`` beside it. Before executing, the runner checks what papermill itself only logs
(pitfalls P09, P10): the notebook has a cell tagged ``parameters`` that assigns every parameter
passed, the kernel exists, and the injected parameter cell holds exactly the values passed
(literal constants, nothing else). Notebooks run with their own folder as working directory and
absolute paths as parameters. Output folder names are sanitised so that a run id can never
point outside ``--out``.
"""

from __future__ import annotations

import ast
import contextlib
import html
import json
import os
import re
import shutil
import tempfile
import time
import traceback
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from dabench_analysis.export import atomic_write

__all__ = ["NOTEBOOK_DIR", "Job", "JobResult", "ReportError", "safe_name", "check_notebook",
           "run_notebook", "plan_jobs", "run_jobs", "write_index", "is_evaluated"]

NOTEBOOK_DIR = Path(__file__).resolve().parents[1] / "notebooks"
STATES = ("evaluated", "not evaluated", "failed")


class ReportError(RuntimeError):
    """A notebook could not be prepared or executed; the message says why in one line."""


def safe_name(name: str) -> str:
    """A folder name made from a run id: only ``[A-Za-z0-9._-]``, no leading dot.

    Examples
    --------
    >>> safe_name("../etc/passwd")
    'etc_passwd'
    >>> safe_name('run"; import os #')
    'run_import_os'
    """
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "_", str(name)).strip("._-")
    cleaned = re.sub(r"\.{2,}", ".", cleaned)
    return cleaned[:120] or "run"


def is_evaluated(run_dir: Path) -> bool:
    """True if ``run_dir`` holds eval-v2 artifacts (task_metrics.csv or the legacy file).

    Examples
    --------
    >>> is_evaluated(Path("data/sample_runs/pending_run"))
    False
    """
    return (run_dir / "task_metrics.csv").is_file() or \
        (run_dir / "comprehensive_evaluation.csv").is_file()


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


@dataclass(frozen=True)
class Job:
    """One notebook execution: ``kind`` is run, compare, judge or research_eval."""

    kind: str
    name: str
    notebook: Path
    parameters: dict
    out_dir: Path
    source: str = ""


@dataclass
class JobResult:
    """Outcome of a :class:`Job`: state, reason (for failures and skips), seconds, summary."""

    job: Job
    state: str
    reason: str = ""
    seconds: float = 0.0
    summary: dict = field(default_factory=dict)


def _inside(out: Path, name: str) -> Path:
    dest = (out / safe_name(name)).resolve()
    if dest.parent != out.resolve():
        raise ReportError(f"output folder for {name!r} would leave {out}")
    return dest


def plan_jobs(
    run_dirs: Sequence[str | os.PathLike[str]],
    out: str | os.PathLike[str],
    *,
    baseline: str | os.PathLike[str] | None = None,
    judge_study: str | os.PathLike[str] | None = None,
    research_eval: str | os.PathLike[str] | None = None,
    notebook_dir: Path = NOTEBOOK_DIR,
) -> list[Job]:
    """The jobs of one report: a run report per run, and with ``baseline`` a comparison of every
    other run against it; optionally the judge-study and research-eval notebooks.

    Parameters
    ----------
    run_dirs : sequence of path-like
        eval-v2 run directories (a run without artifacts is planned, then skipped as
        "not evaluated" by :func:`run_jobs`).
    out : path-like
        Output root; each job writes to ``out/<safe name>/``.
    baseline : path-like, optional
        Run to compare the others against (``compare_<baseline>_vs_<run>``); it is reported
        itself too.
    judge_study, research_eval : path-like, optional
        Data folders for the corresponding notebooks.

    Returns
    -------
    list of Job

    Raises
    ------
    ReportError
        If two runs would share an output folder.
    """
    out = Path(out).resolve()
    runs = [Path(r).resolve() for r in run_dirs]
    base = Path(baseline).resolve() if baseline is not None else None
    if base is not None and base not in runs:
        runs.insert(0, base)
    jobs = [Job("run", r.name, notebook_dir / "run_report.ipynb",
                {"run_dir": str(r), "output_dir": str(_inside(out, r.name))},
                _inside(out, r.name), str(r)) for r in runs]
    if base is not None:
        for r in runs:
            if r == base or not is_evaluated(r):
                continue  # a run without artifacts is already reported as not evaluated
            name = f"compare_{safe_name(base.name)}_vs_{safe_name(r.name)}"
            jobs.append(Job("compare", name, notebook_dir / "compare_runs.ipynb",
                            {"baseline_dir": str(base), "proposed_dir": str(r),
                             "output_dir": str(_inside(out, name))}, _inside(out, name), str(r)))
    for kind, path, nbname, param in (("judge", judge_study, "judge_agreement.ipynb", "judge_dir"),
                                      ("research_eval", research_eval, "research_eval.ipynb",
                                       "session_dir")):
        if path is not None:
            name = "judge_study" if kind == "judge" else "research_eval"
            jobs.append(Job(kind, name, notebook_dir / nbname,
                            {param: str(Path(path).resolve()),
                             "output_dir": str(_inside(out, name))}, _inside(out, name),
                            str(path)))
    seen: dict[Path, str] = {}
    for j in jobs:
        if j.out_dir in seen:
            raise ReportError(f"{seen[j.out_dir]} and {j.source} would both write to "
                              f"{j.out_dir}; rename one run folder or report them separately")
        seen[j.out_dir] = j.source
    inputs = runs + [Path(p).resolve() for p in (judge_study, research_eval) if p is not None]
    for j in jobs:
        for d in inputs:
            if j.out_dir == d or j.out_dir.is_relative_to(d) or d.is_relative_to(j.out_dir):
                raise ReportError(f"--out {out} would write into the input {d}; choose an "
                                  "output folder outside the run directories")
    return jobs


_OURS = ("report.ipynb", "report.failed.ipynb", "summary.json")


def _clear_previous(out_dir: Path) -> None:
    """Remove a previous report from ``out_dir`` so that a failing re-run cannot leave the old
    numbers looking current. Only folders this toolkit wrote (holding one of its marker files)
    are removed."""
    if out_dir.is_dir() and not out_dir.is_symlink() and any(
            (out_dir / m).exists() for m in _OURS):
        shutil.rmtree(out_dir)


def execute_job(job: Job, kernel_name: str = "python3") -> JobResult:
    """Run one job and never raise: failures come back as ``state="failed"`` with a reason."""
    start = time.perf_counter()
    dirs = [Path(job.parameters[k]) for k in ("run_dir", "baseline_dir", "proposed_dir")
            if k in job.parameters]
    if job.kind in ("run", "compare"):
        for d in dirs:
            if not d.is_dir():
                return JobResult(job, "failed", f"{d} is not a directory")
            if not is_evaluated(d):
                return JobResult(job, "not evaluated",
                                 f"{d.name}: no task_metrics.csv (run eval-v2 first)")
    _clear_previous(job.out_dir)
    try:
        run_notebook(job.notebook, job.out_dir, job.parameters, kernel_name=kernel_name)
    except ReportError as exc:
        return JobResult(job, "failed", str(exc), time.perf_counter() - start)
    except Exception as exc:  # noqa: BLE001 - one failing run must not stop the batch
        last = traceback.format_exception_only(type(exc), exc)[-1].strip()
        return JobResult(job, "failed", last, time.perf_counter() - start)
    summary = {}
    with contextlib.suppress(OSError, ValueError):
        summary = json.loads((job.out_dir / "summary.json").read_text(encoding="utf-8"))
    return JobResult(job, "evaluated", "", time.perf_counter() - start, summary)


def run_jobs(
    jobs: Sequence[Job],
    *,
    n_jobs: int = 1,
    scheduler: str | None = None,
    on_done: Callable[[JobResult], None] | None = None,
    kernel_name: str = "python3",
) -> list[JobResult]:
    """Execute jobs one by one, in ``n_jobs`` local processes, or on a Dask cluster.

    Parameters
    ----------
    jobs : sequence of Job
    n_jobs : int
        Local worker processes (>= 1).
    scheduler : str, optional
        Address of an existing ``dask.distributed`` scheduler (``tcp://host:8786``); the
        executions are submitted there instead. Workers must see the same file system.
    on_done : callable, optional
        Called with each result as it completes (e.g. to advance a progress bar).
    kernel_name : str
        Jupyter kernel for every notebook.

    Returns
    -------
    list of JobResult
        In the order of ``jobs``.

    Raises
    ------
    ValueError
        If ``n_jobs < 1``.
    """
    if n_jobs < 1:
        raise ValueError(f"n_jobs must be >= 1, got {n_jobs}")
    results: dict[int, JobResult] = {}

    def done(i: int, res: JobResult) -> None:
        results[i] = res
        if on_done:
            on_done(res)

    if scheduler:
        from distributed import Client, as_completed

        try:
            client = Client(scheduler, timeout="15s")
        except (OSError, ValueError, TimeoutError) as exc:
            raise ReportError(f"cannot reach the Dask scheduler at {scheduler!r}: "
                              f"{type(exc).__name__}: {exc}") from None
        with client:
            futures = {client.submit(execute_job, j, kernel_name, pure=False): i
                       for i, j in enumerate(jobs)}
            for fut in as_completed(futures):
                done(futures[fut], fut.result())
    elif n_jobs == 1 or len(jobs) <= 1:
        for i, j in enumerate(jobs):
            done(i, execute_job(j, kernel_name))
    else:
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor, as_completed

        with ProcessPoolExecutor(n_jobs, mp_context=mp.get_context("spawn")) as pool:
            futures = {pool.submit(execute_job, j, kernel_name): i for i, j in enumerate(jobs)}
            for fut in as_completed(futures):
                done(futures[fut], fut.result())
    return [results[i] for i in range(len(jobs))]


_INDEX_CSS = ("body{font-family:system-ui,sans-serif;margin:2rem;max-width:60rem}"
              "table{border-collapse:collapse}td,th{padding:.3rem .8rem;border-bottom:1px solid #ddd;"
              "text-align:left}.failed{color:#D55E00}.skipped{color:#777}")


def _summary_text(summary: dict) -> str:
    keys = [("n_tasks", "{} tasks"), ("answer_accuracy", "accuracy {:.1%}"),
            ("mean_final_score", "mean score {:.3f}"), ("mean_diff_final_score", "Δ {:+.3f}"),
            ("p_adjusted_final_score", "Wilcoxon p (Holm) = {:.3g}")]
    parts = []
    for key, fmt in keys:
        value = summary.get(key)
        if isinstance(value, (int, float)) and value == value:
            parts.append(fmt.format(value))
    return ", ".join(parts)


def write_index(results: Sequence[JobResult], out: str | os.PathLike[str]) -> Path:
    """Write ``out/index.html``: one row per job with its state and a link to its report.

    Every text from a run (ids, reasons) is HTML-escaped; links are relative to ``out``.

    Parameters
    ----------
    results : sequence of JobResult
    out : path-like
        Output root of the report.

    Returns
    -------
    Path
        The index page, written atomically.
    """
    out = Path(out)
    rows = []
    for res in results:
        job = res.job
        name = html.escape(job.name)
        if res.state == "evaluated":
            rel = (job.out_dir / "report.html").relative_to(out.resolve()).as_posix()
            link = f'<a href="{html.escape(rel, quote=True)}">{name}</a>'
        else:
            link = name
        cls = {"failed": "failed", "not evaluated": "skipped"}.get(res.state, "")
        rows.append(f'<tr class="{cls}"><td>{html.escape(job.kind)}</td><td>{link}</td>'
                    f"<td>{html.escape(res.state)}</td><td>{html.escape(_summary_text(res.summary))}"
                    f"</td><td>{html.escape(res.reason)}</td><td>{res.seconds:.1f} s</td></tr>")
    page = ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>dabench-analysis reports</title><style>{_INDEX_CSS}</style></head><body>"
            "<h1>dabench-analysis reports</h1><table><thead><tr><th>kind</th><th>report</th>"
            "<th>state</th><th>key numbers</th><th>reason</th><th>time</th></tr></thead><tbody>"
            + "\n".join(rows) + "</tbody></table></body></html>\n")
    dest = out / "index.html"
    with atomic_write(dest) as fh:
        fh.write(page)
    return dest
