"""Tables in a report notebook as a reader sees them: :func:`show` displays a result table
through :func:`dabench_analysis.export.present` (estimate and interval in one cell, human labels,
the package's rounding rule) as HTML with every column visible, never elided by pandas.

A table too wide for the page (by the characters of its widest cells) is transposed when it has
a few rows, and split into parts that repeat its first (key) column otherwise. Long text (a
thought, an observation, an error message) shows its beginning on one line in a column at least
:data:`TEXT_MIN_WIDTH` wide, the whole text a click away (``<details>``) and in a tooltip.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

import pandas as pd

from dabench_analysis.export import present
from dabench_analysis.export._presentation import column_label
from dabench_analysis.schema._labels import LABELS
from dabench_analysis.schema.numbers import (
    format_count,
    format_estimate,
    format_interval,
    format_parameter,
    format_pvalue,
    is_missing,
)

#: Characters of cell text a page shows in one row (about 1170 px of the report's font).
PAGE_CHARACTERS = 160
#: A wide table with at most this many rows is transposed instead of split.
TRANSPOSE_ROWS = 3
#: Characters a text cell counts for at most: longer text wraps.
WRAP_CHARACTERS = 40
#: A text column holding a value longer than this is a column of long text.
LONG_TEXT = 80
#: In a column of long text, a value longer than this shows on one line, cut with "…" where the
#: column ends, the whole of it on a click and in a tooltip.
CUT_TEXT = 30
#: Least width of a column of long text (never one word per line).
TEXT_MIN_WIDTH = "200px"
#: Longest tooltip (characters) of a long text cell; the line shown is at most as long.
TOOLTIP_CHARACTERS = 2000
#: One line, cut with an ellipsis where the cell ends (the cell's width is the table's to set).
_ONE_LINE = ("cursor:pointer;white-space:nowrap;overflow:hidden;text-overflow:ellipsis;width:0;"
             "min-width:100%")


def _width(frame: pd.DataFrame) -> list[int]:
    cells = [max(map(len, map(str, col.tolist() if col.dtype == object else
                              col.astype(str).tolist())), default=0)
             for _, col in frame.items()]  # str of each cell, as astype(str) writes it
    heads = [max(len(w) for w in str(c).split()) if str(c).split() else 1 for c in frame.columns]
    return [min(max(int(c), h), WRAP_CHARACTERS) + 3 for c, h in zip(cells, heads, strict=True)]


def _transpose(frame: pd.DataFrame, align: str) -> tuple[pd.DataFrame, str]:
    key = frame.columns[0]
    if align[:1] == "l" and frame[key].is_unique and len(frame.columns) > 1:
        body = frame.set_index(key).T
    else:
        body = frame.T
        body.columns = ["Value"] if len(frame) == 1 else [str(i + 1) for i in range(len(frame))]
    body = body.rename_axis("").reset_index()
    return body, "l" * len(body.columns)  # a column now mixes numbers and text


def _split(frame: pd.DataFrame, align: str) -> list[tuple[pd.DataFrame, str]]:
    """Parts of at most :data:`PAGE_CHARACTERS`, each led by the key: the first one or two
    text columns, as many as it takes to tell the rows apart."""
    widths = _width(frame)
    lead = 1 if align[:1] == "l" else 0
    if align[:2] == "ll" and not frame.iloc[:, 0].is_unique:
        lead = 2
    parts, current, used = [], [], sum(widths[:lead])
    for i in range(lead, len(frame.columns)):
        if current and used + widths[i] > PAGE_CHARACTERS:
            parts.append(current)
            current, used = [], sum(widths[:lead])
        current.append(i)
        used += widths[i]
    parts.append(current)
    return [(frame.iloc[:, list(range(lead)) + idx], align[:lead] + "".join(align[i] for i in idx))
            for idx in parts if idx]


def _long(text: str) -> str:
    """A long text cell: one line cut where the column ends, the whole a click (or a hover)
    away."""
    tip = text if len(text) <= TOOLTIP_CHARACTERS else text[:TOOLTIP_CHARACTERS] + " …"
    return (f'<details class="dabench-long"><summary title="{html.escape(tip)}" '
            f'style="{_ONE_LINE}">{html.escape(tip)}</summary>'
            f'<div style="white-space:pre-wrap">{html.escape(text)}</div></details>')


def _cell(tag: str, text: object, a: str, long: bool) -> str:
    """Headers wrap at spaces, numbers never; long text columns keep a readable width."""
    style = "text-align:left" if a == "l" else "text-align:right"
    style += ";white-space:nowrap" if a == "r" and tag == "td" else ""
    style += f";min-width:{TEXT_MIN_WIDTH};vertical-align:top" if long else ""
    body = _long(str(text)) if tag == "td" and long and len(str(text)) > CUT_TEXT \
        else html.escape(str(text))
    return f'<{tag} style="{style}">{body}</{tag}>'


def _attrs(attrs: Mapping[str, str] | None) -> str:
    return "".join(f' {k}="{html.escape(v)}"' for k, v in (attrs or {}).items())


def _table(frame: pd.DataFrame, align: str, caption: str | None,
           rows: Sequence[Mapping[str, str] | None] | None = None, whole: bool = False) -> str:
    long = [a == "l" and bool(frame[c].astype(str).str.len().gt(LONG_TEXT).any())
            for c, a in zip(frame.columns, align, strict=True)]
    head = "".join(_cell("th", c, a, w) for c, a, w in zip(frame.columns, align, long,
                                                          strict=True))
    rows = rows or [None] * len(frame)
    body = "".join(f"<tr{_attrs(attrs)}>" + "".join(
        _cell("td", v, a, w) for v, a, w in zip(row, align, long, strict=True)) + "</tr>"
        for row, attrs in zip(frame.to_numpy(), rows, strict=True))
    cap = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    width = ";width:100%" if whole and any(long) else ""  # long text: the page's width
    return (f'<table class="dabench-table" style="table-layout:auto{width}">{cap}<thead><tr>'
            f"{head}</tr></thead><tbody>{body}</tbody></table>")


def _frame(data: pd.DataFrame | pd.Series | Mapping) -> pd.DataFrame:
    if isinstance(data, pd.DataFrame):
        return data
    if isinstance(data, pd.Series):
        named = data.index.name is not None or not isinstance(data.index, pd.RangeIndex)
        frame = data.to_frame(data.name if data.name is not None else "value")
        return frame.reset_index() if named else frame
    if isinstance(data, Mapping):
        return key_numbers_frame(data)
    raise TypeError(f"show() takes a DataFrame, Series or dict, got {type(data).__name__}")


#: Fields of a summary that are not key numbers (file metadata, long tables shown elsewhere).
HIDDEN_KEYS = ("schema_version", "report", "manifest", "leaderboard")
#: Key numbers that are parameters of the analysis: printed as given (0.8, not 0.800).
PARAMETER_KEYS = ("success_threshold", "pass_threshold", "threshold", "ci", "alpha", "seed",
                  "n_boot")


def _is_p(key: str) -> bool:
    return key == "p" or key.startswith("p_") or "p_value" in key


def _text(key: str, value) -> str:
    """One key number as text by the package's rule; lists and dicts spelled out, no literal."""
    if isinstance(value, Mapping):
        if set(value) == {"ci_low", "ci_high"}:
            return f"[{_text(key, value['ci_low'])}, {_text(key, value['ci_high'])}]"
        inner = [f"{LABELS.get(str(k), k)}: {_text(str(k), v)}" for k, v in value.items()]
        return "; ".join(inner) if inner else "none"
    if isinstance(value, (list, tuple)):
        items = [str(v.get("title") or v.get("section")) if isinstance(v, Mapping) and
                 ("title" in v or "section" in v) else _text(key, v) for v in value]
        return ", ".join(items) if items else "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None or is_missing(value):
        return "n/a"
    if key in PARAMETER_KEYS:
        return format_parameter(value)
    if isinstance(value, int) or (isinstance(value, float) and key.startswith("n_")):
        return format_count(value)
    if isinstance(value, float):
        return format_pvalue(value) if _is_p(key) else format_estimate(value)
    return str(value)


