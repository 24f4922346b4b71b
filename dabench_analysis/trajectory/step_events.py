"""Events within trajectories (step-level debugging): repeated actions (loops), errors and
whether they were recovered, each task's first failing step. (The step tables' two summaries of
step data, latency quantiles and the share solved within k, are in
:mod:`dabench_analysis.trajectory._step_stats`.)

Frames in, frames out; steps as :func:`dabench_analysis.trajectory.steps.order_steps` returns them
(``task_index``, in ``step_id`` order). Seed 000 §Data Model Schema 2 and 3 (step-level
debugging, performance profiling, error rate tracking).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dabench_analysis.schema import require_columns


def repeated_actions(steps: pd.DataFrame, *, window: int = 3) -> np.ndarray:
    """Which steps repeat an action: the same ``tool`` with the same ``action_input`` as one of
    the ``window`` steps before it in its task.

    Parameters
    ----------
    steps : DataFrame
        From :func:`~dabench_analysis.trajectory.steps.order_steps`, with ``tool`` and
        ``action_input`` (text).
    window : int
        How many preceding steps (of any kind) are compared, >= 1.

    Returns
    -------
    ndarray of bool
        One per row of ``steps``: True where the step repeats an action (a loop step).

    Raises
    ------
    ValueError
        ``window`` < 1, or a column is missing.

    Notes
    -----
    A step without a tool is no action; a step whose ``action_input`` is missing (or empty:
    a CSV cell cannot tell them apart) is never called a repeat, since its input is unknown.
    Repeated identical steps are a leading failure mode of multi-agent systems (Cemri et al.
    2025, MAST: "step repetition").

    References
    ----------
    Cemri, M. et al. (2025). Why do multi-agent LLM systems fail? arXiv:2503.13657.

    Examples
    --------
    >>> s = pd.DataFrame({"task_index": [0, 0, 0, 0, 1],
    ...                   "tool": ["sql", "py", "sql", "sql", "sql"],
    ...                   "action_input": ["q", "x", "q", "r", "q"]})
    >>> repeated_actions(s, window=2).tolist()
    [False, False, True, False, False]
    """
    if not isinstance(window, int | np.integer) or window < 1:
        raise ValueError(f"window must be a whole number >= 1, got {window!r}")
    require_columns(steps, ["task_index", "tool", "action_input"], "steps")
    t = steps["task_index"].to_numpy()
    tool, text = steps["tool"].astype("string"), steps["action_input"].astype("string")
    known = (tool.notna() & text.fillna("").str.len().gt(0)).to_numpy()
    tc = pd.factorize(tool)[0].astype(np.int64)
    ic = pd.factorize(text)[0].astype(np.int64)
    code = np.where(known, tc * (int(ic.max(initial=0)) + 2) + ic, -1)
    hit = np.zeros(len(t), dtype=bool)
    for d in range(1, min(window, max(len(t) - 1, 0)) + 1):
        hit[d:] |= (code[d:] >= 0) & (code[d:] == code[:-d]) & (t[d:] == t[:-d])
    return hit


#: A run of Python's whitespace (``str.isspace``: what ``re``'s ``\\s`` matches in a str pattern),
#: spelled out: pandas hands ``\\s`` to Python's ``re`` row by row (RE2's ``\\s`` misses ``\\x0b``
#: and the Unicode spaces), this class to pyarrow's RE2 on Arrow strings, with the same matches.
_SPACE = "[\t\n\x0b\x0c\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+"
#: What :func:`normalise_inputs` changes: a quote, a digit, a whitespace character other than the
#: plain space, two spaces in a row, a space at either end.
_CHANGES = "[\'\"`]|\\d|" + _SPACE[:-1].replace(" ", "") + "|  |^ | $"


def normalise_inputs(text: pd.Series) -> pd.Series:
    """Action inputs with near-duplicates made equal: quotes (``'"`` and backticks) removed,
    every run of digits written ``0``, whitespace runs one space, ends stripped.

    Examples
    --------
    >>> normalise_inputs(pd.Series(["sed -n '10,20p' a.py", 'sed  -n "11,40p" a.py'])).tolist()
    ['sed -n 0,0p a.py', 'sed -n 0,0p a.py']
    """
    text = text.astype("string")
    # only inputs with something to change are rewritten: a quote, a digit, whitespace other
    # than single inner spaces (one match over every input, in the engine the rewrite uses)
    todo = text.str.contains(_CHANGES, regex=True).fillna(False).to_numpy(dtype=bool)
    if not todo.any():
        return text
    t = text[todo].str.replace(r"[\'\"`]", "", regex=True)
    t = t.str.replace(r"\d+", "0", regex=True).str.replace(_SPACE, " ", regex=True).str.strip(" ")
    out = text.copy()
    out[todo] = t
    return out


def repeat_kinds(steps: pd.DataFrame, *, window: int = 3) -> np.ndarray:
    """Each step's repeat kind: 0 none, 1 *stuck* (the same ``tool`` on a near-identical
    ``action_input`` with the same ``observation`` as one of the ``window`` steps before it),
    2 *retry after change* (same tool and input, a different observation: the edit-and-rerun
    cycle), 3 a repeat whose observations are unknown.

    Parameters
    ----------
    steps : DataFrame
        As :func:`repeated_actions`; ``observation`` (text, compared whole) when present.
    window : int
        How many preceding steps are compared, >= 1.

    Returns
    -------
    ndarray of int8
        One per row of ``steps``.

    Notes
    -----
    Inputs are compared after :func:`normalise_inputs` (whitespace, numbers, quoting), so a
    reworded-by-numbers command matches. A step is stuck when any earlier match in the window
    saw the same observation; else a retry when the observations of both are known. Stuck
    repeats are MAST's "step repetition" (Cemri et al. 2025); the re-run after an edit is the
    normal SWE-agent loop (Yang et al. 2024, SWE-agent, arXiv:2405.15793), not being stuck.

    Examples
    --------
    >>> s = pd.DataFrame({"task_index": [0, 0, 0, 0], "tool": ["sh"] * 4,
    ...                   "action_input": ["pytest", "pytest ", "pytest", "ls"],
    ...                   "observation": ["1 failed", "1 failed", "ok", "a"]})
    >>> repeat_kinds(s).tolist()
    [0, 1, 2, 0]
    """
    if not isinstance(window, int | np.integer) or window < 1:
        raise ValueError(f"window must be a whole number >= 1, got {window!r}")
    require_columns(steps, ["task_index", "tool", "action_input"], "steps")
    t = steps["task_index"].to_numpy()
    tool = steps["tool"].astype("string")
    # each distinct input normalised once; a step's code: its tool's and normalised input's
    raw, uniq = pd.factorize(steps["action_input"].astype("string"))
    norm = normalise_inputs(pd.Series(uniq, dtype="string"))
    ncode = pd.factorize(norm)[0].astype(np.int64)
    nonempty = norm.str.len().gt(0).to_numpy(bool)
    known = tool.notna().to_numpy(bool) & (raw >= 0) & nonempty[np.maximum(raw, 0)]
    tc = pd.factorize(tool)[0].astype(np.int64)
    code = np.where(known, tc * (int(ncode.max(initial=0)) + 2) + ncode[np.maximum(raw, 0)], -1)
    obs = (steps["observation"].astype("string") if "observation" in steps
           else pd.Series(pd.NA, index=steps.index, dtype="string"))
    seen = obs.notna().to_numpy()
    same = np.zeros(len(t), dtype=bool)
    differ = np.zeros(len(t), dtype=bool)
    unknown = np.zeros(len(t), dtype=bool)
    for d in range(1, min(window, max(len(t) - 1, 0)) + 1):
        hit = (code[d:] >= 0) & (code[d:] == code[:-d]) & (t[d:] == t[:-d])
        both = seen[d:] & seen[:-d]
        # the observations compared only where a repeat has both (a few rows, not every text)
        pair = np.flatnonzero(hit & both)
        equal = np.zeros(len(hit), dtype=bool)
        equal[pair] = (obs.iloc[pair + d].to_numpy(dtype=object)
                       == obs.iloc[pair].to_numpy(dtype=object))
        same[d:] |= hit & both & equal
        differ[d:] |= hit & both & ~equal
        unknown[d:] |= hit & ~both
    return np.select([same, differ, unknown], [1, 2, 3], 0).astype(np.int8)


def error_recovery(steps: pd.DataFrame, calls: pd.DataFrame | None = None) -> pd.DataFrame:
    """Every failed step and failed tool call, and whether its task recovered from it.

    Parameters
    ----------
    steps : DataFrame
        From :func:`~dabench_analysis.trajectory.steps.order_steps` with ``success`` (flag) and,
        where present, ``tool`` and ``stage``.
    calls : DataFrame, optional
        Tool calls (``run.tool_calls``) with ``task_index`` (see
        :func:`~dabench_analysis.trajectory.steps.index_tasks`), ``step_id``, ``tool_name``,
        ``success``.

    Returns
    -------
    DataFrame
        One row per error, in task and step order: ``task_index``, ``step_id``, ``tool``
        (<NA> for a step without one), ``stage``, ``source`` ("step", "tool call", or "step,
        tool call" when both files record it), ``recovered`` (bool).

    Notes
    -----
    An error is a step with ``success`` false, or a tool call with ``success`` false (one error
    when both record the same step and tool). It is recovered when a later step of the same
    task (a larger ``step_id``) calls the same tool successfully, in either file; for an error
    without a tool, when a later step of the same stage succeeds (an error without a stage
    either: when a later step without a stage succeeds). Steps and calls with a
    missing ``success`` are neither errors nor recoveries.

    Raises
    ------
    ValueError
        A column missing in ``steps`` or ``calls``.

    References
    ----------
    Cemri, M. et al. (2025). Why do multi-agent LLM systems fail? arXiv:2503.13657 (recovery
    from step failures).

    Examples
    --------
    >>> s = pd.DataFrame({"task_index": [0, 0, 0, 0], "step_id": [1, 2, 3, 4],
    ...                   "tool": ["sql", "sql", None, "py"], "stage": ["E", "E", "V", "E"],
    ...                   "success": [False, True, False, False]})
    >>> error_recovery(s)[["step_id", "recovered"]].values.tolist()
    [[1, True], [3, False], [4, False]]
    """
    require_columns(steps, ["task_index", "step_id", "success"], "steps")
    none = pd.Series(pd.NA, index=steps.index, dtype="string")
    tools = [steps["tool"] if "tool" in steps else none]
    if calls is not None and not calls.empty:
        require_columns(calls, ["task_index", "step_id", "tool_name", "success"], "tool calls")
        calls = calls[(calls["task_index"] >= 0) & calls["step_id"].notna()]
        tools.append(calls["tool_name"])
    tool_code, tool_names = pd.factorize(pd.concat(tools, ignore_index=True).astype("string"))
    stage_code, stage_names = pd.factorize((steps["stage"] if "stage" in steps else none)
                                           .astype("string"))
    ev = pd.DataFrame({"task_index": steps["task_index"].to_numpy(),
                       "step_id": steps["step_id"].to_numpy(dtype="int64"),
                       "tool": tool_code[:len(steps)], "stage": stage_code,
                       "ok": _flag_codes(steps["success"]), "src": 1})
    if len(tools) > 1:
        stage_at = pd.Series(stage_code, index=pd.MultiIndex.from_arrays(
            [ev["task_index"], ev["step_id"]]))
        stage_at = stage_at[~stage_at.index.duplicated()]
        at = pd.MultiIndex.from_arrays([calls["task_index"], calls["step_id"].astype("int64")])
        ev = pd.concat([ev, pd.DataFrame({
            "task_index": calls["task_index"].to_numpy(), "step_id": at.get_level_values(1),
            "tool": tool_code[len(steps):],
            "stage": stage_at.reindex(at).fillna(-1).to_numpy(dtype="int64"),
            "ok": _flag_codes(calls["success"]), "src": 2})], ignore_index=True)
    ev = _at_result_steps(ev[ev["ok"] >= 0])
    # what an error is recovered by: its tool (kind 0), or for an error without one its stage
    # (a step without a stage is in the stage "none": never left out)
    stage = np.where(ev["stage"] >= 0, ev["stage"], len(stage_names))
    ev["kind"] = np.where(ev["tool"] >= 0, 0, 1)
    ev["code"] = np.where(ev["tool"] >= 0, ev["tool"], stage)
    ok = (ev["ok"] == 1).to_numpy()
    task, step, tool = (ev[c].to_numpy()[ok] for c in ("task_index", "step_id", "tool"))
    last = []  # the last success per task and tool (kind 0), and per task and stage (kind 1),
    for kind, rows, code in ((0, tool >= 0, tool), (1, slice(None), stage[ok])):  # apart:
        last.append(pd.DataFrame({"task_index": task[rows], "kind": kind, "code": code[rows],
                                  "step_id": step[rows]}).groupby(  # no stacked copy of ev
            ["task_index", "kind", "code"])["step_id"].max())
    last = pd.concat(last)
    bad = ev[ev["ok"] == 0]
    errors = bad.assign(by_step=bad["src"] == 1, by_call=bad["src"] == 2).groupby(
        ["task_index", "step_id", "kind", "code"], sort=True).agg(
        tool=("tool", "max"), stage=("stage", "max"), by_step=("by_step", "max"),
        by_call=("by_call", "max")).reset_index()
    errors["src"] = errors["by_step"].astype(int) + 2 * errors["by_call"].astype(int)
    later = last.reindex(pd.MultiIndex.from_frame(errors[["task_index", "kind", "code"]]))
    return pd.DataFrame({
        "task_index": errors["task_index"], "step_id": errors["step_id"],
        "tool": _names(errors["tool"], tool_names), "stage": _names(errors["stage"], stage_names),
        "source": np.array(["", "step", "tool call", "step, tool call"])[errors["src"]],
        "recovered": later.to_numpy(dtype="float64") > errors["step_id"].to_numpy()})


def _at_result_steps(ev: pd.DataFrame) -> pd.DataFrame:
    """Events with each step recording a tool call's outcome placed at the call's step: within
    a task and tool, when the steps with an outcome are as many as the calls (none before its
    call), the k-th such step is the k-th call's result (another harness records a call on one
    step and its result on the next), so a call and its result step are one event; otherwise
    every event keeps its step."""
    tooled = (ev["tool"] >= 0).to_numpy()
    src = ev["src"].to_numpy()
    if not ((src == 2) & tooled).any():
        return ev
    parts = {}
    for code in (1, 2):
        part = ev[(src == code) & tooled].sort_values(["task_index", "tool", "step_id"],
                                                        kind="stable")
        part = part.assign(_k=part.groupby(["task_index", "tool"]).cumcount(),
                           _n=part.groupby(["task_index", "tool"])["step_id"].transform("size"))
        parts[code] = part
    calls, steps = parts[2], parts[1]
    pair = calls.merge(steps[["task_index", "tool", "_k", "_n", "step_id"]].reset_index(),
                       on=["task_index", "tool", "_k"], suffixes=("", "_s"))
    move = (pair["_n"] == pair["_n_s"]) & (pair["step_id_s"] >= pair["step_id"])
    moved = pair[move.groupby([pair["task_index"], pair["tool"]]).transform("all")]
    ev = ev.copy()  # the result step takes its call's step: the step that made the call
    ev.loc[moved["index"].to_numpy(), "step_id"] = moved["step_id"].to_numpy()
    return ev


def _flag_codes(values: pd.Series) -> np.ndarray:
    """1 true, 0 false, -1 missing."""
    flags = values.astype("boolean")
    return np.where(flags.isna(), -1, flags.fillna(False).astype(int)).astype(np.int8)


def _names(codes: pd.Series, names) -> pd.Series:
    values = np.asarray(names, dtype=object)
    c = codes.to_numpy()
    return pd.Series(np.where(c >= 0, values[np.clip(c, 0, None)] if len(values) else None,
                              None), dtype="string")


def first_failures(steps: pd.DataFrame, calls: pd.DataFrame | None = None) -> pd.DataFrame:
    """Each task's first failing step: the lowest ``step_id`` whose step or tool call failed.

    Parameters
    ----------
    steps, calls : DataFrame
        As :func:`error_recovery`; ``agent`` is read from the steps where present, and
        ``error_type`` and ``error_message`` from the calls.

    Returns
    -------
    DataFrame
        One row per task with a failing step: ``task_index``, ``step_id``, ``stage``,
        ``agent``, ``tool``, ``error_type``, ``error_message`` (of the step's first failed
        call; <NA> without one).

    Raises
    ------
    ValueError
        A column missing in ``steps`` or ``calls``.

    Notes
    -----
    The failing steps are :func:`error_recovery`'s errors; the first is the one with the
    lowest ``step_id`` (seed 000 §Data Model Schema 2: "identify the exact failure point").

    References
    ----------
    Cemri, M. et al. (2025). Why do multi-agent LLM systems fail? arXiv:2503.13657 (failure
    attribution to a step).

    Examples
    --------
    >>> s = pd.DataFrame({"task_index": [0, 0, 1], "step_id": [1, 2, 1],
    ...                   "success": [True, False, True], "tool": ["a", "b", "a"]})
    >>> first_failures(s)[["task_index", "step_id", "tool"]].values.tolist()
    [[0, 2, 'b']]
    """
    errors = error_recovery(steps, calls)
    first = errors.drop_duplicates("task_index")[["task_index", "step_id"]]
    info = steps.drop_duplicates(["task_index", "step_id"]).set_index(["task_index", "step_id"])
    key = pd.MultiIndex.from_frame(first)
    out = first.reset_index(drop=True)
    for col in ("stage", "agent", "tool"):
        out[col] = (info[col].astype("string").reindex(key).to_numpy() if col in info
                    else pd.NA)
    failed = errors.drop_duplicates("task_index").set_index("task_index")["tool"]
    out["tool"] = out["tool"].fillna(pd.Series(failed.reindex(out["task_index"]).to_numpy()))
    for col in ("error_type", "error_message"):
        out[col] = pd.NA
    if calls is not None and not calls.empty and "success" in calls:
        bad = calls[calls["success"].astype("boolean").eq(False).fillna(False)]
        bad = bad.drop_duplicates(["task_index", "step_id"]).set_index(["task_index",
                                                                        "step_id"])
        for col in ("error_type", "error_message"):
            if col in bad:
                out[col] = bad[col].astype("string").reindex(key).to_numpy()
    return out.astype({c: "string" for c in ("stage", "agent", "tool", "error_type",
                                             "error_message")})
