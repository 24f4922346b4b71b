"""The agent's own loop flags, where a harness writes them into a step's text.

Magentic-One's orchestrator writes a progress ledger each turn, a JSON object with
``"is_in_loop": {"reason": ..., "answer": true|false}`` (Fourney et al. 2024, Magentic-One,
arXiv:2411.04468, §3.1 "progress ledger"); Who&When's Hand-Crafted files keep it in the
``Orchestrator (thought)`` message's content, which the readers keep whole as ``observation``.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

#: The ledger field: ``"is_in_loop": {... "answer": true|false ...}`` (no nested object).
LEDGER = r'"is_in_loop"\s*:\s*\{[^{}]*?"answer"\s*:\s*(true|false)'
#: The field's name, which every match of :data:`LEDGER` begins with.
_FIELD = '"is_in_loop"'


def loop_flags(text: pd.Series) -> np.ndarray:
    """Which steps flag themselves as looping: their text holds a progress ledger whose
    ``is_in_loop`` answer is true.

    Parameters
    ----------
    text : Series of str
        A step's text (``observation``, or the message content), compared whole.

    Returns
    -------
    ndarray of bool
        One per element; False where the text has no ledger or says false.

    Examples
    --------
    >>> s = pd.Series(['{"is_in_loop": {"reason": "same query", "answer": true}}',
    ...                '{"is_in_loop": {"reason": "new", "answer": false}}', None])
    >>> loop_flags(s).tolist()
    [True, False, False]
    """
    text = text.astype("string")
    out = np.zeros(len(text), dtype=bool)
    if not _anywhere(text):  # no text holds the field's name: nothing to match
        return out
    # only a text holding the field's name can match: found by a plain substring search,
    # the pattern then run on those texts alone
    maybe = text.str.contains(_FIELD, regex=False).fillna(False).to_numpy(dtype=bool)
    if maybe.any():
        got = text[maybe].str.extract(LEDGER, expand=False)
        out[maybe] = got.eq("true").fillna(False).to_numpy(dtype=bool)
    return out


def _anywhere(text: pd.Series) -> bool:
    """Whether the field's name may be in any of the texts: one search of the bytes of the
    Arrow strings at once, in place (``re`` reads the buffer without copying it; a text split
    over two chunks is not one text, so a chunk is searched alone); True where the texts are
    not Arrow strings."""
    import pyarrow as pa

    try:
        chunks = pa.chunked_array(pa.array(text.array)).chunks
    except (TypeError, pa.ArrowException):
        return True
    needle = re.compile(re.escape(_FIELD.encode()))
    for chunk in chunks:
        data = chunk.buffers()[2] if chunk.type in (pa.string(), pa.large_string()) else None
        if data is None:
            if len(chunk) and chunk.null_count < len(chunk):
                return True
            continue
        if needle.search(memoryview(data)) is not None:
            return True
    return False
