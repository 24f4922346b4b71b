"""Batch jobs: which notebook runs for which run, comparison, sweep, judge study or
research-eval session; their states; running them in parallel (one kernel process each) or on a
Dask cluster.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from dabench_analysis._lazy import need
from dabench_analysis.load import _formats as formats
from dabench_analysis.report import _outputs as outputs
from dabench_analysis.report._figure_writer import batch_of
from dabench_analysis.report.runner import CELL_TIMEOUT, NOTEBOOK_DIR, ReportError, run_notebook
from dabench_analysis.schema import TASK_FILE, check_threshold
from dabench_analysis.schema._files import TASK_FILES

STATES = ("evaluated", "not evaluated", "failed")
#: Output folder of the sweep report (``OUT/sweep/``) and the job's name.
SWEEP_NAME = "sweep"


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
    """True if ``run_dir`` holds eval-v2 artifacts (task_metrics.csv or the legacy file), or is
    another harness's file with scores (:func:`dabench_analysis.load._formats.not_evaluated`).

    Examples
    --------
    >>> is_evaluated(Path("data/sample_runs/pending_run"))
    False
    """
    if Path(run_dir).is_file():
        return not formats.not_evaluated(run_dir)
    return any((run_dir / name).is_file() for name in TASK_FILES)


def run_name(path: str | os.PathLike[str]) -> str:
    """The name a run's report folder gets: its folder's name, or its file's name without the
    suffix (``logs/2025-02-11_popularity.eval`` -> ``2025-02-11_popularity``).

    Examples
    --------
    >>> run_name("data/sample_runs/baseline_react"), run_name("results/gpt-4o-airline.json")
    ('baseline_react', 'gpt-4o-airline')
    """
    p = Path(path).resolve()
    return p.stem if p.suffix and not p.is_dir() else p.name


#: The kinds of report, one notebook each.
KINDS = ("run", "compare", "sweep", "judge", "research_eval")


@dataclass(frozen=True)
class Job:
    """One notebook execution: ``kind`` is run, compare, sweep, judge or research_eval."""

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
    sweep: bool = False,
    run_reports: bool = True,
    threshold: float | None = None,
    notebook_dir: Path = NOTEBOOK_DIR,
    worked_case: str | None = None,
    run_format: str | None = None,
    column_map: dict[str, str] | None = None,
) -> list[Job]:
    """The jobs of one report: a run report per run, and with ``baseline`` a comparison of every
    other run against it; with ``sweep`` one sweep report over all runs; optionally the
    judge-study and research-eval notebooks.

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
    sweep : bool
        Add the sweep report (``notebooks/sweep.ipynb``) over every run, baseline included,
        into ``out/sweep/`` (runs without artifacts are named there as left out). A per-task
        table of several runs (``column_map`` with ``run_id``) counts as its runs and gets no
        run report of its own: its runs are the sweep report's rows.
    run_reports : bool
        Plan a run report per run (default). False leaves them out, for a sweep of many runs
        whose per-run reports are not wanted; comparisons are planned either way.
    threshold : float, optional
        The success threshold of the run, compare and sweep reports (their notebooks'
        ``threshold`` parameter), in (0, 1]; default: the notebooks' own (0.8).
    worked_case : str, optional
        The judge study's worked case (Table 4); default: the notebook's, the first case
        present in the data (:meth:`dabench_analysis.judge.JudgeStudy.default_worked_case`).
    run_format, column_map : optional
        The format of files among ``run_dirs`` and, for per-task tables, catalogue column ->
        the table's column (the notebooks' ``run_format`` and ``column_map``; see
        :func:`dabench_analysis.load_run`). Run folders and other harnesses' files are named
        after the folder or the file without its suffix (:func:`run_name`).

    Returns
    -------
    list of Job
        Run reports, comparisons, the sweep, the judge study, the research-eval session.

    Raises
    ------
    ReportError
        If two jobs would share an output folder (a run folder named ``sweep`` and the sweep
        report), an output folder would lie in an input, or ``sweep`` has fewer than two
        evaluated runs.
    ValueError
        A ``threshold`` outside (0, 1].

    Examples
    --------
    >>> import tempfile
    >>> jobs = plan_jobs(["data/sample_runs/baseline_react", "data/sample_runs/proposed_aat",
    ...                   "data/sample_runs/pending_run"], tempfile.mkdtemp(), sweep=True)
    >>> [(j.kind, j.name) for j in jobs][-1], len(jobs[-1].parameters["run_dirs"])
    (('sweep', 'sweep'), 3)
    """
    extra = {} if threshold is None else {
        "threshold": check_threshold(threshold, name="threshold")}
    extra |= {"run_format": run_format} if run_format else {}
    extra |= {"column_map": dict(column_map)} if column_map else {}
    out = Path(out).resolve()
    runs = [Path(r).resolve() for r in run_dirs]
    base = Path(baseline).resolve() if baseline is not None else None
    if base is not None and base not in runs:
        runs.insert(0, base)
    counts = {r: formats.run_count(r, run_format, column_map) for r in runs} if sweep else {}
    jobs = [Job("run", run_name(r), notebook_dir / "run_report.ipynb",
                {"run_dir": str(r), "output_dir": str(_inside(out, run_name(r))), **extra},
                _inside(out, run_name(r)), str(r))
            for r in runs if counts.get(r, 1) <= 1] if run_reports else []  # a table of
    # several runs is reported in the sweep report, one row per run
    if base is not None:
        for r in runs:
            if r == base or not is_evaluated(r):
                continue  # a run without artifacts is already reported as not evaluated
            name = f"compare_{safe_name(run_name(base))}_vs_{safe_name(run_name(r))}"
            jobs.append(Job("compare", name, notebook_dir / "compare_runs.ipynb",
                            {"baseline_dir": str(base), "proposed_dir": str(r),
                             "output_dir": str(_inside(out, name)), **extra},
                            _inside(out, name), str(r)))
    if sweep:
        jobs.append(_sweep_job(runs, out, notebook_dir, extra, sum(counts.values())))
    for kind, path, nbname, param in (("judge", judge_study, "judge_agreement.ipynb", "judge_dir"),
                                      ("research_eval", research_eval, "research_eval.ipynb",
                                       "session_dir")):
        if path is not None:
            name = "judge_study" if kind == "judge" else "research_eval"
            extra = {"worked_case": worked_case} if kind == "judge" and worked_case else {}
            jobs.append(Job(kind, name, notebook_dir / nbname,
                            {param: str(Path(path).resolve()),
                             "output_dir": str(_inside(out, name)), **extra},
                            _inside(out, name), str(path)))
    inputs = runs + [Path(p).resolve() for p in (judge_study, research_eval) if p is not None]
    _check_outputs(jobs, inputs, out)
    return jobs


def _sweep_job(runs: Sequence[Path], out: Path, notebook_dir: Path, extra: dict,
               n_evaluated: int) -> Job:
    """The sweep report over all runs: a run without artifacts is listed there as not in the
    sweep; at least two must be evaluated (``n_evaluated``: the runs the paths hold, a
    per-task table one per ``run_id`` value)."""
    if n_evaluated < 2:
        raise ReportError(f"--sweep needs at least two evaluated runs (with {TASK_FILE}); "
                          f"got {n_evaluated} of {len(runs)}")
    dest = _inside(out, SWEEP_NAME)
    return Job("sweep", SWEEP_NAME, notebook_dir / "sweep.ipynb",
               {"run_dirs": [str(r) for r in runs], "output_dir": str(dest), **extra}, dest,
               f"the sweep report over {len(runs)} runs")


def _check_outputs(jobs: Sequence[Job], inputs: Sequence[Path], out: Path) -> None:
    """Refuse two jobs writing to one folder, and any output folder in or around an input."""
    seen: dict[Path, str] = {}
    for j in jobs:
        if j.out_dir in seen:
            raise ReportError(f"{seen[j.out_dir]} and {j.source} would both write to "
                              f"{j.out_dir}; rename one run folder or report them separately")
        seen[j.out_dir] = j.source
    for j in jobs:
        for d in inputs:
            if j.out_dir == d or j.out_dir.is_relative_to(d) or d.is_relative_to(j.out_dir):
                raise ReportError(f"--out {out} would write into the input {d}; choose an "
                                  "output folder outside the run directories")


def _without_report(job: Job, state: str, reason: str) -> JobResult:
    """A job that runs no notebook: a previous report in its folder is removed (only the files
    the toolkit wrote there), so that an old report never looks current."""
    try:
        outputs.install(None, job.out_dir)
    except OSError as exc:
        reason += f" (its previous report in {job.out_dir} could not be removed: " \
                  f"{exc.strerror or exc})"
    return JobResult(job, state, reason)


def execute_job(job: Job, kernel_name: str = "python3", *,
                cell_timeout: int | None = CELL_TIMEOUT) -> JobResult:
    """Run one job and never raise: failures come back as ``state="failed"`` with a reason.

    Parameters
    ----------
    job : Job
    kernel_name : str
        Jupyter kernel of the notebook.
    cell_timeout : int or None
        Seconds one cell may run (None: no limit).

    Returns
    -------
    JobResult
        ``evaluated`` with the report's ``summary.json``; ``not evaluated`` when an input has
        no eval-v2 artifacts; ``failed`` with a one-line reason naming what failed (for a
        failing cell: notebook, cell and first line, exception type and message; the failed
        notebook is kept as ``report.failed.ipynb``/``._html``).
    """
    start = time.perf_counter()
    dirs = [Path(job.parameters[k]) for k in ("run_dir", "baseline_dir", "proposed_dir")
            if k in job.parameters] + [Path(d) for d in job.parameters.get("run_dirs", [])]
    if job.kind in ("run", "compare", "sweep"):
        for d in dirs:
            if not d.exists():
                return _without_report(job, "failed", f"{d} is not a directory")
            why = formats.not_evaluated(d, job.parameters.get("run_format"))
            if why and job.kind != "sweep":  # the sweep lists it as left out
                return _without_report(job, "not evaluated", (
                    f"{d.name}: " if job.kind == "compare" else "") + why)
    try:
        run_notebook(job.notebook, job.out_dir, job.parameters, kernel_name=kernel_name,
                     timeout=cell_timeout)
    except ReportError as exc:
        return JobResult(job, "failed", str(exc), time.perf_counter() - start)
    except Exception as exc:  # noqa: BLE001 - one failing run must not stop the batch
        last = traceback.format_exception_only(type(exc), exc)[-1].strip()
        return JobResult(job, "failed", f"{job.notebook.name}: {last}",
                         time.perf_counter() - start)
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
    cell_timeout: int | None = CELL_TIMEOUT,
) -> list[JobResult]:
    """Execute jobs one by one, ``n_jobs`` at a time, or on a Dask cluster.

    Every notebook runs in its own kernel process; locally, one thread per job drives it
    (papermill and the HTML export), so no worker process has to import them first (~6 s
    each on 2 cores; ``bench/run_bench.py``, ``jobs2_speedup``).

    Parameters
    ----------
    jobs : sequence of Job
    n_jobs : int
        Notebooks run at once locally (>= 1).
    scheduler : str, optional
        Address of an existing ``dask.distributed`` scheduler (``tcp://host:8786``); the
        executions are submitted there instead. Workers must see the same file system.
    on_done : callable, optional
        Called with each result as it completes (e.g. to advance a progress bar).
    kernel_name : str
        Jupyter kernel for every notebook.
    cell_timeout : int or None
        Seconds one cell may run before its report fails (None: no limit).

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

    if scheduler:  # Dask is the [dask] extra: one line naming it when missing
        distributed = need("distributed", what="report --scheduler", extra="dask")
        Client, as_completed = distributed.Client, distributed.as_completed

        try:
            client = Client(scheduler, timeout="15s")
        except (OSError, ValueError, TimeoutError) as exc:
            raise ReportError(f"cannot reach the Dask scheduler at {scheduler!r}: "
                              f"{type(exc).__name__}: {exc}") from None
        with client:
            futures = {client.submit(execute_job, j, kernel_name,
                                     cell_timeout=cell_timeout, pure=False): i
                       for i, j in enumerate(jobs)}
            for fut in as_completed(futures):
                done(futures[fut], fut.result())
    elif n_jobs == 1 or len(jobs) <= 1:
        for i, j in enumerate(jobs):
            done(i, execute_job(j, kernel_name, cell_timeout=cell_timeout))
    else:  # each notebook runs in its own kernel process; a thread only drives it
        from concurrent.futures import ThreadPoolExecutor, as_completed

        with ThreadPoolExecutor(n_jobs, thread_name_prefix="report") as pool, \
                batch_of(min(n_jobs, len(jobs))):
            futures = {pool.submit(execute_job, j, kernel_name, cell_timeout=cell_timeout): i
                       for i, j in enumerate(jobs)}
            try:
                for fut in as_completed(futures):
                    done(futures[fut], fut.result())
            except BaseException:  # Ctrl-C: start no further report
                pool.shutdown(wait=False, cancel_futures=True)
                raise
    return [results[i] for i in range(len(jobs))]