def key_numbers_frame(numbers: Mapping) -> pd.DataFrame:
    """A report's key numbers as a labelled table a reader sees: one row per quantity.

    Parameters
    ----------
    numbers : mapping
        Key numbers (a report's summary): numbers, text, lists and dicts.

    Returns
    -------
    DataFrame
        Columns ``quantity`` (the catalogue's label of the key) and ``value`` (text by the
        package's number rule: estimates by :func:`~dabench_analysis.schema.numbers.
        format_estimate`, p-values (keys ``p_*`` or with ``p_value``) by ``format_pvalue``,
        counts (``n_*``) as integers; ``X`` with ``X_ci_low``/``X_ci_high`` as one
        ``estimate [low, high]`` cell; lists joined with commas (sections by their titles),
        dicts as ``key: value`` pairs, an empty one "none"; never a Python literal). The
        fields of :data:`HIDDEN_KEYS` are left out.

    Examples
    --------
    >>> key_numbers_frame({"n_tasks": 80, "answer_accuracy": 0.9, "answer_accuracy_ci_low": 0.815,
    ...                    "answer_accuracy_ci_high": 0.948, "skipped": [],
    ...                    "p_value_final_score": 0.0928}).to_dict("list")["value"]
    ['80', '0.900 [0.815, 0.948]', 'none', '0.093']
    """
    rows = []
    for key, value in numbers.items():
        key = str(key)
        if key in HIDDEN_KEYS or key.endswith(("_ci_low", "_ci_high")) or \
                (key in PARAMETER_KEYS and value is None):  # no threshold: not a number
            continue
        if key.endswith("_ci_method"):
            rows.append({"quantity": f"{column_label(key.removesuffix('_ci_method'))}: interval",
                         "value": str(value)})
            continue
        if f"{key}_ci_low" in numbers:
            text = format_interval(value, numbers[f"{key}_ci_low"], numbers.get(f"{key}_ci_high"))
        else:
            text = _text(key, value)
        rows.append({"quantity": column_label(key), "value": text})
    return pd.DataFrame(rows, columns=["quantity", "value"], dtype=object)


