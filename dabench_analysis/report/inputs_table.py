"""The README's table of inputs, from the functions' declarations (:func:`dabench_analysis.schema.needs`):
every task_metrics column an analysis needs or uses, every optional file and the columns of those
files that an analysis or a check reads (:func:`columns_table`, :func:`columns_markdown`; a test
keeps the README equal to it)."""

from __future__ import annotations

from collections.abc import Iterable

from dabench_analysis.schema._declared import needing as sections_needing
from dabench_analysis.schema._declared import using as sections_using
from dabench_analysis.schema._files import OPTIONAL_FILES
from dabench_analysis.schema.checks import checks_reading
from dabench_analysis.schema.columns import TASK_COLUMNS
from dabench_analysis.schema.needs import FILE_CATALOGUES, FILE_USES, split_qualified


def file_columns_read(file: str) -> list[str]:
    """Columns of an optional CSV file that a section needs or a check reads, in catalogue order.

    Parameters
    ----------
    file : str
        A key of :data:`FILE_CATALOGUES`.

    Returns
    -------
    list of str
        Qualified names ``"<file>:<column>"``.

    Examples
    --------
    >>> file_columns_read("tool_calls.csv")[:3]
    ['tool_calls.csv:run_id', 'tool_calls.csv:task_id', 'tool_calls.csv:tool_name']
    """
    names = [f"{file}:{c}" for c in FILE_CATALOGUES[file]]
    return [n for n in names if sections_needing(n) or sections_using(n) or checks_reading(n)]


def columns_table(columns: Iterable[str] | None = None) -> list[dict[str, str]]:
    """One row per task_metrics column that a section needs or uses, per optional file, and
    per column of an optional CSV file that a section needs or a check reads.

    Returns
    -------
    list of dict
        Keys ``input``, ``tier`` (required / optional, the column's tier in its file's
        catalogue), ``needed_by`` (section names joined by ", ") and ``used_by`` (sections, or
        for files and their columns what validation reads them for); the rows of the README's
        table of inputs.
    """
    rows = []
    names = list(TASK_COLUMNS) if columns is None else list(columns)
    for name in names:
        need, use = sections_needing(name), sections_using(name)
        col = TASK_COLUMNS[name]
        if col.required or need or use:
            rows.append({"input": name, "tier": "required" if col.required else "optional",
                         "needed_by": ("every section (a run without it is rejected)"
                                       if col.required else ", ".join(need)),
                         "used_by": ", ".join(use)})
    for f in OPTIONAL_FILES:
        rows.append({"input": f, "tier": "optional", "needed_by": ", ".join(sections_needing(f)),
                     "used_by": FILE_USES[f]})
        for name in file_columns_read(f) if f in FILE_CATALOGUES else ():
            read, use = checks_reading(name), sections_using(name)
            rows.append({"input": name, "tier": "required" if FILE_CATALOGUES[f][
                split_qualified(name)[1]].required else "optional",
                "needed_by": ", ".join(sections_needing(name)),
                "used_by": "; ".join([*([", ".join(use)] if use else []), *(
                    ["validation: " + ", ".join(read)] if read else [])])})
    return rows


def columns_markdown() -> str:
    """:func:`columns_table` as the Markdown table the README shows (kept equal by a test).

    Examples
    --------
    >>> columns_markdown().splitlines()[0]
    '| input | tier | needed by (skipped without it) | used by when present |'
    """
    lines = ["| input | tier | needed by (skipped without it) | used by when present |",
             "|---|---|---|---|"]
    lines += [f"| `{r['input']}` | {r['tier']} | {r['needed_by'] or '-'} | {r['used_by'] or '-'} |"
              for r in columns_table()]
    return "\n".join(lines)
