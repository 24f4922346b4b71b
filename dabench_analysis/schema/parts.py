"""What a report section computes, as data: the function (by dotted name), its arguments, where
its result is written and how it is shown.

The catalogue (:mod:`dabench_analysis.schema.sections`) may not import the layers that compute
(tables, figures, export), so a :class:`Part` names its function as text, ``"tables.main_results"``,
which the report layer resolves below ``dabench_analysis`` (:func:`dabench_analysis.report.section`).
Arguments that depend on the report are markers: :class:`Param` (a notebook parameter, such as
``success_threshold``) and :class:`Present` (the columns of a list that the run has).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Param:
    """A notebook parameter used as an argument: ``Param("success_threshold")``.

    Examples
    --------
    >>> THRESHOLD
    Param(name='success_threshold')
    """

    name: str


@dataclass(frozen=True)
class Present:
    """The entries of ``columns`` present in the run(s), in this order (a list of metrics that
    shrinks with the run; the section's ``uses`` say which may be absent).

    Examples
    --------
    >>> Present(("final_score", "analyst_score")).columns
    ('final_score', 'analyst_score')
    """

    columns: tuple[str, ...]


@dataclass(frozen=True)
class FirstPresent:
    """The first entry of ``columns`` present in the run(s) (a section's ``uses`` with
    ``uses_at_least=1`` guarantees one).

    Examples
    --------
    >>> FirstPresent(("cost", "total_tokens")).columns
    ('cost', 'total_tokens')
    """

    columns: tuple[str, ...]


#: The analysis' success threshold (``final_score >= success_threshold`` is a correct answer).
THRESHOLD = Param("success_threshold")


@dataclass(frozen=True)
class Part:
    """One result of a section: computed, written and displayed by the report layer.

    Attributes
    ----------
    compute : str
        A dotted name below ``dabench_analysis`` (``"tables.main_results"``,
        ``"figures.difficulty_bars"``, ``"export.reporting_paragraph"``), or, without a dot, the
        name of an earlier result of the same report (``"task_changes"``), to take rows of it.
    stem : str
        Where the result is written under the report folder: ``"tables/<name>"`` for a table
        (``.csv``, ``.tex``, ``.md``), ``"<name>"`` for a figure (``.png``, ``.pdf``),
        ``"<name>.md"`` for text. Empty: shown only.
    inputs : tuple of str
        Positional arguments, by name: the report's inputs (``"tasks"``, ``"tool_calls"``,
        ``"validation"``; ``"baseline"`` and ``"proposed"`` in a comparison) or earlier results.
    args : tuple of (str, value) pairs
        Keyword arguments: literal values, :class:`Param` or :class:`Present`.
    caption : str
        Caption of the written table (default: the section's title); a table that is only shown
        carries it in the page.
    columns : tuple of str
        Columns shown in the page and in the ``.tex``/``.md`` files, in order (those the result
        has); the ``.csv`` keeps every column. Empty: all.
    rows : tuple of (column, value)
        Keep only the rows where ``column == value`` (for a result taken from an earlier one).
    sort : str
        Sort the rows by these comma-separated columns, ``-`` in front for descending
        (``"-diff"``, ``"p_holm,run_a,run_b"``).
    show : str
        ``"table"`` (default), ``"none"``, or ``"counts:<column>"`` (the counts of that
        column's values instead of the rows).
    max_rows : int or None
        Rows shown in the page (the written table keeps all of them).
    key : str
        Name the result is kept under for later parts and the summary (default: the stem's
        last component, else the function's name).
    """

    compute: str
    stem: str = ""
    inputs: tuple[str, ...] = ("tasks",)
    args: tuple[tuple[str, Any], ...] = ()
    caption: str = ""
    columns: tuple[str, ...] = ()
    rows: tuple[str, Any] | tuple[()] = ()
    sort: str = ""
    show: str = "table"
    max_rows: int | None = None
    key: str = ""

    @property
    def result_key(self) -> str:
        """The name the result is kept under.

        Examples
        --------
        >>> Part("tables.main_results", "tables/main_results").result_key
        'main_results'
        >>> Part("validate.findings_table", inputs=("validation",)).result_key
        'findings_table'
        """
        return self.key or self.stem.rsplit("/", 1)[-1].removesuffix(".md") or \
            self.compute.rsplit(".", 1)[-1]