def table_html(
    df: pd.DataFrame | pd.Series | Mapping,
    *,
    columns: Sequence[str] | None = None,
    labels: Mapping[str, str] | None = None,
    caption: str | None = None,
    digits: int = 3,
    max_rows: int | None = None,
    row_attrs: Sequence[Mapping[str, str] | None] | None = None,
    fit: bool = True,
) -> str:
    """The HTML :func:`show` displays: one or more ``<table>`` elements and the table's notes.

    Parameters
    ----------
    df : DataFrame, Series or dict
        A result table of the package (Series and dict: see :func:`show`).
    columns, labels, digits : optional
        As in :func:`dabench_analysis.export.present`.
    caption : str, optional
        Shown above the table.
    max_rows : int, optional
        Show only the first ``max_rows`` rows, with a note saying how many there are (for
        tables of a sweep that grow as k(k − 1)/2; the saved files keep every row).
    row_attrs : sequence of mapping, optional
        HTML attributes of each row's ``<tr>`` (``class``, ``style``, ``title``; None for
        none), one per row of ``df``; e.g. to highlight a row. Not used when the table is
        transposed.
    fit : bool
        Transpose or split a table too wide for the page (the default); False keeps it whole
        and as wide as the page when it holds long text (a list of steps read row by row).

    Returns
    -------
    str
        HTML with every cell escaped; every column shown (wide tables transposed or split,
        see the module notes), a constant ``method`` column as a note under the table. In a
        column holding text longer than :data:`LONG_TEXT` characters (at least
        :data:`TEXT_MIN_WIDTH` wide), a value longer than :data:`CUT_TEXT` shows on one line
        cut with "…" where the column ends, the whole text in a ``<details>`` element (a click)
        and a tooltip.

    Raises
    ------
    ValueError
        A column of ``columns`` not in ``df``, or ``row_attrs`` with fewer entries than rows.

    Examples
    --------
    >>> t = pd.DataFrame({"metric": ["final_score"], "mean": [0.8778], "ci_low": [0.8174],
    ...                   "ci_high": [0.9201], "method": ["logit t"]})
    >>> text = table_html(t)
    >>> "<td style=\\"text-align:right;white-space:nowrap\\">0.878 [0.817, 0.920]</td>" in text
    True
    >>> "Method: logit t" in text
    True
    """
    shown = present(_head(_frame(df), max_rows), columns=columns, labels=labels, digits=digits)
    return _html(shown, df, caption=caption, max_rows=max_rows, row_attrs=row_attrs, fit=fit)


