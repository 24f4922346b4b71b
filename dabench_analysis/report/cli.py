# Over 400 lines (under 500): the command line in one place, its three commands (report,
# validate, cache) with their options, exit codes and the validate printer they share.
"""The ``dabench-analysis`` command line: ``report`` (batch of notebooks), ``validate`` (findings
and health) and ``cache`` (info, clear).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import pandas as pd
import typer
from rich.console import Console, ConsoleDimensions
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from dabench_analysis import report as rep
from dabench_analysis.report import edge
from dabench_analysis.report.runner import CELL_TIMEOUT
from dabench_analysis.report.validation import check_out_dir, write_validation
from dabench_analysis.schema import CONFIG_FILE, check_threshold
from dabench_analysis.schema.numbers import format_estimate
from dabench_analysis.validate import validate_run
from dabench_analysis.validate.health import (
    NOT_EVALUATED,
    _num,
    _pct,
    cause_text,
    health_text,
)

#: Exit codes of ``validate``: no error; an error finding (or a run that cannot be read);
#: usage (typer, or an --out inside a run directory); no error but a run not evaluated.
EXIT_OK, EXIT_ERRORS, EXIT_USAGE, EXIT_NOT_EVALUATED = 0, 1, 2, 3


def _health_line(vr) -> Text:
    if vr.state == "not evaluated":
        return Text(NOT_EVALUATED, style="yellow")
    h = vr.health
    causes = cause_text(h)
    return Text(
        f"harness health {health_text(h.harness_score, h.harness_status)}"
        + (f" (capped: {causes}; §Troubleshooting)" if causes else "")
        + (" (not HEALTHY while there are errors)" if h.harness_status == "DEGRADED"
           and not vr.ok and h.harness_score >= 9 else "")
        + f"; run quality {_num(h.run_quality_score)} {h.run_quality_status} (answer accuracy "
        f"{_pct(h.answer_accuracy)} at final_score >= {h.success_threshold:g}, execution "
        f"success {_pct(h.execution_success_rate)})")


def validate_command(paths: Sequence[str | os.PathLike[str]], *, console=None,
                     out: str | os.PathLike[str] | None = None,
                     threshold: float | None = None) -> int:
    """Validate runs and print their findings grouped by check (the ``validate`` command).

    Parameters
    ----------
    paths : sequence of path-like
        Run directories.
    console : rich.console.Console, optional
        Where to print; default standard output.
    out : path-like, optional
        Also write the findings and the health breakdown there (:func:`write_validation`).
    threshold : float, optional
        Success threshold of the run-quality score (:func:`validate_run`; default 0.8).

    Returns
    -------
    int
        :data:`EXIT_ERRORS` (1) if any run has an error finding or could not be read, else
        :data:`EXIT_NOT_EVALUATED` (3) if any run is not evaluated (no task_metrics.csv: no
        health score), else :data:`EXIT_OK` (0).

    Raises
    ------
    ReportError
        If ``out`` is a run directory or inside one (checked before anything is read).

    Notes
    -----
    Text from the run (ids, messages) is printed as plain text, never as rich markup.

    Examples
    --------
    >>> import io
    >>> from rich.console import Console, ConsoleDimensions
    >>> validate_command(["data/sample_runs/proposed_aat"], console=Console(file=io.StringIO()))
    0
    >>> validate_command(["data/sample_runs/pending_run"], console=Console(file=io.StringIO()))
    3
    """
    if out is not None:
        check_out_dir(out, paths)
    console = console or LogConsole()
    colour = {"error": "red", "warning": "yellow", "info": "cyan"}
    reports = []
    for p in paths:
        vr = validate_run(p, threshold=threshold)
        reports.append(vr)
        console.print(Text(f"{vr.path} — run {vr.run_id} ({vr.state}, {vr.n_tasks} tasks)",
                           style="bold"))
        summary = vr.summary()
        if vr.state == "not evaluated":
            pass
        elif summary.empty:
            console.print(Text("no findings", style="green"))
        else:
            table = Table(show_lines=False)
            for col in ("severity", "check", "n", "where", "example"):
                table.add_column(col, overflow="fold")
            for r in summary.itertuples(index=False):
                row = "" if pd.isna(r.first_row) else f" row {r.first_row}"
                where = f"{r.files}{row}" + (f" [{r.columns}]" if r.columns else "")
                table.add_row(Text(r.severity, style=colour[r.severity]), Text(r.check),
                              str(r.n), Text(where), Text(str(r.example)))
            console.print(table)
        console.print(_health_line(vr))
    pending = sum(vr.state == "not evaluated" for vr in reports)
    status = EXIT_ERRORS if any(not vr.ok and vr.state != "not evaluated" for vr in reports) \
        else EXIT_NOT_EVALUATED if pending else EXIT_OK
    if out is not None:
        for path in write_validation(reports, out):
            console.print(Text(f"wrote {path}"))
    console.print(Text(f"{len(paths)} run(s) validated; "
                       + ("errors found" if status == EXIT_ERRORS else "no errors")
                       + (f"; {pending} not evaluated" if pending else ""),
                       style={EXIT_OK: "green", EXIT_ERRORS: "red"}.get(status, "yellow")))
    return status


# Help in click's plain layout (rich_markup_mode=None): at 80 columns rich's option panels
# left each option's text about 16 characters; plain text keeps 50.
app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                  help="Analyse eval-v2 runs of LLM data agents: reports, validation, cache.")


class LogConsole(Console):
    """A rich console that never hard-wraps when its output is not a terminal: piped into a
    file or a CI log, every line and table row is written whole (no 80-column folding of run
    names and check names); in a terminal it wraps at the terminal's width as usual."""

    @property
    def size(self) -> ConsoleDimensions:
        dims = super().size
        return dims if self.is_terminal else ConsoleDimensions(LOG_WIDTH, dims.height)


