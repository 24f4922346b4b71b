"""Directives that render the column catalogue (``dabench_analysis.schema``) as tables, so the
eval-v2 reference in the docs is the catalogue the loader reads and cannot drift from it.

``.. eval-v2-columns:: task_metrics`` (or ``trajectory``, ``tool_calls``), ``.. eval-v2-aliases::``,
``.. eval-v2-enums::``, ``.. eval-v2-replay::``. In MyST pages: a ```` ```{eval-v2-columns} task_metrics ```` fence.
"""

from __future__ import annotations

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective

from dabench_analysis import schema


def _cell(text: object) -> str:
    text = "" if text is None else str(text)
    return text.replace("\n", " ").replace("|", "\\|") or " "


def _list_table(header: list[str], rows: list[list[object]], widths: str | None = None) -> list[str]:
    lines = [".. list-table::", "   :header-rows: 1"]
    if widths:
        lines.append(f"   :widths: {widths}")
    lines.append("")
    for row in [header, *rows]:
        first, *rest = (_cell(v) for v in row)
        lines.append(f"   * - {first}")
        lines += [f"     - {v}" for v in rest]
    return lines


def _direction(column: schema.Column) -> str:
    return {True: "higher", False: "lower", None: "-"}[column.higher_is_better]


def _dtype(column: schema.Column) -> str:
    dtype = column.dtype
    if hasattr(dtype, "categories"):
        order = " < " if dtype.ordered else ", "
        return f"category ({order.join(map(str, dtype.categories))})"
    return str(dtype)


class _RstDirective(SphinxDirective):
    """Renders the reStructuredText lines of :meth:`rst` in place."""

    def rst(self) -> list[str]:
        raise NotImplementedError

    def run(self) -> list[nodes.Node]:
        container = nodes.container()
        self.state.nested_parse(StringList(self.rst(), source="dabench_analysis.schema"),
                                self.content_offset, container)
        return container.children


class ColumnsDirective(_RstDirective):
    """The columns of one eval-v2 file: name, group, dtype, unit, direction, tier, meaning."""

    required_arguments = 1
    FILES = {"task_metrics": "TASK_COLUMNS", "trajectory": "TRAJECTORY_COLUMNS",
             "tool_calls": "TOOL_CALL_COLUMNS"}

    def rst(self) -> list[str]:
        columns = getattr(schema, self.FILES[self.arguments[0]]).values()
        task_file = self.arguments[0] == "task_metrics"
        header = ["column", "group", "dtype", "unit", "higher is", "tier"]
        if task_file:
            header.append("meaning (guide section)")
        rows = []
        for c in columns:
            row = [f"``{c.name}``", c.group, _dtype(c), c.unit or "-", _direction(c),
                   "required" if c.required else "optional"]
            rows.append(row + [c.description] if task_file else row)
        return _list_table(header, rows)


class AliasesDirective(_RstDirective):
    """Names other eval-v2 versions write, read as the catalogue's."""

    def rst(self) -> list[str]:
        return _list_table(["written as", "read as"],
                           [[f"``{a}``", f"``{b}``"] for a, b in schema.ALIASES.items()])


class EnumsDirective(_RstDirective):
    """The values of every enum column, in the catalogue's order."""

    def rst(self) -> list[str]:
        rows = [[f"``{name}``", "ordered" if schema.column(name).dtype.ordered else "unordered",
                 ", ".join(f"``{v}``" for v in values)] for name, values in schema.ENUMS.items()]
        return _list_table(["column", "order", "values"], rows)


class ReplayDirective(_RstDirective):
    """The fields of ``task_replay.json``: type, tier, the task_metrics column it must equal."""

    def rst(self) -> list[str]:
        fields = schema.REPLAY_FIELDS
        fields = fields.values() if isinstance(fields, dict) else fields
        rows = [[f"``{f.path}``", f.type, "required" if f.required else "optional",
                 f"``{f.metric}``" if f.metric else "-", f.description] for f in fields]
        return _list_table(["field", "type", "tier", "equals (task_metrics)", "meaning"], rows)


def setup(app):
    app.add_directive("eval-v2-columns", ColumnsDirective)
    app.add_directive("eval-v2-aliases", AliasesDirective)
    app.add_directive("eval-v2-enums", EnumsDirective)
    app.add_directive("eval-v2-replay", ReplayDirective)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