def _html(shown: pd.DataFrame, df, *, caption: str | None, max_rows: int | None,
          row_attrs: Sequence[Mapping[str, str] | None] | None = None, fit: bool = True) -> str:
    """The HTML of a presented table (:func:`table_html`, from ``present``'s result)."""
    align = shown.attrs["align"]
    rows = list(row_attrs)[:len(shown)] if row_attrs is not None else None
    if rows is not None and len(rows) < len(shown):
        raise ValueError(f"row_attrs has {len(rows)} entries for {len(shown)} rows")
    if not fit or sum(_width(shown)) <= PAGE_CHARACTERS:
        parts = [(shown, align)]
    elif len(shown) <= TRANSPOSE_ROWS:
        parts, rows = [_transpose(shown, align)], None
    else:
        parts = _split(shown, align)
    captions = [caption] + [f"{caption} (continued)" if caption else None] * (len(parts) - 1)
    tables = [_table(part, a, cap, rows, whole=not fit)
              for (part, a), cap in zip(parts, captions, strict=True)]
    notes = "".join(f'<p class="dabench-table-note">{html.escape(n)}</p>'
                    for n in [*shown.attrs["notes"], *_cut_note(df, max_rows)])
    return f'<div class="dabench-tables">{"".join(tables)}{notes}</div>'


def show(
    df: pd.DataFrame | pd.Series | Mapping,
    *,
    columns: Sequence[str] | None = None,
    labels: Mapping[str, str] | None = None,
    caption: str | None = None,
    digits: int = 3,
    max_rows: int | None = None,
) -> None:
    """Display a result table in a notebook as a reader sees it (use instead of ``display``).

    Parameters
    ----------
    df : DataFrame, Series or dict
        A result table of the package (machine names, full precision: keep it for analysis);
        a Series becomes a table of its index and values, a dict (e.g. a report's key
        numbers) a labelled table of quantities and values (:func:`key_numbers_frame`).
    columns : sequence of str, optional
        Machine names of the columns to show, in order (default: all).
    labels : mapping, optional
        Headers by machine name (default: the catalogue's labels with units).
    caption : str, optional
        Shown above the table.
    digits : int
        Significant digits of estimates (the package's rule, default 3).
    max_rows : int, optional
        Show only the first ``max_rows`` rows, with a note giving the total.

    Returns
    -------
    None
        Displays HTML (:func:`table_html`) with a plain-text version of the same cells.

    Raises
    ------
    ValueError
        A column of ``columns`` not in ``df``.
    TypeError
        For anything but a DataFrame, Series or dict.

    Examples
    --------
    >>> show({"n_tasks": 80, "answer_accuracy": 0.9, "skipped": []})
    Quantity          Value
    Tasks             80
    Answer accuracy   0.900
    Skipped sections  none
    >>> show(pd.DataFrame({"n": [3], "mean": [0.5], "ci_low": [0.25], "ci_high": [0.75]}))
    n         Mean [95% CI]
    3  0.500 [0.250, 0.750]
    """
    _show_presented(present(_head(_frame(df), max_rows), columns=columns, labels=labels,
                            digits=digits), df, caption=caption, max_rows=max_rows)


def _show_presented(shown: pd.DataFrame, df, *, caption: str | None,
                    max_rows: int | None) -> None:
    """Display a presented table (:func:`show` after ``present``; the report's tables pass the
    one :func:`dabench_analysis.export.save_table` presented for its files)."""
    from IPython import get_ipython
    from IPython.display import display

    text = "\n".join([_plain(shown), *_cut_note(df, max_rows)])
    if get_ipython() is None:  # plain Python: the text
        print(text)
        return
    display({"text/plain": text,
             "text/html": _html(shown, df, caption=caption, max_rows=max_rows)}, raw=True)


def _head(frame: pd.DataFrame, max_rows: int | None) -> pd.DataFrame:
    if max_rows is not None and max_rows < 1:
        raise ValueError(f"max_rows must be at least 1, got {max_rows}")
    return frame if max_rows is None else frame.head(max_rows)


def _cut_note(df, max_rows: int | None) -> list[str]:
    n = len(df)
    if max_rows is None or n <= max_rows:
        return []
    return [f"The first {max_rows} of {n} rows; the saved table has all of them."]


def _plain(shown: pd.DataFrame) -> str:
    """Every cell as text, numbers right-aligned, then the notes."""
    cols = [[str(c), *map(str, shown[c])] for c in shown.columns]
    widths = [max(map(len, col)) for col in cols]
    lines = ["  ".join(v.rjust(w) if a == "r" else v.ljust(w)
                       for v, w, a in zip(row, widths, shown.attrs["align"], strict=True)).rstrip()
             for row in zip(*cols, strict=True)] if cols else []
    return "\n".join([*lines, *shown.attrs["notes"]])
