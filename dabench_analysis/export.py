"""Atomic writing of tables, JSON summaries and text files.

Every file the toolkit writes goes through :func:`atomic_write`: the bytes are written to a
temporary file in the destination folder, flushed, and renamed into place with
:func:`os.replace`, so an interrupted report never leaves a half-written table behind and a
re-run replaces files cleanly.
"""

from __future__ import annotations

import contextlib
import html
import json
import math
import os
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["atomic_write", "save_table", "write_json", "write_text", "to_markdown", "to_latex",
           "TABLE_FORMATS"]

TABLE_FORMATS: tuple[str, ...] = ("csv", "tex", "md")


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike[str], *, mode: str = "w") -> Iterator[Any]:
    """Open a temporary file next to ``path`` and rename it into place on success.

    Parameters
    ----------
    path : path-like
        Final destination. Missing parent folders are created.
    mode : {"w", "wb"}
        Text (UTF-8, ``\\n`` line ends) or binary mode.

    Yields
    ------
    file object
        Write to it; on normal exit it is flushed, ``fsync``-ed and renamed to ``path``.

    Raises
    ------
    ValueError
        If ``mode`` is not ``"w"`` or ``"wb"``.
    OSError
        If the folder cannot be created or written. On any exception the temporary file is
        removed and ``path`` is left as it was.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> with atomic_write(d / "a.txt") as fh:
    ...     _ = fh.write("hello")
    >>> (d / "a.txt").read_text()
    'hello'
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"mode must be 'w' or 'wb', got {mode!r}")
    dest = Path(path)
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent)
    try:
        kwargs = {"encoding": "utf-8", "newline": "\n"} if mode == "w" else {}
        with os.fdopen(fd, mode, **kwargs) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, dest)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


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
    if isinstance(value, (float, np.floating)) and 0 <= value < 10 ** -digits:
        return f"<{10 ** -digits:.{digits}f}"
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
        Decimals for floats; p-value columns (``p_value*``, ``p_adjusted*``) below
        ``10**-digits`` print as ``<0.001``. Missing values print as ``n/a``.

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
        Decimals for floats. Missing values print as ``n/a``.
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
        Decimals in the rounded ``tex`` and ``md`` versions; ``csv`` keeps full precision.
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
        missing = [c for c in columns if c not in flat.columns]
        if missing:
            raise ValueError(f"columns {missing} not in the table; known: {list(flat.columns)}")
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


def _json_default(value: Any) -> Any:
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating,)):
        return None if np.isnan(value) else float(value)
    if isinstance(value, (np.bool_,)):
        return bool(value)
    if value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, (pd.Timestamp,)):
        return value.isoformat()
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, pd.DataFrame):
        return json.loads(value.to_json(orient="records"))
    raise TypeError(f"cannot write {type(value).__name__} to JSON")


def _nan_to_none(obj: Any) -> Any:
    if isinstance(obj, float) and (math.isnan(obj) or math.isinf(obj)):
        return None
    if isinstance(obj, dict):
        return {str(k): _nan_to_none(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_nan_to_none(v) for v in obj]
    return obj


def write_json(obj: Any, path: str | os.PathLike[str]) -> Path:
    """Write ``obj`` as indented, key-sorted JSON, atomically.

    NaN and infinities become ``null`` (strict JSON); numpy scalars, ``pd.NA``, paths and
    DataFrames (as a list of records) are converted.

    Parameters
    ----------
    obj : Any
        JSON-serialisable data (dicts, lists, numbers, strings, numpy scalars).
    path : path-like
        Destination file.

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    TypeError
        If a value cannot be represented in JSON.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = write_json({"a": float("nan"), "b": np.int64(2)}, pathlib.Path(tempfile.mkdtemp()) / "s.json")
    >>> p.read_text()
    '{\\n  "a": null,\\n  "b": 2\\n}\\n'
    """
    text = json.dumps(_nan_to_none(json.loads(json.dumps(obj, default=_json_default,
                                                          allow_nan=True))),
                      indent=2, sort_keys=True, allow_nan=False)
    dest = Path(path)
    with atomic_write(dest) as fh:
        fh.write(text + "\n")
    return dest


def write_text(text: str, path: str | os.PathLike[str]) -> Path:
    """Write UTF-8 text atomically (e.g. a results paragraph as Markdown).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> write_text("hi\\n", pathlib.Path(tempfile.mkdtemp()) / "p.md").read_text()
    'hi\\n'
    """
    dest = Path(path)
    with atomic_write(dest) as fh:
        fh.write(text)
    return dest
