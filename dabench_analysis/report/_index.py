"""The batch's ``index.html``: every report with its state (evaluated, not evaluated, failed).

A sweep report (``--sweep``) is also linked above the table, with its number of runs and of
shared tasks.

An evaluated report whose ``summary.json`` lists ``skipped`` sections says how many, with each
section and what it needs in a ``<details>`` element; a failed report links its kept notebook
(``report.failed.html``, ``report.failed.ipynb``) and the kernel's log when there is one.
"""

from __future__ import annotations

import contextlib
import html
import json
import os
import re
from collections.abc import Sequence
from pathlib import Path

from dabench_analysis._atomic import atomic_write
from dabench_analysis.export._text import visible
from dabench_analysis.report import _outputs as outputs
from dabench_analysis.report._jobs import KINDS, Job, JobResult
from dabench_analysis.schema.numbers import (
    format_count,
    format_estimate,
    format_interval,
    format_p,
)
from dabench_analysis.validate._health import health_status, health_text

#: The index page in the output root, and the name of the list that says the toolkit wrote it
#: (``.dabench-index.json``: a user's own ``index.html`` there is never overwritten).
INDEX, INDEX_KIND = "index.html", "index"
_INDEX_CSS = ("body{font-family:system-ui,sans-serif;margin:2rem;max-width:76rem}"
              "table{border-collapse:collapse}td,th{padding:.3rem .8rem;border-bottom:1px solid #ddd;"
              "text-align:left;vertical-align:top}.failed{color:#D55E00}.skipped{color:#777}"
              "td.numbers{min-width:18rem}td.time{white-space:nowrap}"
              "details ul{margin:.2rem 0;padding-left:1.2rem}")
#: The kind of a report as the index names it (a job's kind is a machine name).
_KINDS = {"compare": "comparison", "judge": "judge study", "research_eval": "research eval"}
#: The files a failed job keeps, with the words of their links in the index.
_FAILED_LINKS = (("report.failed.html", "failed report"), ("report.failed.ipynb", "notebook"),
                 ("report.failed.kernel.log", "kernel log"))


def _summary_text(summary: dict) -> str:
    """The key numbers of a report in words, each number by the package's one rule
    (:mod:`dabench_analysis.schema.numbers`), as the report's own tables print it.

    >>> _summary_text({"n_runs": 3, "n_shared_tasks": 1, "answer_accuracy": 0.5})
    '3 runs, 1 shared task, answer accuracy 0.500'
    >>> _summary_text({"n_tasks": 50, "answer_accuracy": 0.42, "answer_accuracy_ci_low": 0.325,
    ...                "answer_accuracy_ci_high": 0.525})  # the interval of the report's page
    '50 tasks, answer accuracy 0.420 [0.325, 0.525]'
    """
    keys = [("n_runs", "{} runs", format_count), ("n_shared_tasks", "{} shared tasks",
                                                   format_count),
            ("n_tasks", "{} tasks", format_count),
            ("answer_accuracy", "answer accuracy {}", format_estimate),
            ("mean_final_score", "mean final score {}", format_estimate),
            ("mean_diff_final_score", "mean difference in final score {}", format_estimate),
            ("p_adjusted_final_score", "Wilcoxon {} (Holm-adjusted)", format_p),
            ("n_cases", "{} cases", format_count), ("ac2_all", "Gwet's AC2 {}", format_estimate)]
    parts = []
    for key, template, rule in keys:
        value = summary.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value == value:
            if value == 1 and rule is format_count:  # "1 task", not "1 tasks"
                template = template[:-1]
            text = rule(value)
            if key == "answer_accuracy" and "answer_accuracy_ci_low" in summary:
                text = format_interval(value, _number(summary["answer_accuracy_ci_low"]),
                                       _number(summary.get("answer_accuracy_ci_high")))
            parts.append(template.format(text))
    return ", ".join(parts + _health(summary))


