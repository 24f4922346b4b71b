# Over 400 lines (under 500): the command line in one place, its three commands (report,
# validate, cache) with their options, exit codes and the validate printer they share.
"""The ``dabench-analysis`` command line: ``report`` (batch of notebooks), ``validate`` (findings
and health) and ``cache`` (info, clear).
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console, ConsoleDimensions
from rich.markup import escape
from rich.text import Text

# What defining the commands needs, and nothing that imports pandas: the package's layers are
# imported inside the commands (and `rep`, `export` are lazy namespaces), so that `--help`
# costs about what importing typer does (issue 37).
from dabench_analysis import export
from dabench_analysis import report as rep
from dabench_analysis._lazy import need
from dabench_analysis.report import _edge as edge
from dabench_analysis.report._usage import OneLineGroup
from dabench_analysis.report.runner import CELL_TIMEOUT
from dabench_analysis.schema._files import CONFIG_FILE
from dabench_analysis.schema.columns import SUCCESS_THRESHOLD, check_threshold

#: Exit codes of ``validate``: no error; an error finding (or a run that cannot be read);
#: usage (typer, or an --out inside a run directory); no error but a run not evaluated.
EXIT_OK, EXIT_ERRORS, EXIT_USAGE, EXIT_NOT_EVALUATED = 0, 1, 2, 3


def _health_line(vr) -> Text:
    from dabench_analysis.validate._health import NOT_EVALUATED, _num, _pct, cause_text, health_text

    if vr.state == "not evaluated":
        return Text(NOT_EVALUATED, style="yellow")
    h = vr.health
    causes = cause_text(h)
    return Text(
        f"harness health {health_text(h.harness_score, h.harness_status, h.not_assessed)}"
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
        Success threshold of the run-quality score (:func:`validate_run`; default
        :data:`~dabench_analysis.schema.SUCCESS_THRESHOLD`, 0.8).

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
    EdgeError
        If ``out`` cannot be written (one line naming it and the cause; the previous set stays).

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
    import pandas as pd
    from rich.table import Table

    from dabench_analysis.report._validation import check_out_dir, write_validation
    from dabench_analysis.validate import validate_run

    if out is not None:
        check_out_dir(out, paths)
    console = console or LogConsole()
    colour = {"error": "red", "warning": "yellow", "info": "cyan"}
    reports = []
    for p in paths:
        vr = validate_run(p, threshold=threshold)
        reports.append(vr)
        console.print(Text(export.visible(f"{vr.path} — run {vr.run_id} ({vr.state}, "
                                   f"{vr.size or f'{vr.n_tasks} tasks'})"), style="bold"))
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
                row = "" if pd.isna(r.first_row) else \
                    f" row {r.first_row}" if r.n == 1 else f" rows from {r.first_row}"
                where = f"{r.files}{row}" + (f" [{_first(r.columns)}]" if r.columns else "")
                table.add_row(Text(r.severity, style=colour[r.severity]), Text(r.check),
                              str(r.n), Text(export.visible(where)), Text(export.visible(str(r.example))))
            console.print(table)
        console.print(_health_line(vr))
    pending = sum(vr.state == "not evaluated" for vr in reports)
    status = EXIT_ERRORS if any(not vr.ok and vr.state != "not evaluated" for vr in reports) \
        else EXIT_NOT_EVALUATED if pending else EXIT_OK
    if out is not None:
        try:
            written = write_validation(reports, out)
        except OSError as exc:  # the previous set stays as it was
            raise edge.cannot_write("--out", out, exc) from None
        for path in written:
            console.print(Text(export.visible(f"wrote {path}")))
    console.print(Text(f"{len(paths)} run(s) validated; "
                       + ("errors found" if status == EXIT_ERRORS else "no errors")
                       + (f"; {pending} not evaluated" if pending else ""),
                       style={EXIT_OK: "green", EXIT_ERRORS: "red"}.get(status, "yellow")))
    return status


# Help in click's plain layout (rich_markup_mode=None): at 80 columns rich's option panels
# left each option's text about 16 characters; plain text keeps 50.
app = typer.Typer(cls=OneLineGroup, add_completion=False, no_args_is_help=True,
                  rich_markup_mode=None,
                  help="Analyse eval-v2 runs of LLM data agents: reports, validation, cache.")


def _first(names: str, shown: int = 6) -> str:
    """A comma-separated list cut to its first ``shown`` names and how many more."""
    parts = names.split(", ")
    return names if len(parts) <= shown else \
        f"{', '.join(parts[:shown])}, ... ({len(parts) - shown} more)"


class LogConsole(Console):
    """A rich console that never hard-wraps when its output is not a terminal: piped into a
    file or a CI log, every line and table row is written whole (no 80-column folding of run
    names and check names); in a terminal it wraps at the terminal's width as usual."""

    @property
    def size(self) -> ConsoleDimensions:
        dims = super().size
        return dims if self.is_terminal else ConsoleDimensions(LOG_WIDTH, dims.height)

    def on_broken_pipe(self) -> None:
        """The reader went away (``| head``): print nothing more, and let the command finish
        (its files written, its own exit code) instead of rich's exit 1."""
        self.quiet = True
        with contextlib.suppress(OSError, ValueError, AttributeError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), self.file.fileno())  # nor at exit


