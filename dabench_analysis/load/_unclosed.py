"""A quote opened in a CSV row and never closed: the reader takes every line after it as part of
one value (a value over several lines), so one damaged row would cost the rest of the file,
silently when that value happens to be the row's last field.

Used by :mod:`dabench_analysis.load._csv` (its ``parse`` reads such a file in two parts
around one line); :func:`quotes` is the one count of quote characters, which the pipeline's
scan of a file's bytes also uses. A file whose quote characters add up to an odd number holds a quote that
never closes (in a well-formed file every quoted value opens and closes, and a quote inside a
value is written twice). The damaged line is one at which the running count of quotes turns
odd (:func:`candidates`): either it or a line opening a legitimate value over several lines.
Each candidate is tried, in file order, as the damage: the file is read without it, and the
reading that drops the fewest lines is kept (the first that drops only that line ends the
search; at most :data:`MAX_TRIES` are tried).

Two damaged quotes that pair up (one opened and never closed, a later one closed and never
opened) are not told apart from a value over several lines: the rows between them are read as
that value, and the row is dropped when its number of fields is wrong (the finding says how
many lines it held).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyarrow as pa

#: Candidate lines tried at most (each try reads the file once).
MAX_TRIES = 20
_QUOTE = ord('"')


def quotes(data: bytes | bytearray | memoryview | np.ndarray) -> int:
    """How many quote characters ``data`` holds (bytes, or a numpy ``uint8`` array of them).

    >>> quotes(b'a,"b""c"'), quotes(b'a,"b')
    (4, 1)
    """
    arr = data if isinstance(data, np.ndarray) else np.frombuffer(data, dtype=np.uint8)
    return int(np.count_nonzero(arr == _QUOTE))


def odd(data: bytes | bytearray | memoryview) -> bool:
    """Whether the quote characters of ``data`` add up to an odd number.

    >>> odd(b'a,"b""c"'), odd(b'a,"b')
    (False, True)
    """
    return quotes(data) % 2 == 1


def candidates(data: bytes | bytearray | memoryview,
               odd_quotes: bool | None = None) -> list[tuple[int, int]]:
    r"""Byte offsets ``(start, end)`` of each line after the header at which the running count
    of quotes turns odd, in file order; empty when the file's quotes add up to an even number.

    Parameters
    ----------
    data : bytes, bytearray or memoryview
        A whole CSV file (header first).
    odd_quotes : bool, optional
        :func:`odd` of ``data``, if known.

    Returns
    -------
    list of tuple of int
        ``data[start:end]`` is the line with its line end.

    Examples
    --------
    >>> data = b'a,b\n1,"ok, fine"\n2,"never closed\n3,x\n'
    >>> [data[s:e] for s, e in candidates(data)]
    [b'2,"never closed\n']
    >>> candidates(b'a,b\n1,"two\nlines"\n')
    []
    """
    if not (odd(data) if odd_quotes is None else odd_quotes):
        return []
    lines = bytes(data).split(b"\n")
    parity = np.cumsum([line.count(b'"') for line in lines]) % 2  # after each line
    before = np.concatenate([[0], parity[:-1]])
    starts = np.concatenate([[0], np.cumsum([len(line) + 1 for line in lines])])
    return [(int(starts[i]), min(int(starts[i + 1]), len(data)))
            for i in np.flatnonzero((before == 0) & (parity == 1)) if i > 0]


def read(data: bytes | bytearray | memoryview, arrow: Callable, n_fields: int, *,
         odd_quotes: bool | None = None) -> tuple[pa.Table, list]:
    """Read a CSV file's bytes with ``arrow`` (``arrow(data) -> (table, bad)``, bad records as
    ``(number, expected, actual, text)``), around the line of a quote that never closes.

    Returns
    -------
    table : pyarrow.Table
        The rows read.
    bad : list of tuple
        ``(number, expected, actual, text, (lines, unclosed))``: ``lines`` the lines of the
        file the record held, ``unclosed`` True for the line whose quote never closes (its
        ``actual`` is -1: not counted).

    ``odd_quotes`` is :func:`odd` of ``data``, if known.
    """
    tries = candidates(data, odd_quotes)[:MAX_TRIES]
    if not tries:
        table, bad = arrow(data)
        return table, [(*b, (_lines(b[3]), False)) for b in bad]
    best, head_end = None, bytes(data[:1 << 20]).find(b"\n") + 1
    for start, end in tries:
        table, bad = arrow(data[:start])
        rest, rest_bad = arrow(bytes(data[:head_end]) + bytes(data[end:]))
        lost = 1 + sum(_lines(b[3]) for b in (*bad, *rest_bad))
        number = table.num_rows + len(bad) + 2  # the damaged line's record number
        line = bytes(data[start:end]).decode("utf-8", "replace").rstrip("\r\n")
        found = (pa.concat_tables([table, rest.cast(table.schema)]),
                 [*[(*b, (_lines(b[3]), False)) for b in bad],
                  (number, n_fields, -1, line, (1, True)),
                  *[(b[0] + number - 1, *b[1:], (_lines(b[3]), False)) for b in rest_bad]])
        if best is None or lost < best[0]:
            best = (lost, found)
        if lost == 1:
            break
    return best[1]


def _lines(text: str) -> int:
    return text.rstrip("\r\n").count("\n") + 1