def _number(value) -> float:
    """A summary's number, NaN for anything else (null: an interval not estimable)."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    return float(value) if ok else float("nan")


def _code(text: str) -> str:
    """Escaped text with its `command` spans as <code> (a hint names the harness's command).

    >>> _code("run `dabench eval-v2 &lt;RUN_ID&gt;` first")
    'run <code>dabench eval-v2 &lt;RUN_ID&gt;</code> first'
    """
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", text)


def _seconds(res: JobResult) -> str:
    """The report's run time by the number rule; none for a report that was not run or that an
    earlier batch wrote."""
    if res.state == "not evaluated" or res.reason == EARLIER:
        return ""
    return f"{format_estimate(res.seconds)} s"


#: The reason shown for a report an earlier batch wrote into the same output folder.
EARLIER = "written by an earlier batch into this folder"


def earlier_reports(results: Sequence[JobResult], out: str | os.PathLike[str]) -> list[JobResult]:
    """The reports earlier batches wrote into ``out`` that this batch did not rewrite: folders
    of ``out`` holding the toolkit's ledger (``.dabench-report.json``) and a ``summary.json``
    whose ``report`` is a known kind, in name order; each an evaluated :class:`JobResult` with
    that summary, so that ``index.html`` keeps listing every report in ``out``.

    Parameters
    ----------
    results : sequence of JobResult
        This batch's jobs (their folders are not listed again).
    out : path-like
        The batch's output root.

    Returns
    -------
    list of JobResult
        One per earlier report, reason :data:`EARLIER`, no time; empty when ``out`` does not
        exist. A folder whose ``summary.json`` cannot be read or parsed is passed over.
    """
    out = Path(out)
    mine = {res.job.out_dir.resolve() for res in results}
    found = []
    for folder in sorted(p for p in out.iterdir() if p.is_dir()) if out.is_dir() else []:
        if folder.resolve() in mine or not outputs.ledger_path(folder).is_file():
            continue
        with contextlib.suppress(OSError, ValueError):
            summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
            if isinstance(summary, dict) and summary.get("report") in KINDS:
                job = Job(summary["report"], folder.name, Path(), {}, folder.resolve())
                found.append(JobResult(job, "evaluated", EARLIER, summary=summary))
    return found


def _health(summary: dict) -> list[str]:
    """The run report's harness health as validate prints it (one status everywhere):
    ``health_score`` and ``validation_errors`` of its summary.json."""
    score, errors = summary.get("health_score", "absent"), summary.get("validation_errors", 0)
    if score == "absent" or not isinstance(errors, int) or isinstance(errors, bool):
        return []
    score = float("nan") if not isinstance(score, (int, float)) else float(score)
    unknown = summary.get("health_not_assessed", [])
    unknown = [str(u) for u in unknown] if isinstance(unknown, list) else []
    status = health_status(score, n_errors=errors, n_not_assessed=len(unknown))
    return [f"harness health {health_text(score, status, unknown)}"]


def _summary(res: JobResult) -> dict:
    """The job's summary, read from its ``summary.json`` when the result does not carry it."""
    if res.summary or res.state != "evaluated":
        return res.summary if isinstance(res.summary, dict) else {}
    with contextlib.suppress(OSError, ValueError):
        data = json.loads((res.job.out_dir / "summary.json").read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    return {}


def _skipped(summary: dict) -> list[tuple[str, list[str]]]:
    """``summary["skipped"]`` as (section, [what it needs]) pairs, tolerating odd entries."""
    entries = summary.get("skipped")
    if not isinstance(entries, list):
        return []
    pairs = []
    for entry in entries:
        if isinstance(entry, dict):
            section, title = str(entry.get("section") or "?"), entry.get("title")
            if title and str(title) != section:
                section = f"{title} ({section})"
            missing = entry.get("missing", [])
            missing = [str(m) for m in missing] if isinstance(missing, list) else [str(missing)]
        else:
            section, missing = str(entry), []
        pairs.append((section, missing))
    return pairs


def _state_cell(res: JobResult, summary: dict) -> str:
    state = html.escape(res.state)
    skipped = _skipped(summary) if res.state == "evaluated" else []
    if not skipped:
        return state
    n = len(skipped)
    lines = summary.get("skipped_lines")
    if isinstance(lines, list) and lines and all(isinstance(x, str) for x in lines):
        # the report's own grouped lines (report._sections.group_skips), Markdown marks removed
        items = "".join(f"<li>{html.escape(re.sub(r'[*`]', '', x))}</li>" for x in lines)
    else:
        items = "".join(f"<li>{html.escape(section)}"
                        + (f": needs {html.escape(', '.join(missing))}" if missing else "")
                        + "</li>" for section, missing in skipped)
    return (f"<details><summary>{state} — {n} section{'s' if n != 1 else ''} skipped</summary>"
            f"<ul>{items}</ul></details>")


def _href(path: Path, out: Path) -> str:
    return html.escape(path.relative_to(out.resolve()).as_posix(), quote=True)


def _report_cell(res: JobResult, out: Path) -> str:
    job = res.job
    name = html.escape(job.name)
    if res.state == "evaluated":
        return f'<a href="{_href(job.out_dir / "report.html", out)}">{name}</a>'
    if res.state != "failed":
        return name
    kept = [(job.out_dir / f, label) for f, label in _FAILED_LINKS if (job.out_dir / f).is_file()]
    if not kept:
        return name
    links = " · ".join(f'<a href="{_href(p, out)}">{label}</a>' for p, label in kept)
    return f"{name}<br><small>{links}</small>"


def _sweep_links(results: Sequence[JobResult], out: Path) -> str:
    """A paragraph linking each evaluated sweep report, above the table."""
    links = []
    for res in results:
        if res.job.kind == "sweep" and res.state == "evaluated":
            text = _summary_text(_summary(res))
            links.append(f'<p class="sweep"><strong>Sweep:</strong> <a href="'
                         f'{_href(res.job.out_dir / "report.html", out)}">leaderboard, pairwise '
                         f"comparisons and item analysis</a>"
                         + (f" ({html.escape(text)})" if text else "") + "</p>")
    return "".join(links)


def write_index(results: Sequence[JobResult], out: str | os.PathLike[str]) -> Path:
    """Write ``out/index.html``: one row per job with its state and a link to its report.

    Parameters
    ----------
    results : sequence of JobResult
        One per job. An evaluated job's key numbers and ``skipped`` sections come from
        ``JobResult.summary`` or, when that is empty, from ``summary.json`` in its folder.
    out : path-like
        Output root of the report.

    Returns
    -------
    Path
        The index page, written atomically and listed in ``out/.dabench-index.json``.

    Raises
    ------
    InTheWay
        ``out/index.html`` exists and the toolkit did not write it (never overwritten).

    Notes
    -----
    Every text from a run or a summary (ids, reasons, section names, missing columns) is
    HTML-escaped; links are relative to ``out``. An evaluated report with skipped sections
    shows "evaluated — N sections skipped" with a ``<details>`` list of each section and what
    it needs; a failed one links the failed notebook (HTML, ipynb) and kernel log it kept.
    An evaluated sweep report is linked again above the table.

    Examples
    --------
    >>> import tempfile
    >>> from dabench_analysis.report._jobs import Job
    >>> tmp = tempfile.TemporaryDirectory()
    >>> out = Path(tmp.name)
    >>> job = Job("run", "r1", Path("run_report.ipynb"), {}, (out / "r1").resolve())
    >>> page = write_index([JobResult(job, "failed", "no <b>data</b>")], out).read_text()
    >>> "no &lt;b&gt;data&lt;/b&gt;" in page
    True
    >>> tmp.cleanup()
    """
    out = Path(out)
    rows = []
    for res in [*results, *earlier_reports(results, out)]:
        summary = _summary(res)
        cls = {"failed": "failed", "not evaluated": "skipped"}.get(res.state, "")
        kind = _KINDS.get(res.job.kind, res.job.kind)
        rows.append(f'<tr class="{cls}"><td>{html.escape(kind)}</td>'
                    f"<td>{_report_cell(res, out)}</td><td>{_state_cell(res, summary)}</td>"
                    f'<td class="numbers">{html.escape(_summary_text(summary))}</td>'
                    f"<td>{_code(html.escape(res.reason))}</td>"
                    f'<td class="time">{_seconds(res)}</td></tr>')
    page = ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>dabench-analysis reports</title><style>{_INDEX_CSS}</style></head><body>"
            "<h1>dabench-analysis reports</h1>" + _sweep_links(results, out)
            + "<table><thead><tr><th>kind</th><th>report</th>"
            "<th>state</th><th>key numbers</th><th>reason</th><th>time</th></tr></thead><tbody>"
            + "\n".join(rows) + "</tbody></table></body></html>\n")
    with outputs.stage(out) as staging:  # listed as the toolkit's (outputs.install)
        with atomic_write(staging / INDEX) as fh:
            fh.write(visible(page))  # control characters from run names or reasons as \x00
        outputs.install(staging, out, kind=INDEX_KIND)
    return out / INDEX
