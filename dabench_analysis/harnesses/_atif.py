"""Harbor's Agent Trajectory Interchange Format (ATIF) -> one run (:class:`~dabench_analysis.load.
harness.Record`).

Source: the ATIF RFC, laude-institute/harbor ``docs/rfcs/0001-trajectory-format.md`` (versions
1.0 to 1.7; Apache-2.0), written by Harbor's agents (Terminus 2 for Terminal-Bench 2) and others.
A file is one JSON object: ``schema_version`` (``"ATIF-v1.7"``), ``session_id``, ``agent``
(``name``, ``version``, ``model_name``), ``steps`` and optional ``final_metrics``; each step
has ``step_id``, ``timestamp``, ``source`` (``system``, ``user`` or ``agent``), ``message``,
``reasoning_content``, ``tool_calls`` (``tool_call_id``, ``function_name``, ``arguments``),
``observation.results`` (``source_call_id``, ``content``) and ``metrics`` (``prompt_tokens``,
``completion_tokens``, ``cached_tokens``, ``cost_usd``).

Fields, and the choices made (docs/guide/harnesses.md lists them too):

* One file is one task of one run: ``task_id`` is ``trajectory_id`` (v1.7), else ``session_id``,
  else the file's name; the run is named after the file. ``agent.name``, ``agent.version``,
  ``agent.model_name``, ``notes`` and the names of ``agent.tool_definitions`` (v1.5) go to
  ``Run.meta``.
* ATIF has no outcome field (Harbor keeps the verifier's reward in its own trial result file):
  a number in the root ``extra.reward`` (a convention of this reader) -> ``final_score``;
  without it the run is *not evaluated* (nothing to score, so the loader refuses it).
* Task: ``final_metrics.total_cost_usd`` -> ``cost``; ``total_prompt_tokens`` +
  ``total_completion_tokens`` -> ``total_tokens``; without ``final_metrics`` the sums of the
  steps' ``metrics``; ``execution_time`` is the last step's timestamp minus the first one's.
* Steps: one trajectory step per ATIF step; ``step_id`` as written; ``source`` -> ``actor``
  (who acted: ``agent``, ``user`` or ``system``) and ``agent`` (``user`` or ``system``, and for
  an agent step the name of its trajectory's ``agent``: subagents are told apart); ``message`` -> ``raw_response``,
  ``reasoning_content`` -> ``thought``, the observation results' contents (joined by a blank
  line) -> ``observation``; ``action`` ``tool_call`` (with ``tool`` the called functions, joined
  by ", ", and ``action_input`` their arguments) or ``message``; ``metrics`` ->
  ``prompt_tokens``, ``completion_tokens``, ``cached_tokens`` (a subset of the prompt tokens,
  v1.2), ``tokens`` (prompt + completion) and ``cost`` (``cost_usd``); ``timestamp`` kept and
  the gap from the previous step's timestamp -> ``duration_seconds``
  (:func:`~dabench_analysis.load._harness.step_gaps`).
* Tool calls: one per ``tool_calls`` entry: ``tool_call_id`` -> ``call_id``, ``function_name``
  -> ``tool_name``, the step's ``step_id`` and ``actor`` (ATIF allows tool calls on agent steps
  only), ``metadata_json`` the arguments, the result matched by ``source_call_id`` (``result``)
  and the call's ``extra`` (v1.7). ATIF has no success flag for a call or step: ``success`` is
  missing (never guessed from the result's text), so failure and recovery tables have nothing
  to count.
* Versions: ``ATIF-vX.Y`` (also ``vX.Y`` or ``X.Y``) in 1.0 to 1.7 is read; any other version,
  or none, is an error finding and the task keeps zero steps (its fields may mean something
  else). What changed between versions and how it is read: 1.1 root ``extra`` (ignored); 1.2
  system steps with an observation (read as any step), ``cached_tokens`` a subset of
  ``prompt_tokens``; 1.3/1.4 token ids (ignored); 1.5 ``agent.tool_definitions`` (their names
  in meta); 1.6 ``message`` and result ``content`` may be lists of content parts (the text
  parts joined, an image as ``[image <path>]``); 1.7 ``session_id`` optional (missing before 1.7
  is a warning), ``trajectory_id``, ``extra`` on calls and results (kept in the call's
  ``metadata_json``), ``llm_call_count`` (0: a deterministic dispatch, kept in the step's
  ``metadata_json``), ``is_copied_context`` (steps copied from an earlier trajectory are left
  out, with an info finding: they are not new actions), and ``subagent_trajectories``
  (embedded subagents: their steps are read right after the step whose observation refers to
  them by ``trajectory_id``, one never referred to at the end; the task's steps are then
  renumbered 1, 2, ... in that order, ``parent_step_id`` is the delegating step and
  ``trace_id`` the ``trajectory_id`` of the trajectory each step belongs to; without embedded
  subagents ``step_id`` is the file's). A ``trajectory_path`` reference to another file is not
  followed.
* A required field missing (root ``agent`` or ``steps``; a step's ``step_id``, ``source`` or
  ``message``; a call's ``tool_call_id`` or ``function_name``) is a warning finding naming the
  step's position; what is there is still read (a step without ``step_id`` is then left out
  by the loader's key rule).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from dabench_analysis.load._findings import Finding, RunLoadError
from dabench_analysis.load._harness import Record, step_gaps

#: The ATIF versions read (major, minor).
VERSIONS: tuple[tuple[int, int], ...] = tuple((1, m) for m in range(8))
_VERSION = re.compile(r"^(?:ATIF-)?v?(\d+)\.(\d+)$")


def _strict(token: str):
    raise ValueError(f"{token} is not JSON")


def _text(value) -> str | None:
    """A message or result content as text: a string as is; a v1.6 list of content parts as
    its text parts, an image as ``[image <path>]``, joined by a newline."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = [p.get("text") if p.get("type") == "text" else
                 f"[image {(p.get('source') or {}).get('path')}]"
                 for p in value if isinstance(p, dict)]
        return "\n".join(str(p) for p in parts if p is not None)
    return json.dumps(value, ensure_ascii=False)


