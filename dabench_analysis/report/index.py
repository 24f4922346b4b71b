"""The batch's ``index.html``: every report with its state (evaluated, not evaluated, failed)."""

from __future__ import annotations

import html
import os
from collections.abc import Sequence
from pathlib import Path

from dabench_analysis._atomic import atomic_write
from dabench_analysis.report.jobs import JobResult

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
