"""Whose actions a table counts: the rows of one actor (the agent's own tool calls, where the
simulated user of tau2 telecom calls tools too), and the note a table carries when it left some
out.
"""

from __future__ import annotations

import pandas as pd


def own_actions(frame: pd.DataFrame | None, actor: str | None = "agent",
                what: str = "tool call") -> tuple[pd.DataFrame | None, str]:
    """The rows of one actor (the agent's own tool calls) when the rows name several actors.

    Parameters
    ----------
    frame : DataFrame or None
        Tool calls or steps; its ``actor`` column (``agent``, ``user``, ...) when recorded
        (tau2 telecom's simulated user calls tools too).
    actor : str or None
        Keep the rows of this actor (and those without one); None keeps every row.
    what : str
        The rows' name in the note.

    Returns
    -------
    tuple
        ``(rows, note)``: ``frame`` unchanged and ``""`` unless its ``actor`` column holds
        ``actor`` and another value; else the rows kept and a note saying how many were left
        out and whose.

    Examples
    --------
    >>> f = pd.DataFrame({"tool_name": ["a", "b", "c"], "actor": ["agent", "user", None]})
    >>> rows, note = own_actions(f)
    >>> rows["tool_name"].tolist(), note
    (['a', 'c'], "1 tool call(s) of user left out (actor='agent'; actor=None keeps all)")
    """
    if frame is None or actor is None or "actor" not in frame:
        return frame, ""
    who = frame["actor"].astype("string")
    other = who.notna() & who.ne(actor)
    if not other.any() or not who.eq(actor).any():
        return frame, ""
    names = ", ".join(sorted(set(who[other].dropna())))
    return frame[~other.to_numpy()], (f"{int(other.sum())} {what}(s) of {names} left out "
                                      f"(actor={actor!r}; actor=None keeps all)")


def with_note(table: pd.DataFrame, note: str) -> pd.DataFrame:
    """``table`` with ``note`` added to its ``note`` column (created when absent; "; " between
    notes); ``table`` unchanged for an empty note.

    Examples
    --------
    >>> with_note(pd.DataFrame({"a": [1], "note": ["x"]}), "y")["note"].tolist()
    ['x; y']
    """
    if not note:
        return table
    old = table["note"].astype("string") if "note" in table else None
    return table.assign(note=note if old is None else (old + "; " + note).fillna(note))
