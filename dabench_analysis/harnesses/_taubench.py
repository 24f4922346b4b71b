"""tau-bench and tau2-bench results files -> one run (:class:`~dabench_analysis.load._harness.Record`).

tau-bench (sierra-research/tau-bench) writes a JSON list, one object per task and trial:
``task_id``, ``trial``, ``reward``, ``info`` (``task``, ``user_cost``, ``reward_info``, ...)
and ``traj`` (the OpenAI-style message list: ``role``, ``content``, ``tool_calls`` of the
assistant, ``tool`` messages answering them by ``tool_call_id``). tau2-bench
(sierra-research/tau2-bench) writes one object with ``simulations``: ``task_id``, ``trial``,
``reward_info.reward``, ``agent_cost``, ``user_cost``, ``duration`` (seconds),
``termination_reason`` and ``messages`` (tool calls as ``{id, name, arguments}``, tool
results as ``tool`` messages with ``error``).

Fields (the docs' "Other harnesses" lists them too): ``reward`` -> ``final_score``;
``trial`` -> ``trial`` (a file with no ``trial`` in any result is one trial per task: no trial
column; a result without it among results with it is a ``missing_key`` error, left out);
``info.user_cost`` -> ``user_cost`` (the simulated user's cost, kept,
not the agent's); ``info.error`` (a task that raised) -> ``error``; tau2's ``agent_cost`` -> ``cost``, ``duration`` -> ``execution_time``,
``termination_reason`` kept; the messages -> trajectory steps (one per message: ``agent`` the
role, ``action`` ``message`` / ``tool_call`` / ``tool_result``, ``tool``, ``action_input`` the
call's arguments, ``observation`` the content; ``usage.prompt_tokens`` /
``completion_tokens`` -> ``prompt_tokens`` / ``completion_tokens`` and ``tokens``
(``total_tokens``, else their sum: tau2 writes no total); the message's ``cost`` -> ``cost``;
``timestamp`` kept, and the gap from the previous message's timestamp (the first message:
from the simulation's ``start_time``) -> ``duration_seconds``, the time it took to produce
the message: the LLM's for the agent's and the simulated user's, the tool's for a tool
message (:func:`~dabench_analysis.load._harness.step_gaps`: no gap is guessed); ``actor`` who
acted: ``agent`` for the assistant, ``user`` for the simulated user, a tool message the
actor of the call it answers) and tool calls (``actor``: the call's ``requestor``,
``assistant`` -> ``agent``, ``user`` -> ``user``, else the role of the message holding it; in
tau2 telecom the simulated user calls tools, in the airline file only the agent; ``call_id``, ``tool_name``,
``success``: tau2's ``error`` flag; tau-bench writes no flag, and its environment answers a
failed call with ``Error: ...``, which is read as a failure). A ``tool`` message answers
the first unanswered call with its id (``tool_call_id``; tau2: ``id``), or, without an id, the
first unanswered call: every call is its own entry, so calls without ids are never merged.
tau2's ``tasks`` times ``info.num_trials`` is the number of simulations it declares
(:class:`~dabench_analysis.load._harness.Declared`: fewer read is a partial run).
"""

from __future__ import annotations

import json
from pathlib import Path

from dabench_analysis.load._findings import Finding, RunLoadError
from dabench_analysis.load._harness import Declared, Record, step_gaps


def _strict(token: str):
    raise ValueError(f"{token} is not JSON")


def _load(path: Path):
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh, parse_constant=_strict)
    except (UnicodeDecodeError, ValueError) as exc:
        raise RunLoadError(f"{path}: not a readable tau-bench results file ({exc})",
                           [Finding("error", path.name, None, None, "unreadable",
                                    str(exc))]) from None


def _arguments(call: dict) -> object:
    fn = call.get("function")
    return fn.get("arguments") if isinstance(fn, dict) else call.get("arguments")


#: Who acted, from a message's role or a call's ``requestor`` (tau2 telecom's simulated user
#: calls tools too): the agent or the simulated user.
ACTORS = {"assistant": "agent", "user": "user"}


def _usage(m: dict) -> dict:
    """A message's ``usage`` as step columns: ``prompt_tokens``, ``completion_tokens`` and
    ``tokens`` (``total_tokens``, else their sum when both are there; tau2 writes no total)."""
    usage = m.get("usage") if isinstance(m.get("usage"), dict) else {}
    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    total = usage.get("total_tokens")
    if total is None and isinstance(prompt, int) and isinstance(completion, int):
        total = prompt + completion
    return {"tokens": total, "prompt_tokens": prompt, "completion_tokens": completion}


def _answered(pending: list[dict], m: dict) -> dict | None:
    """The call a ``tool`` message answers: the first unanswered call with its id, else (a
    message or call without id) the first unanswered call. Each call is its own entry, so calls
    without ids (or with one id used twice) never share a lookup key."""
    ref = m.get("tool_call_id") or m.get("id")
    match = next((c for c in pending if ref and c["_ref"] == ref), None)
    if match is None:
        match = next((c for c in pending if not (ref and c["_ref"])), None)
    if match is not None:
        pending.remove(match)
    return match