#: The width of a line written to a file or a log (long enough for any row, never folded).
LOG_WIDTH = 10_000

console = LogConsole(stderr=False)


err = LogConsole(stderr=True)


#: ``--debug`` on every command: the traceback of an error instead of its one line.
Debug = Annotated[bool, typer.Option("--debug", help="on an error, show the Python traceback "
                                     "instead of one line (also: DABENCH_DEBUG=1)")]


def _say(line: str) -> None:
    err.print(Text(line, style="red"), soft_wrap=True)


def _edge(command):
    """Run a command so that what escapes it is one line with its exit code (report.edge)."""
    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        with edge.at_the_edge(_say, debug=kwargs.get("debug", False)):
            return command(*args, **kwargs)
    return wrapper


SAMPLE_DATA = Path("data")


SAMPLE_BASELINE = "baseline_react"


@app.callback()
def _root() -> None:
    """Analyse eval-v2 runs of LLM data agents: reports, validation, cache."""


def _sample_root() -> Path:
    here = SAMPLE_DATA if (SAMPLE_DATA / "sample_runs").is_dir() else \
        rep.NOTEBOOK_DIR.parent / "data"
    return here


def _print_summary(results: list[rep.JobResult]) -> None:
    table = Table(title="Reports")
    for col in ("kind", "name", "state", "seconds", "reason"):
        table.add_column(col, overflow="fold")
    style = {"evaluated": "green", "not evaluated": "yellow", "failed": "red"}
    for r in results:
        table.add_row(r.job.kind, escape(r.job.name), f"[{style[r.state]}]{r.state}[/]",
                      format_estimate(r.seconds), escape(r.reason))
    console.print(table)


def _check_success_threshold(value: float | None) -> None:
    """A one-line usage error (exit 2) for a --success-threshold outside (0, 1]."""
    if value is None:
        return
    try:
        check_threshold(value, name="--success-threshold")
    except ValueError as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_USAGE) from None


