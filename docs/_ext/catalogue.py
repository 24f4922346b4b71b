"""Directives that render the column catalogue (``dabench_analysis.schema``) as tables, so the
eval-v2 reference in the docs is the catalogue the loader reads and cannot drift from it.

``.. eval-v2-columns:: task_metrics`` (or ``trajectory``, ``tool_calls``), ``.. eval-v2-aliases::``,
``.. eval-v2-enums::``, ``.. eval-v2-replay::``. In MyST pages: a ```` ```{eval-v2-columns} task_metrics ```` fence.
"""

from __future__ import annotations

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from dabench_analysis import schema


class Code(str):
    """A cell shown as code."""


def _cell(value: object) -> nodes.entry:
    """A table cell: ``Code("x")`` as an inline literal, anything else as text."""
    paragraph = nodes.paragraph()
    if isinstance(value, Code):
        paragraph += nodes.literal(text=str(value))
    else:
        paragraph += nodes.Text("" if value is None else str(value))
    return nodes.entry("", paragraph)


def _table(header: list[str], rows: list[list[object]]) -> nodes.table:
    """A docutils table (built as nodes: the pages are Markdown, so no reST is parsed)."""
    group = nodes.tgroup(cols=len(header))
    group += [nodes.colspec(colwidth=1) for _ in header]
    head, body = nodes.thead(), nodes.tbody()
    head += nodes.row("", *(_cell(h) for h in header))
    body += [nodes.row("", *(_cell(v) for v in row)) for row in rows]
    group += [head, body]
    table = nodes.table(classes=["catalogue"])
    table += group
    return table


def _direction(column: schema.Column) -> str:
    return {True: "higher", False: "lower", None: "-"}[column.higher_is_better]


def _dtype(column: schema.Column) -> str:
    dtype = column.dtype
    if hasattr(dtype, "categories"):
        order = " < " if dtype.ordered else ", "
        return f"category ({order.join(map(str, dtype.categories))})"
    return str(dtype)


class _TableDirective(SphinxDirective):
    """Renders the (header, rows) of :meth:`table` as a table in place."""

    def table(self) -> tuple[list[str], list[list[object]]]:
        raise NotImplementedError

    def run(self) -> list[nodes.Node]:
        return [_table(*self.table())]


class ColumnsDirective(_TableDirective):
    """The columns of one eval-v2 file: name, group, dtype, unit, direction, tier, meaning."""

    required_arguments = 1
    FILES = {"task_metrics": "TASK_COLUMNS", "trajectory": "TRAJECTORY_COLUMNS",
             "tool_calls": "TOOL_CALL_COLUMNS"}

    def table(self) -> tuple[list[str], list[list[object]]]:
        columns = getattr(schema, self.FILES[self.arguments[0]]).values()
        task_file = self.arguments[0] == "task_metrics"
        header = ["column", "group", "dtype", "unit", "higher is", "tier"]
        if task_file:
            header.append("meaning (guide section)")
        rows = []
        for c in columns:
            row = [Code(c.name), c.group, _dtype(c), c.unit or "-", _direction(c),
                   "required" if c.required else "optional"]
            rows.append(row + [c.description] if task_file else row)
        return (header, rows)


class AliasesDirective(_TableDirective):
    """Names other eval-v2 versions write, read as the catalogue's."""

    def table(self) -> tuple[list[str], list[list[object]]]:
        return (["written as", "read as"],
                [[Code(a), Code(b)] for a, b in schema.ALIASES.items()])


class EnumsDirective(_TableDirective):
    """The values of every enum column, in the catalogue's order."""

    def table(self) -> tuple[list[str], list[list[object]]]:
        rows = [[Code(name), "ordered" if schema.columns.column(name).dtype.ordered else "unordered",
                 ", ".join(values)] for name, values in schema.ENUMS.items()]
        return (["column", "order", "values"], rows)


class ReplayDirective(_TableDirective):
    """The fields of ``task_replay.json``: type, tier, the task_metrics column it must equal."""

    def table(self) -> tuple[list[str], list[list[object]]]:
        fields = schema.replay.REPLAY_FIELDS
        fields = fields.values() if isinstance(fields, dict) else fields
        rows = [[Code(f.path), f.type, "required" if f.required else "optional",
                 Code(f.metric) if f.metric else "-", f.description] for f in fields]
        return (["field", "type", "tier", "equals (task_metrics)", "meaning"], rows)


def setup(app):
    app.add_directive("eval-v2-columns", ColumnsDirective)
    app.add_directive("eval-v2-aliases", AliasesDirective)
    app.add_directive("eval-v2-enums", EnumsDirective)
    app.add_directive("eval-v2-replay", ReplayDirective)
    # version: pages using the directives are read again when this file changes
    return {"version": "2", "parallel_read_safe": True, "parallel_write_safe": True}