def version(value) -> tuple[int, int] | None:
    """``schema_version`` as (major, minor), or None when it is not a version ATIF names.

    Examples
    --------
    >>> version("ATIF-v1.7"), version("1.4"), version("ATIF-v2.0"), version(None)
    ((1, 7), (1, 4), (2, 0), None)
    """
    m = _VERSION.match(value.strip()) if isinstance(value, str) else None
    return (int(m[1]), int(m[2])) if m else None


def _missing(obj: dict, fields: tuple[str, ...], name: str, row: int | None,
             where: str) -> list[Finding]:
    return [Finding("warning", name, row, f, "missing_field",
                    f"{where} has no {f} (required by the ATIF RFC)")
            for f in fields if f not in obj]


def _calls(step: dict, key: dict, row: dict, name: str, pos: int | None,
           where: str) -> tuple[list, list]:
    """The tool calls of one step, each with the observation result it answers."""
    obs = step.get("observation") if isinstance(step.get("observation"), dict) else {}
    results = [r for r in obs.get("results") or [] if isinstance(r, dict)]
    by_id = {r.get("source_call_id"): r for r in results if r.get("source_call_id")}
    calls, found = [], []
    for c in step.get("tool_calls") or []:
        if not isinstance(c, dict):
            continue
        found += _missing(c, ("tool_call_id", "function_name"), name, pos,
                          f"a tool call of {where}")
        res = by_id.get(c.get("tool_call_id"), {})
        calls.append({**key, "step_id": row["step_id"], "call_id": c.get("tool_call_id"),
                      "tool_name": c.get("function_name"), "actor": row["actor"],
                      "success": None, "metadata_json": {
                          "arguments": c.get("arguments"), "result": _text(res.get("content")),
                          **({"extra": c["extra"]} if c.get("extra") else {})}})
    return calls, found


def _refs(step: dict) -> list:
    """The ``trajectory_id`` s a step's observation delegates to (v1.7 embedded subagents)."""
    obs = step.get("observation") if isinstance(step.get("observation"), dict) else {}
    return [ref.get("trajectory_id") for r in obs.get("results") or [] if isinstance(r, dict)
            for ref in r.get("subagent_trajectory_ref") or [] if isinstance(ref, dict)]