@app.command()
@_edge
def report(
    run_dirs: Annotated[list[Path] | None, typer.Argument(
        help="eval-v2 run directories; default: every run in data/sample_runs/ with "
             "baseline_react as baseline, plus the sample judge study and research-eval session")] = None,
    out: Annotated[Path, typer.Option("--out", "-o", help="output root")] = Path("figures"),
    baseline: Annotated[Path | None, typer.Option(help="compare every other run to this one")] = None,
    jobs: Annotated[int, typer.Option("--jobs", "-j", min=1, help="notebooks run at once (one kernel each)")] = 1,
    scheduler: Annotated[str | None, typer.Option(
        help="address of an existing Dask distributed scheduler to run the notebooks on")] = None,
    judge_study: Annotated[Path | None, typer.Option(help="judge-study data folder")] = None,
    research_eval: Annotated[Path | None, typer.Option(help="research-eval session folder")] = None,
    kernel: Annotated[str, typer.Option(help="Jupyter kernel name")] = "python3",
    cell_timeout: Annotated[int, typer.Option(
        min=1, help="seconds one notebook cell may run before its report fails")] = CELL_TIMEOUT,
    sweep: Annotated[bool, typer.Option(
        "--sweep", help="also write the sweep report over all evaluated runs into OUT/sweep/: "
                        "leaderboard with rank intervals, all-pairs paired tests, flips, item "
                        f"analysis, repetitions ({CONFIG_FILE})")] = False,
    run_reports: Annotated[bool, typer.Option(
        "--run-reports/--no-run-reports",
        help="write a report per run (default); --no-run-reports with --sweep writes only the "
             "sweep (and any --baseline comparisons), for sweeps of many runs")] = True,
    success_threshold: Annotated[float | None, typer.Option(
        "--success-threshold", help="a task is correct when final_score >= this, in (0, 1], in "
                                    "the run, compare and sweep reports (default 0.8, the "
                                    "eval-v2 guide's)")] = None,
    worked_case: Annotated[str | None, typer.Option(
        help="the judge study's worked case (Table 4), a test_case_id of its cases.csv; "
             "default: the first case with factoid counts")] = None,
    debug: Debug = False,
) -> None:
    """Execute the report notebooks for each run into OUT/<run folder name>/ and write
    OUT/index.html (comparisons: OUT/compare_<baseline folder>_vs_<run folder>/).

    --sweep: also the sweep report over every evaluated run, in OUT/sweep/ (linked first).

    --sweep --no-run-reports: the sweep report alone (plus any --baseline comparisons).

    --success-threshold 0.7: correctness (accuracy, failures, McNemar, flips, run quality) at
    final_score >= 0.7 instead of the guide's 0.8.
    """
    _check_success_threshold(success_threshold)
    if not run_dirs:
        root = _sample_root()
        if not (root / "sample_runs").is_dir():
            err.print("[red]error:[/] no run directories given, and no sample data here "
                      f"({escape(str(root / 'sample_runs'))} does not exist): pass the eval-v2 "
                      "run directories to report, e.g. `dabench-analysis report runs/*`",
                      highlight=False)
            raise typer.Exit(2)
        run_dirs = sorted(p for p in (root / "sample_runs").iterdir() if p.is_dir())
        baseline = baseline or root / "sample_runs" / SAMPLE_BASELINE
        judge_study = judge_study or (root / "judge_study" if (root / "judge_study").is_dir()
                                      else None)
        research_eval = research_eval or (root / "research_eval" if (root / "research_eval")
                                          .is_dir() else None)
    if baseline is not None and not Path(baseline).is_dir():
        named = [d for d in run_dirs if Path(d).name == str(baseline)]
        if len(named) != 1:
            err.print(f"[red]error:[/] --baseline {escape(str(baseline))}: no such directory"
                      + (" (and not the folder name of exactly one run given)" if not named
                         else f" (and {len(named)} runs given have that folder name)"),
                      highlight=False)
            raise typer.Exit(2)
        baseline = named[0]  # a folder name among the runs given
    edge.check_report_inputs(judge_study, research_eval, worked_case)
    try:
        plan = rep.plan_jobs(run_dirs, out, baseline=baseline, judge_study=judge_study,
                             research_eval=research_eval, sweep=sweep, run_reports=run_reports,
                             success_threshold=success_threshold, worked_case=worked_case)
    except rep.ReportError as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}", highlight=False)
        raise typer.Exit(2) from None
    edge.check_folder(out, what="--out")  # before any report runs: read-only, full, ...
    edge.check_scratch()
    edge.check_cache()
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=err, disable=not err.is_terminal) as bar:
        task = bar.add_task("reports", total=len(plan))

        def done(res: rep.JobResult) -> None:
            bar.advance(task)
            if res.state == "failed":
                err.print(f"[red]failed[/] {escape(res.job.name)}: {escape(res.reason)}",
                          highlight=False, soft_wrap=True)  # one line, whatever the width
            elif res.state == "not evaluated":
                err.print(f"[yellow]not evaluated[/] {escape(res.job.name)}: "
                          f"{escape(res.reason)}", highlight=False, soft_wrap=True)

        try:
            results = rep.run_jobs(plan, n_jobs=jobs, scheduler=scheduler, on_done=done,
                                   kernel_name=kernel, cell_timeout=cell_timeout)
        except rep.ReportError as exc:
            err.print(f"[red]error:[/] {escape(str(exc))}", highlight=False)
            raise typer.Exit(2) from None
    try:
        index = rep.write_index(results, out)
    except OSError as exc:
        raise edge.EdgeError(f"cannot write {Path(out) / 'index.html'} "
                             f"({exc.strerror or exc})") from None
    _print_summary(results)
    console.print(f"index: {escape(str(index))}", highlight=False, soft_wrap=True)
    if any(r.state == "failed" for r in results):
        raise typer.Exit(1)


