"""The ``dabench-analysis`` command line: ``report`` (batch of notebooks), ``validate`` (findings
and health) and ``cache`` (info, clear).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import pandas as pd
import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from dabench_analysis import report as rep
from dabench_analysis.report.runner import CELL_TIMEOUT
from dabench_analysis.validate.health import _num, _pct
from dabench_analysis.validate.run import validate_run


def validate_command(paths: Sequence[str | os.PathLike[str]], *, console=None) -> int:
    """Validate runs and print their findings grouped by check (the ``validate`` command).

    Parameters
    ----------
    paths : sequence of path-like
        Run directories.
    console : rich.console.Console, optional
        Where to print; default standard output.

    Returns
    -------
    int
        1 if any run has an error finding (or could not be read), else 0.

    Notes
    -----
    Text from the run (ids, messages) is printed as plain text, never as rich markup.

    Examples
    --------
    >>> import io
    >>> from rich.console import Console
    >>> validate_command(["data/sample_runs/proposed_aat"], console=Console(file=io.StringIO()))
    0
    >>> validate_command(["data/sample_runs/pending_run"], console=Console(file=io.StringIO()))
    1
    """
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = console or Console(soft_wrap=False)
    colour = {"error": "red", "warning": "yellow", "info": "cyan"}
    status = 0
    for p in paths:
        vr = validate_run(p)
        console.print(Text(f"{vr.path} — run {vr.run_id} ({vr.state}, {vr.n_tasks} tasks)",
                           style="bold"))
        summary = vr.summary()
        if summary.empty:
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
        h = vr.health
        console.print(Text(
            f"harness health {_num(h.harness_score)} {h.harness_status}"
            + (" (not HEALTHY while there are errors)" if h.harness_status != h.harness_band
               and not vr.ok and h.harness_score >= 9 else "")
            + f" — score band {h.harness_band}: {h.action}; run quality {_num(h.run_quality_score)} {h.run_quality_status} "
            f"(answer accuracy {_pct(h.answer_accuracy)}, execution success "
            f"{_pct(h.execution_success_rate)})"))
        status = max(status, 0 if vr.ok else 1)
    console.print(Text(f"{len(paths)} run(s) validated; " + (
        "errors found" if status else "no errors"), style="red" if status else "green"))
    return status


app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Analyse eval-v2 runs of LLM data agents: reports, validation, cache.")


console = Console(stderr=False)


err = Console(stderr=True)


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
                      f"{r.seconds:.1f}", escape(r.reason))
    console.print(table)


@app.command()
def report(
    run_dirs: Annotated[list[Path] | None, typer.Argument(
        help="eval-v2 run directories; default: every run in data/sample_runs/ with "
             "baseline_react as baseline, plus the sample judge study and research-eval session")] = None,
    out: Annotated[Path, typer.Option("--out", "-o", help="output root")] = Path("figures"),
    baseline: Annotated[Path | None, typer.Option(help="compare every other run to this one")] = None,
    jobs: Annotated[int, typer.Option("--jobs", "-j", min=1, help="parallel notebook processes")] = 1,
    scheduler: Annotated[str | None, typer.Option(
        help="address of an existing Dask distributed scheduler to run the notebooks on")] = None,
    judge_study: Annotated[Path | None, typer.Option(help="judge-study data folder")] = None,
    research_eval: Annotated[Path | None, typer.Option(help="research-eval session folder")] = None,
    kernel: Annotated[str, typer.Option(help="Jupyter kernel name")] = "python3",
    cell_timeout: Annotated[int, typer.Option(
        min=1, help="seconds one notebook cell may run before its report fails")] = CELL_TIMEOUT,
) -> None:
    """Execute the report notebooks for each run into OUT/<run_id>/ and write OUT/index.html."""
    if not run_dirs:
        root = _sample_root()
        run_dirs = sorted(p for p in (root / "sample_runs").iterdir() if p.is_dir())
        baseline = baseline or root / "sample_runs" / SAMPLE_BASELINE
        judge_study = judge_study or (root / "judge_study" if (root / "judge_study").is_dir()
                                      else None)
        research_eval = research_eval or (root / "research_eval" if (root / "research_eval")
                                          .is_dir() else None)
    try:
        plan = rep.plan_jobs(run_dirs, out, baseline=baseline, judge_study=judge_study,
                             research_eval=research_eval)
    except rep.ReportError as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}", highlight=False)
        raise typer.Exit(2) from None
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=err, disable=not err.is_terminal) as bar:
        task = bar.add_task("reports", total=len(plan))

        def done(res: rep.JobResult) -> None:
            bar.advance(task)
            if res.state == "failed":
                err.print(f"[red]failed[/] {escape(res.job.name)}: {escape(res.reason)}",
                          highlight=False)
            elif res.state == "not evaluated":
                err.print(f"[yellow]not evaluated[/] {escape(res.job.name)}: "
                          f"{escape(res.reason)}", highlight=False)

        try:
            results = rep.run_jobs(plan, n_jobs=jobs, scheduler=scheduler, on_done=done,
                                   kernel_name=kernel, cell_timeout=cell_timeout)
        except rep.ReportError as exc:
            err.print(f"[red]error:[/] {escape(str(exc))}", highlight=False)
            raise typer.Exit(2) from None
    index = rep.write_index(results, out)
    _print_summary(results)
    console.print(f"index: {escape(str(index))}", highlight=False, soft_wrap=True)
    if any(r.state == "failed" for r in results):
        raise typer.Exit(1)


@app.command()
def validate(
    run_dirs: Annotated[list[Path], typer.Argument(help="eval-v2 run directories")],
) -> None:
    """Check runs (schema, ranges, cross-file invariants, health); exit 1 on any error."""

    raise typer.Exit(validate_command(run_dirs, console=console))


cache_app = typer.Typer(no_args_is_help=True, help="The parse cache: parsed CSV files kept as "
                        "Parquet in the user cache directory (or $DABENCH_CACHE_DIR).")


app.add_typer(cache_app, name="cache")


@cache_app.command("info")
def cache_info() -> None:
    """Show where the parse cache is, how many entries it holds and their size."""
    from dabench_analysis.load import cache

    info = cache.info()
    console.print(f"cache: {escape(str(info['path']))}\nentries: {info['entries']}\n"
                  f"size: {info['bytes'] / 2**20:.1f} MiB\ntoolkit key: {info['toolkit']}",
                  soft_wrap=True, highlight=False)


@cache_app.command("clear")
def cache_clear() -> None:
    """Delete every parsed table from the parse cache (run files are never touched)."""
    from dabench_analysis.load import cache

    done = cache.clear()
    console.print(f"removed {done['removed']} entries ({done['bytes'] / 2**20:.1f} MiB) "
                  f"from {escape(str(done['path']))}", soft_wrap=True, highlight=False)


def main() -> None:  # pragma: no cover - console-script entry
    """Entry point of the console script."""
    app()


if __name__ == "__main__":  # pragma: no cover
    app()