def _flatten(data: dict, copied: list) -> list[tuple]:
    """Every step to read, in order: ``(position in the root's steps or None, step, its
    trajectory, the 1-based index of the step that delegated to it or None)``; an embedded
    subagent's steps follow the step referring to it (one never referred to: at the end);
    steps with ``is_copied_context`` go to ``copied``."""
    subs = {t.get("trajectory_id"): t for t in data.get("subagent_trajectories") or []
            if isinstance(t, dict) and t.get("trajectory_id")}
    out: list[tuple] = []

    def walk(traj: dict, parent: int | None, top: bool) -> None:
        for i, st in enumerate(traj.get("steps") or []):
            if not isinstance(st, dict):
                continue
            if st.get("is_copied_context") is True:
                copied.append(st)
                continue
            out.append((i + 1 if top else None, st, traj, parent))
            here = len(out)
            for ref in _refs(st):
                if ref in subs:
                    walk(subs.pop(ref), here, False)

    walk(data, None, True)
    for sub in list(subs.values()):
        walk(sub, None, False)
    return out


def _step(step: dict, key: dict, gap, name: str, pos: int | None,
          where: str) -> tuple[dict, list, list]:
    found = _missing(step, ("step_id", "source", "message"), name, pos, where)
    metrics = step.get("metrics") if isinstance(step.get("metrics"), dict) else {}
    prompt, completion = metrics.get("prompt_tokens"), metrics.get("completion_tokens")
    tools = [c for c in step.get("tool_calls") or [] if isinstance(c, dict)]
    obs = step.get("observation") if isinstance(step.get("observation"), dict) else {}
    contents = [_text(r.get("content")) for r in obs.get("results") or []
                if isinstance(r, dict)]
    row = {**key, "step_id": step.get("step_id"), "agent": step.get("source"),
           "actor": step.get("source"), "action": "tool_call" if tools else "message",
           "tool": ", ".join(str(c.get("function_name")) for c in tools) or None,
           "action_input": [c.get("arguments") for c in tools] or None,
           "thought": step.get("reasoning_content"), "raw_response": _text(step.get("message")),
           "observation": "\n\n".join(c for c in contents if c) or None,
           "prompt_tokens": prompt, "completion_tokens": completion,
           "cached_tokens": metrics.get("cached_tokens"),
           "tokens": prompt + completion if isinstance(prompt, int) and isinstance(
               completion, int) else None, "cost": metrics.get("cost_usd"),
           "timestamp": step.get("timestamp"), "duration_seconds": gap,
           **({"metadata_json": {"llm_call_count": step["llm_call_count"]}}
              if step.get("llm_call_count") is not None else {})}
    calls, more = _calls(step, key, row, name, pos, where)
    return row, calls, found + more


def _task(data: dict, key: dict, steps: list[dict]) -> dict:
    fm = data.get("final_metrics") if isinstance(data.get("final_metrics"), dict) else {}
    cost = fm.get("total_cost_usd")
    if cost is None and any(s.get("cost") is not None for s in steps):
        cost = sum(s["cost"] for s in steps if isinstance(s.get("cost"), (int, float)))
    prompt, completion = fm.get("total_prompt_tokens"), fm.get("total_completion_tokens")
    tokens = prompt + completion if isinstance(prompt, int) and isinstance(completion, int) \
        else sum(s["tokens"] for s in steps if s.get("tokens") is not None) or None
    stamps = [s["timestamp"] for s in steps if step_gaps([s.get("timestamp")], s.get(
        "timestamp"))[0] is not None]  # the readable ones
    span = step_gaps(stamps[-1:], stamps[0]) if stamps else []
    extra = data.get("extra") if isinstance(data.get("extra"), dict) else {}
    reward = extra.get("reward")
    reward = reward if isinstance(reward, (int, float)) and not isinstance(reward, bool) else None
    return {**key, "final_score": reward, "cost": cost, "total_tokens": tokens,
            "execution_time": span[0] if span else None,
            "schema_version": data.get("schema_version"),
            "session_id": data.get("session_id")}