@app.command()
@_edge
def validate(
    run_dirs: Annotated[list[Path], typer.Argument(help="eval-v2 run directories")],
    out: Annotated[Path | None, typer.Option(
        "--out", "-o", help="also write findings.{csv,json} and health.{csv,json} here "
                            "(never inside a run directory)")] = None,
    success_threshold: Annotated[float | None, typer.Option(
        "--success-threshold", help="run quality: answer accuracy at final_score >= this, in "
                                    "(0, 1] (default 0.8, the eval-v2 guide's)")] = None,
    debug: Debug = False,
) -> None:
    """Check runs (schema, ranges, cross-file invariants, health).

    Exit 0: no error finding.
    Exit 1: an error finding, or a run that cannot be read.
    Exit 2: usage error, or --out inside a run directory.
    Exit 3: no error, but a run is not evaluated (no task_metrics.csv: no health score).
    """
    _check_success_threshold(success_threshold)
    edge.check_cache()
    try:
        if out is not None:
            check_out_dir(out, run_dirs)
            edge.check_folder(out, what="--out")  # before anything is validated
        code = validate_command(run_dirs, console=console, out=out, threshold=success_threshold)
    except rep.ReportError as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}", highlight=False)
        raise typer.Exit(EXIT_USAGE) from None
    raise typer.Exit(code)


cache_app = typer.Typer(no_args_is_help=True, rich_markup_mode=None,
                        help="The parse cache: parsed CSV files kept as Parquet in the user "
                             "cache directory (or $DABENCH_CACHE_DIR).")


app.add_typer(cache_app, name="cache")


@cache_app.command("info")
@_edge
def cache_info(debug: Debug = False) -> None:
    """Show where the parse cache is, how many entries it holds and their size."""
    from dabench_analysis.load import cache

    edge.check_cache(writing=False)

    info = cache.info()
    console.print(f"cache: {escape(str(info['path']))}\nentries: {info['entries']}\n"
                  f"size: {info['bytes'] / 2**20:.1f} MiB\ntoolkit key: {info['toolkit']}",
                  soft_wrap=True, highlight=False)


@cache_app.command("clear")
@_edge
def cache_clear(debug: Debug = False) -> None:
    """Delete every parsed table from the parse cache (run files are never touched)."""
    from dabench_analysis.load import cache

    edge.check_cache()
    if Path(cache.cache_dir()).is_dir():
        edge.check_folder(cache.cache_dir(), what="cache folder")

    done = cache.clear()
    console.print(f"removed {done['removed']} entries ({done['bytes'] / 2**20:.1f} MiB) "
                  f"from {escape(str(done['path']))}", soft_wrap=True, highlight=False)


def main() -> None:  # pragma: no cover - console-script entry
    """Entry point of the console script."""
    app()


if __name__ == "__main__":  # pragma: no cover
    app()
