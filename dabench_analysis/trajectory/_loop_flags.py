"""The agent's own loop flags, where a harness writes them into a step's text.

Magentic-One's orchestrator writes a progress ledger each turn, a JSON object with
``"is_in_loop": {"reason": ..., "answer": true|false}`` (Fourney et al. 2024, Magentic-One,
arXiv:2411.04468, §3.1 "progress ledger"); Who&When's Hand-Crafted files keep it in the
``Orchestrator (thought)`` message's content, which the readers keep whole as ``observation``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: The ledger field: ``"is_in_loop": {... "answer": true|false ...}`` (no nested object).
LEDGER = r'"is_in_loop"\s*:\s*\{[^{}]*?"answer"\s*:\s*(true|false)'


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
    got = text.astype("string").str.extract(LEDGER, expand=False)
    return got.eq("true").fillna(False).to_numpy(dtype=bool)
