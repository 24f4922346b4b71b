"""Text from the data as every writer shows it: invisible control characters and lone surrogates
as visible escapes (``\\x00``, ``\\ud800``), so that no ``.tex``, ``.md``, ``.csv`` or HTML file
carries a NUL (LaTeX stops at it, browsers replace it) or a character UTF-8 cannot encode.

The one escaping function: :func:`visible`. The characters are the catalogue's
(:data:`dabench_analysis.schema.checks.CONTROL_CHARACTERS`), which ``validate`` reports as
``control_characters``; the frames keep the text as read.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from dabench_analysis.schema.checks import CONTROL_CHARACTERS, control_mask

__all__ = ["visible", "visible_frame"]


_LAYOUT = str.maketrans({"\t": "\\t", "\n": "\\n", "\r": "\\r"})  # visible(one_line=True)


def _escape(match) -> str:
    code = ord(match[0])
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: Any, *, one_line: bool = False) -> Any:
    r"""``text`` with every control character and lone surrogate written as an escape.

    Parameters
    ----------
    text : Any
        A string (anything else is returned unchanged, so cells of any type can pass).
    one_line : bool
        Also write tab, line feed and carriage return as ``\t``, ``\n``, ``\r``: for a name
        or a path shown in one line (a row of the command line's tables), which a line feed
        in a folder's name would otherwise split.

    Returns
    -------
    Any
        The string with each C0 control except tab, line feed and carriage return (unless
        ``one_line``), DEL and each C1 control as ``\xNN`` (two lower-case hex digits) and each
        lone UTF-16 surrogate as ``\uNNNN``; every other character unchanged.

    Notes
    -----
    The escape is Python's own notation (``repr``), so a reader can tell what the data held; a
    literal backslash followed by ``x00`` in the data reads the same (the escape is for
    reading, not for round trips: the frames keep the text as read).

    Examples
    --------
    >>> visible("a\x00b\tc\x1bd\ud800")
    'a\\x00b\tc\\x1bd\\ud800'
    >>> visible("run\n2\t", one_line=True)
    'run\\n2\\t'
    >>> visible(3)
    3
    """
    if not isinstance(text, str):
        return text
    if one_line:
        text = text.translate(_LAYOUT)
    if CONTROL_CHARACTERS.search(text) is None:
        return text
    return CONTROL_CHARACTERS.sub(_escape, text)


def visible_frame(df: pd.DataFrame, *, names: bool = True) -> pd.DataFrame:
    r"""``df`` with :func:`visible` applied to its text cells and its column names.

    Parameters
    ----------
    df : DataFrame
        Any frame; numeric columns are left as they are.
    names : bool
        Also the column names (default).

    Returns
    -------
    DataFrame
        The same frame when nothing needs escaping, else a copy in which every text cell
        (object, string and categorical columns) and every column name is visible.

    Examples
    --------
    >>> visible_frame(pd.DataFrame({"note": ["ok", "a\x00b"], "n": [1, 2]}))["note"].tolist()
    ['ok', 'a\\x00b']
    """
    hit = [i for i, (_, column) in enumerate(df.items())  # by position: names may repeat
           if not (pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column))
           and control_mask(column).any()]
    names = [visible(c) for c in df.columns] if names else list(df.columns)
    if not hit and names == list(df.columns):
        return df
    out = df.copy()
    for i in hit:
        column = out.iloc[:, i]
        shown = column.astype(object).map(visible)
        out.isetitem(i, shown.astype(column.dtype) if isinstance(column.dtype, pd.StringDtype)
                     else shown)
    out.columns = names
    return out
