"""Tables as files: ``.csv`` at full precision, ``.tex`` (booktabs) and ``.md`` rounded for reading,
all written atomically (see :func:`save_table`).
"""

from __future__ import annotations

import html
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dabench_analysis._atomic import atomic_write
from dabench_analysis.export.numbers import format_pvalue
from dabench_analysis.schema import require_columns

TABLE_FORMATS: tuple[str, ...] = ("csv", "tex", "md")


def _fmt_cell(value: Any, digits: int) -> str:
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (float, np.floating)):
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return f"{value:.{digits}f}"
    return str(value)


def _fmt_p(value: Any, digits: int) -> str:
    # p-values follow the package's one rule (export.numbers), whatever ``digits`` is
    if isinstance(value, (float, np.floating)) and math.isfinite(value):
        return format_pvalue(value)
    return _fmt_cell(value, digits)


def _is_p_column(name: Any) -> bool:
    return str(name).startswith(("p_value", "p_adjusted")) or str(name) in ("p", "pvalue")


def _display_frame(df: pd.DataFrame, digits: int) -> pd.DataFrame:
    out = df.reset_index() if _has_named_index(df) else df.copy()
    return out.apply(lambda col: col.map(
        lambda v: (_fmt_p if _is_p_column(col.name) else _fmt_cell)(v, digits))).astype(object)


def _has_named_index(df: pd.DataFrame) -> bool:
    return any(name is not None for name in df.index.names)


def _md_escape(text: str) -> str:
    text = html.escape(text, quote=False).replace("\\", "\\\\")
    return text.replace("|", "\\|").replace("\n", " ").replace("\r", " ")


def to_markdown(df: pd.DataFrame, *, digits: int = 3) -> str:
    """Render a table as a GitHub-flavoured Markdown pipe table.

    Parameters
    ----------
    df : DataFrame
        Any table; a named index becomes leading columns.
    digits : int
        Decimals for floats. p-value columns (``p_value*``, ``p_adjusted*``, ``p``,
        ``pvalue``) follow the package's rule instead (:func:`export.numbers.format_pvalue`:
        2 significant digits, ``< 0.001`` below 0.001). Missing values print as ``n/a``.

    Returns
    -------
    str
        The table; ``|``, ``<``, ``>`` and ``&`` in cells are escaped so that text from a run
        (answers, error messages) cannot break the table or inject HTML.

    Examples
    --------
    >>> print(to_markdown(pd.DataFrame({"a": [1.23456], "b": ["x|<y>"]}), digits=2))
    | a | b |
    |---:|:---|
    | 1.23 | x\\|&lt;y&gt; |
    """
    shown = _display_frame(df, digits)
    numeric = [pd.api.types.is_numeric_dtype(df.reset_index()[c]) if _has_named_index(df)
               else pd.api.types.is_numeric_dtype(df[c]) for c in shown.columns]
    header = "| " + " | ".join(_md_escape(str(c)) for c in shown.columns) + " |"
    rule = "|" + "|".join("---:" if num else ":---" for num in numeric) + "|"
    rows = ["| " + " | ".join(_md_escape(v) for v in row) + " |" for row in shown.to_numpy()]
    return "\n".join([header, rule, *rows])


_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
                  "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
                  "^": r"\textasciicircum{}", "<": r"\textless{}", ">": r"\textgreater{}"}


def _tex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text.replace("\n", " "))


def to_latex(df: pd.DataFrame, *, digits: int = 3, caption: str | None = None) -> str:
    """Render a table as a LaTeX ``tabular`` with booktabs rules.

    Parameters
    ----------
    df : DataFrame
        Any table; a named index becomes leading columns.
    digits : int
        Decimals for floats; p-value columns as in :func:`to_markdown`. Missing values print
        as ``n/a``.
    caption : str, optional
        Emitted as a ``% caption`` comment line (the table is meant to be ``\\input`` into a
        ``table`` float that holds the real caption).

    Returns
    -------
    str
        ``\\begin{tabular}`` … ``\\end{tabular}`` with ``\\toprule``, ``\\midrule`` and
        ``\\bottomrule`` (needs ``\\usepackage{booktabs}``). LaTeX special characters are escaped.

    Examples
    --------
    >>> print(to_latex(pd.DataFrame({"n": [3], "mean_x": [0.5]})))
    \\begin{tabular}{rr}
    \\toprule
    n & mean\\_x \\\\
    \\midrule
    3 & 0.500 \\\\
    \\bottomrule
    \\end{tabular}
    """
    shown = _display_frame(df, digits)
    flat = df.reset_index() if _has_named_index(df) else df
    align = "".join("r" if pd.api.types.is_numeric_dtype(flat[c]) else "l" for c in flat.columns)
    lines = [f"% {_tex_escape(caption)}"] if caption else []
    lines += [f"\\begin{{tabular}}{{{align}}}", "\\toprule",
              " & ".join(_tex_escape(str(c)) for c in shown.columns) + r" \\", "\\midrule"]
    lines += [" & ".join(_tex_escape(v) for v in row) + r" \\" for row in shown.to_numpy()]
    lines += ["\\bottomrule", "\\end{tabular}"]
    return "\n".join(lines)


def save_table(
    df: pd.DataFrame,
    path_stem: str | os.PathLike[str],
    *,
    formats: Sequence[str] = TABLE_FORMATS,
    digits: int = 3,
    caption: str | None = None,
    columns: Sequence[str] | None = None,
) -> list[Path]:
    """Write a table as CSV (full precision), LaTeX (booktabs) and Markdown, atomically.

    Parameters
    ----------
    df : DataFrame
        The table. A named index is written as leading columns.
    path_stem : path-like
        Destination without suffix, e.g. ``figures/RUN/tables/main_results``.
    formats : sequence of {"csv", "tex", "md"}
        Which files to write.
    digits : int
        Decimals in the rounded ``tex`` and ``md`` versions (p-values: the package rule, see
        :func:`to_markdown`); ``csv`` keeps full precision.
    caption : str, optional
        Comment line at the top of the ``tex`` file.
    columns : sequence of str, optional
        Columns shown in the ``tex`` and ``md`` versions (wide statistical tables read better
        trimmed); the ``csv`` always has every column.

    Returns
    -------
    list of Path
        The files written, in the order of ``formats``.

    Raises
    ------
    ValueError
        For an unknown format or a column not in ``df``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> [p.name for p in save_table(pd.DataFrame({"a": [1]}), d / "t")]
    ['t.csv', 't.tex', 't.md']
    """
    unknown = sorted(set(formats) - set(TABLE_FORMATS))
    if unknown:
        raise ValueError(f"unknown table format(s) {unknown}; known: {', '.join(TABLE_FORMATS)}")
    stem = Path(path_stem)
    written: list[Path] = []
    flat = df.reset_index() if _has_named_index(df) else df
    if columns is not None:
        require_columns(flat, columns, "the table")
    shown = flat[list(columns)] if columns is not None else df
    for fmt in formats:
        dest = stem.with_name(f"{stem.name}.{fmt}")
        with atomic_write(dest) as fh:
            if fmt == "csv":
                flat.to_csv(fh, index=False, lineterminator="\n")
            elif fmt == "tex":
                fh.write(to_latex(shown, digits=digits, caption=caption) + "\n")
            else:
                fh.write(to_markdown(shown, digits=digits) + "\n")
        written.append(dest)
    return written
