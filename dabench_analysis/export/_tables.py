"""Tables as files: ``.csv`` at full precision with the machine names; ``.tex`` (booktabs) and
``.md`` as a reader sees them (:func:`export.present`: estimate and interval in
one cell, human labels with units, the package's rounding rule), all written atomically
(see :func:`save_table`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from dabench_analysis._atomic import atomic_write
from dabench_analysis.export._presentation import present
from dabench_analysis.export._text import visible_frame
from dabench_analysis.schema import require_columns
from dabench_analysis.schema.numbers import ESTIMATE_DIGITS

TABLE_FORMATS: tuple[str, ...] = ("csv", "tex", "md")
_MD_PUNCT_AFTER_BACKSLASH = re.compile(r"\\(?=[!-/:-@\[-`{-~])")
_MD_TAG_START = re.compile(r"<(?=[A-Za-z/!?])")
#: ``*`` and backticks anywhere (``x*y*`` is emphasis inside a word too), ``_`` where it is not
#: between two letters or digits (``a_b`` never opens emphasis, ``_a_`` does).
_MD_INLINE = re.compile(r"[*`]|(?<![^\W_])_|_(?![^\W_])")


def _md_escape(text: str) -> str:
    """Escape what Markdown would read as syntax; the rest stays plain text (no entities)."""
    text = _MD_PUNCT_AFTER_BACKSLASH.sub(r"\\\\", text)
    text = _MD_INLINE.sub(lambda m: "\\" + m[0], text)
    text = _MD_TAG_START.sub(r"\\<", text.replace("|", r"\|"))
    return " ".join(text.splitlines())


def to_markdown(
    df: pd.DataFrame,
    *,
    digits: int = ESTIMATE_DIGITS,
    columns: Sequence[str] | None = None,
    labels: Mapping[str, str] | None = None,
) -> str:
    r"""Render a table as a GitHub-flavoured Markdown pipe table for a reader.

    Parameters
    ----------
    df : DataFrame
        A result table; a named index becomes leading columns.
    digits : int
        Significant digits of estimates (the package's rule,
        :func:`schema.numbers.format_estimate`; default 3). p-value columns follow
        :func:`schema.numbers.format_pvalue`, counts print as integers, missing values ``n/a``.
    columns, labels : optional
        Columns to show and headers to use, as in :func:`export.present`.

    Returns
    -------
    str
        The table as plain text: headers are human labels, each estimate and its interval one
        cell (``0.878 [0.817, 0.920]``); a constant method column and constant parameters
        become lines under the table. Only what Markdown would read as syntax is escaped:
        ``|``, a backslash before punctuation, ``<`` before a letter, ``/``, ``!`` or ``?``
        (an HTML tag), every ``*`` and backtick, and ``_`` except between two letters or
        digits (``run_a`` stays as it is, ``_a_`` is not italic); no HTML entities.

    Examples
    --------
    >>> print(to_markdown(pd.DataFrame({"a": [1.23456], "b": ["x|<y> < 1, x*y*, _z_ run_a"]}),
    ...                   digits=2))
    | A | B |
    |---:|:---|
    | 1.2 | x\|\<y> < 1, x\*y\*, \_z\_ run_a |
    """
    return _markdown(present(df, columns=columns, labels=labels, digits=digits))


def _markdown(shown: pd.DataFrame) -> str:
    """The Markdown of a presented table (:func:`export.present`)."""
    header = "| " + " | ".join(_md_escape(str(c)) for c in shown.columns) + " |"
    rule = "|" + "|".join("---:" if a == "r" else ":---" for a in shown.attrs["align"]) + "|"
    rows = ["| " + " | ".join(_md_escape(v) for v in row) + " |" for row in shown.to_numpy()]
    notes = [""] + [_md_escape(n) for n in shown.attrs["notes"]] if shown.attrs["notes"] else []
    return "\n".join([header, rule, *rows, *notes])


_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
                  "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
                  "^": r"\textasciicircum{}", "<": r"\textless{}", ">": r"\textgreater{}",
                  "|": r"\textbar{}"}
_GREEK = dict(zip("αβγδεζηθικλμνξπρστυφχψωςΓΔΘΛΞΠΣΥΦΨΩ", (
    "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi pi rho sigma tau "
    "upsilon phi chi psi omega varsigma Gamma Delta Theta Lambda Xi Pi Sigma Upsilon Phi Psi "
    "Omega").split(), strict=True))
_MATH = {"×": r"\times", "÷": r"\div", "±": r"\pm", "−": "-", "≤": r"\leq", "≥": r"\geq",
         "≠": r"\neq", "≈": r"\approx", "∞": r"\infty", "→": r"\rightarrow", "←": r"\leftarrow",
         "↔": r"\leftrightarrow", "⇒": r"\Rightarrow", "·": r"\cdot", "°": r"^\circ",
         "µ": r"\mu", "√": r"\surd", "∑": r"\sum", **{ch: "\\" + n for ch, n in _GREEK.items()}}
#: Non-ASCII characters pdflatex cannot typeset from UTF-8 input (or not without extra
#: packages), as LaTeX; other characters pass through (accented letters work in pdflatex).
LATEX_UNICODE = {"‘": "`", "’": "'", "“": "``", "”": "''", "–": "--", "—": "---",
                 "…": r"\ldots{}", "§": r"\S{}", "¶": r"\P{}", "•": r"\textbullet{}",
                 "\u00a0": "~", "\u2009": r"\,", "ο": "o",
                 **{ch: r"\ensuremath{" + tex + "}" for ch, tex in _MATH.items()}}


def _tex_escape(text: object) -> str:
    text = "".join(_LATEX_SPECIAL.get(ch) or LATEX_UNICODE.get(ch, ch)
                   for ch in " ".join(str(text).splitlines()))
    return "{}" + text if text.startswith("[") else text  # not an optional argument of \\


def to_latex(
    df: pd.DataFrame,
    *,
    digits: int = ESTIMATE_DIGITS,
    caption: str | None = None,
    columns: Sequence[str] | None = None,
    labels: Mapping[str, str] | None = None,
) -> str:
    r"""Render a table as a LaTeX ``tabular`` with booktabs rules, for a reader.

    Parameters
    ----------
    df : DataFrame
        A result table; a named index becomes leading columns.
    digits : int
        Significant digits of estimates, as in :func:`to_markdown`.
    caption : str, optional
        Emitted as a ``% caption`` comment line (the table is meant to be ``\input`` into a
        ``table`` float that holds the real caption).
    columns, labels : optional
        Columns to show and headers to use, as in :func:`export.present`.

    Returns
    -------
    str
        ``\begin{tabular}`` … ``\end{tabular}`` with ``\toprule``, ``\midrule`` and
        ``\bottomrule`` (needs ``\usepackage{booktabs}``), as pandas' ``Styler.to_latex``
        writes it (an earlier version used it: 6 ms a table, a fifth of a report's tables);
        numbers right-aligned, text left. Every header and cell is escaped (``\ & % $ # _ { }
        ~ ^ < > |``), so text from a run cannot inject commands, and the non-ASCII characters
        of :data:`LATEX_UNICODE` become LaTeX (``Σ`` ``\ensuremath{\Sigma}``, ``×``
        ``\ensuremath{\times}``, ``§`` ``\S{}``, ``≥`` ``\ensuremath{\geq}``, ``−``
        ``\ensuremath{-}``, ``…`` ``\ldots{}``, smart quotes ``` `` '' ```, ``–`` ``--``) so
        pdflatex compiles it. A constant method column and constant parameters become a
        visible note under the table (``\par\smallskip{\footnotesize ...\par}``, plain LaTeX:
        it needs nothing beyond booktabs and wraps at the width of the float it is put in).

    Examples
    --------
    >>> print(to_latex(pd.DataFrame({"n": [3], "mean": [0.5], "ci_low": [0.25],
    ...                              "ci_high": [0.75], "method": ["t"]})), end="")
    \begin{tabular}{rr}
    \toprule
    n & Mean [95\% CI] \\
    \midrule
    3 & 0.500 [0.250, 0.750] \\
    \bottomrule
    \end{tabular}
    \par\smallskip
    {\footnotesize Method: t.\par}
    """
    return _latex(present(df, columns=columns, labels=labels, digits=digits), caption)


def _latex(shown: pd.DataFrame, caption: str | None) -> str:
    """The LaTeX of a presented table (:func:`export.present`)."""
    comments = [f"% {_tex_escape(caption)}"] if caption else []
    notes = " ".join(_sentence_end(_tex_escape(n)) for n in shown.attrs["notes"])
    under = ["\\par\\smallskip", "{\\footnotesize " + notes + "\\par}"] if notes else []
    return "\n".join([*comments, _tabular(shown), *under])


def _tabular(shown: pd.DataFrame) -> str:
    """A presented table (every cell text) as a booktabs ``tabular``, every header and cell
    escaped, as the Markdown of :func:`_markdown`."""
    head, *rows = [" & ".join(_tex_escape(v) for v in row) + " \\\\"
                   for row in [shown.columns, *shown.to_numpy()]]
    head = [head] if len(shown.columns) else []  # no header row without columns (as Styler)
    return "\n".join([f"\\begin{{tabular}}{{{shown.attrs['align'] or 'l'}}}", "\\toprule", *head,
                      "\\midrule", *rows, "\\bottomrule", "\\end{tabular}"])


def _sentence_end(text: str) -> str:
    return text if text.endswith((".", "!", "?")) else text + "."


def save_table(
    df: pd.DataFrame,
    path_stem: str | os.PathLike[str],
    *,
    formats: Sequence[str] = TABLE_FORMATS,
    digits: int = ESTIMATE_DIGITS,
    caption: str | None = None,
    columns: Sequence[str] | None = None,
    labels: Mapping[str, str] | None = None,
) -> list[Path]:
    """Write a table as CSV (full precision), LaTeX (booktabs) and Markdown, atomically.

    Text from the data is written as read, except control characters and lone surrogates,
    which every format shows as escapes (``\\x00``; :func:`dabench_analysis.export.visible`):
    a NUL would stop LaTeX, and a lone surrogate cannot be written as UTF-8.

    Parameters
    ----------
    df : DataFrame
        The table. A named index is written as leading columns.
    path_stem : path-like
        Destination without suffix, e.g. ``figures/RUN/tables/main_results``.
    formats : sequence of {"csv", "tex", "md"}
        Which files to write.
    digits : int
        Significant digits of estimates in the ``tex`` and ``md`` versions (the package's rule;
        p-values, counts: see :func:`to_markdown`); ``csv`` keeps full precision.
    caption : str, optional
        Comment line at the top of the ``tex`` file.
    columns : sequence of str, optional
        Machine names of the columns shown in the ``tex`` and ``md`` versions, in order (wide
        statistical tables read better trimmed); the ``csv`` always has every column.
    labels : mapping, optional
        Headers of the ``tex`` and ``md`` versions by machine name (default: the catalogue's
        labels, :func:`export._presentation.column_label`); the ``csv`` keeps the machine names.

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
    >>> t = pd.DataFrame({"metric": ["final_score"], "mean": [2 / 3], "ci_low": [0.5],
    ...                   "ci_high": [0.8], "tokens": [3886.25]})
    >>> [p.name for p in save_table(t, d / "t", labels={"tokens": "Tokens"})]
    ['t.csv', 't.tex', 't.md']
    >>> print((d / "t.md").read_text(), end="")
    | Metric | Mean [95% CI] | Tokens |
    |:---|---:|---:|
    | Final score | 0.667 [0.500, 0.800] | 3886 |
    """
    return _save_table(df, Path(path_stem), formats=formats, digits=digits, caption=caption,
                       columns=columns, labels=labels)[0]


def _save_table(df: pd.DataFrame, stem: Path, *, formats: Sequence[str], digits: int,
                caption: str | None, columns: Sequence[str] | None,
                labels: Mapping[str, str] | None) -> tuple[list[Path], pd.DataFrame | None]:
    """:func:`save_table`, also returning the presented table of the ``tex``/``md`` files
    (:func:`export.present` of the table with its named index as columns; None when neither
    is written), so that a report shows that very table instead of presenting it again."""
    unknown = sorted(set(formats) - set(TABLE_FORMATS))
    if unknown:
        raise ValueError(f"unknown table format(s) {unknown}; known: {', '.join(TABLE_FORMATS)}")
    flat = df.reset_index() if any(n is not None for n in df.index.names) else df
    if columns is not None:
        require_columns(flat, columns, "the table")
    shown = (present(flat, columns=columns, labels=labels, digits=digits)  # once for both
             if {"tex", "md"} & set(formats) else None)
    written: list[Path] = []
    for fmt in formats:
        dest = stem.with_name(f"{stem.name}.{fmt}")
        with atomic_write(dest) as fh:
            if fmt == "csv":  # as read, but for control characters: \x00 (export._text)
                visible_frame(flat).to_csv(fh, index=False, lineterminator="\n")
            elif fmt == "tex":
                fh.write(_latex(shown, caption) + "\n")
            else:
                fh.write(_markdown(shown) + "\n")
        written.append(dest)
    return written, shown