def _messages(key: dict, messages: list, start: str | None = None
              ) -> tuple[list[dict], list[dict]]:
    """Trajectory steps (one per message) and tool calls of one trial's message list; ``key``
    the trial's ``task_id`` (and ``trial``), ``start`` its start time (tau2's ``start_time``)."""
    steps, calls, pending = [], [], []
    messages = [m for m in messages or [] if isinstance(m, dict)]
    gaps = step_gaps([m.get("timestamp") for m in messages], start)
    for i, m in enumerate(messages):
        role, tool_calls = m.get("role"), m.get("tool_calls") or []
        step = {**key, "step_id": i + 1, "agent": role, "actor": ACTORS.get(role),
                "action": "message", "observation": m.get("content"), **_usage(m),
                "cost": m.get("cost"), "timestamp": m.get("timestamp"),
                "duration_seconds": gaps[i]}
        if role == "tool":
            call = _answered(pending, m)
            content = m.get("content") or ""
            failed = bool(m["error"]) if "error" in m else str(content).startswith("Error")
            if call is not None:
                call.update(success=not failed, error_message=content if failed else None)
            step.update(action="tool_result", tool=m.get("name") or (call or {}).get(
                "tool_name"), success=not failed, actor=ACTORS.get(m.get("requestor"), (
                    call or {}).get("actor")))
        elif tool_calls:
            fns = [c.get("function") if isinstance(c.get("function"), dict) else c
                   for c in tool_calls]
            step.update(action="tool_call", tool=", ".join(str(f.get("name")) for f in fns),
                        action_input=[_arguments(c) for c in tool_calls])
            for j, (c, fn) in enumerate(zip(tool_calls, fns, strict=True)):
                call = {**key, "step_id": i + 1,
                        "call_id": c.get("id") or f"{i + 1}.{j}", "tool_name": fn.get("name"),
                        "success": None, "metadata_json": {"arguments": _arguments(c)},
                        "actor": ACTORS.get(c.get("requestor"), ACTORS.get(role)),
                        "_ref": c.get("id")}
                calls.append(call)
                pending.append(call)
        steps.append(step)
    for c in calls:
        del c["_ref"]
    return steps, calls


def _key(r: dict) -> dict:
    """A result's key: ``task_id``, and ``trial`` when the result has the field (a file with
    no ``trial`` anywhere is one trial per task: no trial column, as an eval-v2 run)."""
    return {"task_id": r.get("task_id"), **({"trial": r.get("trial")} if "trial" in r else {})}


def _tau1(path: Path, results: list) -> Record:
    tasks, steps, calls = [], [], []
    for r in results:
        info = r.get("info") if isinstance(r.get("info"), dict) else {}
        tasks.append({**_key(r), "final_score": r.get("reward"),
                      "user_cost": info.get("user_cost"), "source": info.get("source"),
                      **({"error": str(info["error"])} if info.get("error") else {})})
        s, c = _messages(_key(r), r.get("traj"))
        steps += s
        calls += c
    return Record(path.stem, tasks, steps or None, calls or None)


def _tau2(path: Path, data: dict) -> Record:
    tasks, steps, calls = [], [], []
    for r in data.get("simulations") or []:
        reward = (r.get("reward_info") or {}).get("reward")
        tasks.append({**_key(r), "final_score": reward, "cost": r.get("agent_cost"),
                      "user_cost": r.get("user_cost"), "execution_time": r.get("duration"),
                      "termination_reason": r.get("termination_reason"),
                      "simulation_id": r.get("id")})
        s, c = _messages(_key(r), r.get("messages"), r.get("start_time"))
        steps += s
        calls += c
    info = data.get("info") if isinstance(data.get("info"), dict) else {}
    agent = info.get("agent_info") if isinstance(info.get("agent_info"), dict) else {}
    return Record(path.stem, tasks, steps or None, calls or None,
                  meta={"model": agent.get("llm"), "num_trials": info.get("num_trials")},
                  declared=_tau2_declared(data, info))


def _tau2_declared(data: dict, info: dict) -> Declared | None:
    """tau2's ``tasks`` (the tasks of the run) times ``info.num_trials``: the simulations a
    finished run holds; tau2 writes the file as simulations finish, so fewer is a partial run
    (an info finding)."""
    n_tasks, trials = data.get("tasks"), info.get("num_trials")
    if not isinstance(n_tasks, list) or not n_tasks or isinstance(trials, bool) \
            or not isinstance(trials, int) or trials < 1:
        return None
    return Declared(len(n_tasks) * trials, f"{len(n_tasks)} tasks x info.num_trials "
                    f"{trials}", "info")


def read_taubench(path: str | Path) -> Record:
    """One tau-bench or tau2-bench results file as a run (the module notes list the fields).

    Parameters
    ----------
    path : path-like
        The results JSON.

    Returns
    -------
    Record
        Named after the file (without ``.json``); tasks one per task and trial.

    Raises
    ------
    RunLoadError
        Not valid JSON (``NaN`` and ``Infinity`` are refused: they are not JSON), not UTF-8,
        or neither a list of results nor an object with ``simulations``.

    Examples
    --------
    >>> rec = read_taubench("tests/data/harness/tau-bench/gpt-4o-airline.json")
    >>> rec.name, len(rec.tasks), sorted(rec.tasks[0])[:3]
    ('gpt-4o-airline', 200, ['final_score', 'source', 'task_id'])
    """
    path = Path(path)
    data = _load(path)
    if isinstance(data, list) and all(isinstance(r, dict) for r in data):
        return _tau1(path, data)
    if isinstance(data, dict) and isinstance(data.get("simulations"), list):
        return _tau2(path, data)
    raise RunLoadError(f"{path}: neither tau-bench results (a list of objects with task_id, "
                       "trial and reward) nor tau2-bench results (an object with simulations)")