def _read(path: Path) -> dict:
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh, parse_constant=_strict)
    except (UnicodeDecodeError, ValueError) as exc:
        raise RunLoadError(f"{path}: not a readable ATIF trajectory ({exc})",
                           [Finding("error", path.name, None, None, "unreadable",
                                    str(exc))]) from None
    if not isinstance(data, dict) or "schema_version" not in data:
        raise RunLoadError(f"{path}: not an ATIF trajectory (a JSON object with "
                           "schema_version, agent and steps)")
    return data


def read_atif(path: str | Path) -> Record:
    """One ATIF trajectory file as a run of one task (the module notes list the fields).

    Parameters
    ----------
    path : path-like
        The trajectory JSON.

    Returns
    -------
    Record
        Named after the file; one task row, its steps and tool calls (none for a version
        outside 1.0 to 1.7: an error finding).

    Raises
    ------
    RunLoadError
        Not valid JSON (``NaN`` refused), not UTF-8, or not an object with ``schema_version``.

    Examples
    --------
    >>> rec = read_atif("tests/data/harness/atif/stock_price_v1.5.json")
    >>> len(rec.steps), [c["tool_name"] for c in rec.calls], rec.tasks[0]["cost"]
    (3, ['financial_search', 'financial_search'], 0.00078)
    """
    path = Path(path)
    data, name = _read(path), path.name
    vers = version(data.get("schema_version"))
    found = _missing(data, ("agent", "steps"), name, None, "the trajectory")
    if vers is not None and vers < (1, 7):
        found += _missing(data, ("session_id",), name, None, f"an ATIF-v1.{vers[1]} trajectory")
    copied: list = []
    kept = _flatten(data, copied) if vers in VERSIONS else []
    if vers not in VERSIONS:
        n = len([s for s in data.get("steps") or [] if isinstance(s, dict)])
        found.append(Finding("error", name, None, "schema_version", "unknown_version",
                             f"schema_version {data.get('schema_version')!r} is not ATIF 1.0 to "
                             f"1.7: its {n} step(s) are not read"))
    if copied:
        found.append(Finding("info", name, None, "is_copied_context", "copied_context",
                             f"{len(copied)} step(s) copied from an earlier trajectory left out"))
    steps, calls = [], []
    nested = any(t is not data for _, _, t, _ in kept)  # embedded subagents: steps renumbered
    gaps = step_gaps([s.get("timestamp") for _, s, _, _ in kept])
    key = {"task_id": data.get("trajectory_id") or data.get("session_id") or path.stem}
    for i, ((pos, s, traj, parent), gap) in enumerate(zip(kept, gaps, strict=True)):
        where = f"step {pos}" if pos else f"a step of subagent {traj.get('trajectory_id')}"
        row, c, f = _step(s, key, gap, name, pos, where)
        who = traj.get("agent") if isinstance(traj.get("agent"), dict) else {}
        row["agent"] = who.get("name") or "agent" if row["actor"] == "agent" else row["actor"]
        if nested:
            row.update(step_id=i + 1, parent_step_id=parent,
                       trace_id=traj.get("trajectory_id") or key["task_id"])
            for call in c:
                call["step_id"] = i + 1
        steps.append(row)
        calls += c
        found += f
    task = _task(data, key, steps)
    agent = data.get("agent") if isinstance(data.get("agent"), dict) else {}
    tools = [(d.get("function") or {}).get("name") for d in agent.get("tool_definitions") or []
             if isinstance(d, dict)]
    meta = {"agent": agent.get("name"), "agent_version": agent.get("version"),
            "model": agent.get("model_name"), "schema_version": data.get("schema_version"),
            "notes": data.get("notes"), **({"tools": tools} if tools else {})}
    why = "" if task["final_score"] is not None else (
        "the ATIF trajectory has no outcome (a number in its root extra.reward)")
    return Record(path.stem, [task], steps or None, calls or None, findings=found, meta=meta,
                  not_evaluated=why)