#: The width of a line written to a file or a log (long enough for any row, never folded).
LOG_WIDTH = 10_000

console = LogConsole(stderr=False)


err = LogConsole(stderr=True)


#: ``--debug`` on every command: the traceback of an error instead of its one line.
Debug = Annotated[bool, typer.Option("--debug", help="on an error, show the Python traceback "
                                     "instead of one line (also: DABENCH_DEBUG=1)")]


def _say(line: str) -> None:
    err.print(Text(export.visible(line), style="red"), soft_wrap=True)


def _note(line: str) -> None:
    err.print(Text(export.visible(line), style="yellow"), soft_wrap=True)


def _edge(command):
    """Run a command so that what escapes it is one line with its exit code (report._edge)."""
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


#: A report's state as the command line colours it (its Reports table, its one-line notes).
_STATE_STYLE = {"evaluated": "green", "not evaluated": "yellow", "failed": "red"}


def _print_summary(results: list[rep.JobResult]) -> None:
    from rich.table import Table

    table = Table(title="Reports")
    for col in ("kind", "name", "state", "seconds", "reason"):
        table.add_column(col, overflow="fold")
    for r in results:
        table.add_row(r.job.kind, Text(export.visible(r.job.name, one_line=True)),
                      f"[{_STATE_STYLE[r.state]}]{r.state}[/]",
                      "" if r.state == "not evaluated" else export.format_estimate(r.seconds),
                      Text(export.visible(r.reason, one_line=True)))  # no time: not run
    console.print(table)


def _check_threshold(value: float | None) -> None:
    """A one-line usage error (exit 2) for a --threshold outside (0, 1]."""
    if value is None:
        return
    try:
        check_threshold(value, name="--threshold")
    except ValueError as exc:
        _say(f"error: {exc}")
        raise typer.Exit(EXIT_USAGE) from None


def _mapping(run_format: str | None, items: list[str] | None) -> dict[str, str]:
    """``--format`` checked and ``--map NAME=COLUMN`` as a dict; a usage error (exit 2)."""
    from dabench_analysis.harnesses._table import check_mapping
    from dabench_analysis.load._formats import check_format

    try:
        check_format(run_format)
        pairs = [i.split("=", 1) for i in items or []]
        bad = [i for i, p in zip(items or [], pairs, strict=True) if len(p) != 2 or not all(p)]
        if bad:
            raise ValueError(f"--map takes NAME=COLUMN (a catalogue column and the table's "
                             f"column), got {bad[0]!r}")
        return check_mapping(dict(pairs))
    except ValueError as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_USAGE) from None


@app.command()
@_edge
def report(
    run_dirs: Annotated[list[Path] | None, typer.Argument(
        help="eval-v2 run directories or other harnesses' files (Inspect logs, tau-bench "
             "results, per-task tables); default: every run in data/sample_runs/ with "
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
    threshold: Annotated[float | None, typer.Option(
        "--threshold", "--success-threshold",
        help="a task is correct when final_score >= this, in (0, 1], in the run, compare and "
             f"sweep reports (default {SUCCESS_THRESHOLD:g}, the eval-v2 guide's)")] = None,
    worked_case: Annotated[str | None, typer.Option(
        help="the judge study's worked case (Table 4), a test_case_id of its cases.csv; "
             "default: the first case with factoid counts")] = None,
    run_format: Annotated[str | None, typer.Option(
        "--format", help="format of the files among RUN_DIR: inspect, tau-bench, atif, table, "
                         "swe-agent or groupchat (default: detected from the content; a folder "
                         "is an eval-v2 run unless it holds trajectories or group chats)")] = None,
    column_map: Annotated[list[str] | None, typer.Option(
        "--map", help="a per-task table's column for a catalogue column, NAME=COLUMN "
                      "(repeat: --map task_id=sample_id --map final_score=score); every "
                      "COLUMN must be in each table given (exit 2 before any report "
                      "runs)")] = None,
    debug: Debug = False,
) -> None:
    """Execute the report notebooks for each run into OUT/<run folder name>/ and write
    OUT/index.html (comparisons: OUT/compare_<baseline folder>_vs_<run folder>/).

    --sweep: also the sweep report over every evaluated run, in OUT/sweep/ (linked first).

    --sweep --no-run-reports: the sweep report alone (plus any --baseline comparisons).

    --threshold 0.7 (alias --success-threshold): correctness (accuracy, failures, McNemar,
    flips, run quality) at final_score >= 0.7 instead of the guide's 0.8.

    Other harnesses: RUN_DIR may be an Inspect log, a tau-bench results file, an ATIF
    trajectory or a per-task table (CSV, JSON lines, Parquet; --map NAME=COLUMN for its
    columns).
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from dabench_analysis.report import _arguments as arguments

    _check_threshold(threshold)
    if scheduler:  # before anything runs: Dask is the [dask] extra
        try:
            need("distributed", what="--scheduler", extra="dask")
        except ImportError as exc:
            _say(f"error: {exc}")
            raise typer.Exit(EXIT_USAGE) from None
    mapping = _mapping(run_format, column_map)
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
    run_dirs = arguments.check_runs(run_dirs, say=_note, fmt=run_format)  # each once
    arguments.check_map(mapping, run_dirs, run_format)
    arguments.check_kernel(kernel)
    if baseline is not None and not Path(baseline).exists():  # a run folder or a file
        named = [d for d in run_dirs if str(baseline) in (Path(d).name, rep.run_name(d))]
        if len(named) != 1:
            _say(f"error: --baseline {baseline}: no such directory"
                 + (" (and not the folder name of exactly one run given)" if not named
                    else f" (and {len(named)} runs given have that folder name)"))
            raise typer.Exit(2)
        baseline = named[0]  # a folder name among the runs given
    if baseline is not None:
        arguments.check_baseline(baseline)
    arguments.check_report_inputs(judge_study, research_eval, worked_case)
    try:
        plan = rep.plan_jobs(run_dirs, out, baseline=baseline, judge_study=judge_study,
                             research_eval=research_eval, sweep=sweep, run_reports=run_reports,
                             threshold=threshold, worked_case=worked_case,
                             run_format=run_format, column_map=mapping)
    except rep.ReportError as exc:
        _say(f"error: {exc}")
        raise typer.Exit(2) from None
    arguments.check_in_the_way(plan, out)  # a file the toolkit did not write, where it would write
    edge.check_folder(out, what="--out")  # before any report runs: read-only, full, ...
    edge.check_scratch()
    edge.check_cache()
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=err, disable=not err.is_terminal) as bar:
        task = bar.add_task("reports", total=len(plan))

        def done(res: rep.JobResult) -> None:
            bar.advance(task)
            if res.state != "evaluated":  # one line, whatever the width
                err.print(f"[{_STATE_STYLE[res.state]}]{res.state}[/] "
                          f"{escape(export.visible(res.job.name, one_line=True))}: "
                          f"{escape(export.visible(res.reason, one_line=True))}",
                          highlight=False, soft_wrap=True)

        try:
            results = rep.run_jobs(plan, n_jobs=jobs, scheduler=scheduler, on_done=done,
                                   kernel_name=kernel, cell_timeout=cell_timeout)
        except rep.ReportError as exc:
            _say(f"error: {exc}")
            raise typer.Exit(2) from None
    try:
        index = rep.write_index(results, out)
    except OSError as exc:
        raise edge.cannot_write("--out", out, exc) from None
    _print_summary(results)
    console.print(f"index: {escape(export.visible(str(index), one_line=True))}", highlight=False,
                  soft_wrap=True)
    if any(r.state == "failed" for r in results):
        raise typer.Exit(1)


@app.command()
@_edge
def validate(
    run_dirs: Annotated[list[Path], typer.Argument(help="eval-v2 run directories")],
    out: Annotated[Path | None, typer.Option(
        "--out", "-o", help="also write findings.{csv,json} and health.{csv,json} here "
                            "(never inside a run directory)")] = None,
    threshold: Annotated[float | None, typer.Option(
        "--threshold", "--success-threshold",
        help="run quality: answer accuracy at final_score >= this, in (0, 1] (default "
             f"{SUCCESS_THRESHOLD:g}, the eval-v2 guide's)")] = None,
    debug: Debug = False,
) -> None:
    """Check runs (schema, ranges, cross-file invariants, health).

    Exit 0: no error finding.
    Exit 1: an error finding, or a run that cannot be read.
    Exit 2: usage error (a run folder that does not exist, too), or --out inside a run
    directory.
    Exit 3: no error, but a run is not evaluated (no task_metrics.csv: no health score).
    """
    from dabench_analysis.report import _arguments as arguments
    from dabench_analysis.report._validation import KIND as VALIDATE_KIND
    from dabench_analysis.report._validation import NAMES as VALIDATE_NAMES
    from dabench_analysis.report._validation import check_out_dir

    _check_threshold(threshold)
    run_dirs = arguments.check_runs(run_dirs, say=_note)  # each a folder or file, each once
    edge.check_cache()
    try:
        if out is not None:
            check_out_dir(out, run_dirs)
            arguments.check_in_the_way([], out, names=VALIDATE_NAMES, kind=VALIDATE_KIND)
            edge.check_folder(out, what="--out")  # before anything is validated
        code = validate_command(run_dirs, console=console, out=out, threshold=threshold)
    except rep.ReportError as exc:
        _say(f"error: {exc}")
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

    edge.check_cache(writing=False, default=True)

    info = cache.info()
    console.print(f"cache: {escape(str(info['path']))}\nentries: {info['entries']}\n"
                  f"size: {export.format_estimate(info['bytes'] / 2**20)} MiB\n"
                  f"toolkit key: {info['toolkit']}",
                  soft_wrap=True, highlight=False)


@cache_app.command("clear")
@_edge
def cache_clear(debug: Debug = False) -> None:
    """Delete every parsed table from the parse cache (run files are never touched)."""
    from dabench_analysis.load import cache

    edge.check_cache(default=True)
    if Path(cache.cache_dir()).is_dir():
        edge.check_folder(cache.cache_dir(), what="cache folder")

    done = cache.clear()
    mib = export.format_estimate(done["bytes"] / 2**20)
    console.print(f"removed {done['removed']} entries ({mib} MiB) "
                  f"from {escape(str(done['path']))}", soft_wrap=True, highlight=False)


def main() -> None:  # pragma: no cover - console-script entry
    """Entry point of the console script."""
    app()


if __name__ == "__main__":  # pragma: no cover
    app()
