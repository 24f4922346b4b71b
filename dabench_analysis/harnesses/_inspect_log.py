"""Inspect logs (``.eval`` and ``.json``) -> one run, through inspect_ai's own reader.

The log is read with :func:`inspect_ai.log.read_eval_log` and its classes (the file format is
inspect_ai's, not frozen, so it is never unzipped or parsed here); inspect_ai is the optional
extra ``dabench-analysis[inspect]``. One log is one run, named after the log file.

Fields (the docs' "Other harnesses" lists them too): each sample and epoch is a task row:
``id`` -> ``task_id``, ``epoch`` -> ``trial`` (repeated trials), the first scorer's value ->
``final_score`` through inspect_ai's own ``value_to_float`` (``C`` 1.0, ``I`` 0.0, ``P`` 0.5,
``N`` 0.0, yes/no and true/false 1/0, numbers as numbers; a partial 0.5 is below the default
success threshold 0.8, so it counts as not correct), the other scorers' values as
``score_<name>``, ``answer``, ``target``; the model usage summed over models ->
``total_tokens`` (and ``input_tokens``, ``output_tokens``; ``total_cost`` -> ``cost``);
``total_time`` -> ``execution_time`` (seconds), ``working_time`` kept; a sample's ``error``
message -> ``error``. Messages -> trajectory steps (``agent`` the role, ``action`` ``message``
/ ``tool_call`` / ``tool_result``, ``tool``, ``action_input``, ``observation`` the text) and
tool events -> tool calls (``call_id``, ``tool_name`` the function, ``success`` no error,
``latency_seconds`` the event's working time, ``error_type``, ``error_message``); without tool
events, the tool messages give the tool calls. A log without any score (written before
scoring) is *not evaluated*. The log's ``results.total_samples`` (samples x epochs) is the number
of task rows it declares (:class:`~dabench_analysis.load._harness.Declared`): fewer samples read
(a sample member lost from the ``.eval`` zip) is a warning, or an info finding when the log's
status is not ``success`` (a stopped run).
"""

from __future__ import annotations

from pathlib import Path

from dabench_analysis._lazy import need
from dabench_analysis.load._findings import Finding, RunLoadError
from dabench_analysis.load._harness import Declared, Record


def _inspect():
    try:  # inspect-ai is the [inspect] extra: one line naming it when missing
        log = need("inspect_ai.log", what="reading Inspect logs", extra="inspect",
                   dist="inspect-ai")
        scorer = need("inspect_ai.scorer", what="reading Inspect logs", extra="inspect",
                      dist="inspect-ai")
    except ImportError as exc:
        raise RunLoadError(str(exc)) from None
    return log.read_eval_log, scorer.value_to_float()


def _usage(sample) -> dict:
    usage = list((sample.model_usage or {}).values())
    if not usage:
        return {}
    total = {k: sum(getattr(u, k) or 0 for u in usage)
             for k in ("input_tokens", "output_tokens", "total_tokens")}
    costs = [u.total_cost for u in usage if getattr(u, "total_cost", None) is not None]
    return {**total, **({"cost": sum(costs)} if costs else {})}


def _score(sample, scorer: str | None, to_float, name: str, findings: list) -> dict:
    scores = sample.scores or {}
    out = {}
    for key, score in scores.items():
        value = score.value
        if isinstance(value, (dict, list)):
            findings.append(Finding("warning", name, None, "final_score", "score_value",
                                    f"sample {sample.id!r} epoch {sample.epoch}: scorer {key!r} "
                                    f"gives {type(value).__name__} {value!r}, not one value: "
                                    "left missing"))
            number = None
        else:
            number = to_float(value)
        if key == scorer:
            out.update(final_score=number, answer=score.answer, score_value=str(value))
        else:
            out[f"score_{key}"] = number
    return out


def _steps(sample) -> tuple[list[dict], list[dict]]:
    base = {"task_id": sample.id, "trial": sample.epoch}
    steps, calls = [], []
    for i, m in enumerate(sample.messages, start=1):
        step = {**base, "step_id": i, "agent": m.role, "action": "message",
                "observation": m.text}
        if m.role == "assistant" and m.tool_calls:
            step.update(action="tool_call",
                        tool=", ".join(c.function for c in m.tool_calls),
                        action_input=[c.arguments for c in m.tool_calls])
        elif m.role == "tool":
            step.update(action="tool_result", tool=m.function, success=m.error is None)
            calls.append({**base, "step_id": i, "call_id": m.tool_call_id,
                          "tool_name": m.function, "success": m.error is None,
                          "error_type": m.error.type if m.error else None,
                          "error_message": m.error.message if m.error else None})
        steps.append(step)
    events = [e for e in sample.events if getattr(e, "event", None) == "tool"]
    if events:  # the tool events are the record of each call
        calls = [{**base, "call_id": e.id, "tool_name": e.function,
                  "success": e.error is None, "latency_seconds": e.working_time,
                  "error_type": e.error.type if e.error else None,
                  "error_message": e.error.message if e.error else None,
                  "timestamp": e.timestamp.isoformat() if e.timestamp else None,
                  "metadata_json": {"arguments": e.arguments}} for e in events]
    return steps, calls


def read_inspect(path: str | Path) -> Record:
    """One Inspect log as a run (the module notes list the fields).

    Parameters
    ----------
    path : path-like
        An Inspect log, ``.eval`` or ``.json``.

    Returns
    -------
    Record
        Named after the log file (without its suffix); ``meta`` holds the log's task, model,
        scorer, status, eval and run ids; ``not_evaluated`` says why a log without scores
        cannot be analysed.

    Raises
    ------
    RunLoadError
        inspect_ai is not installed (the message says how to install it), or it cannot read
        the log.

    Examples
    --------
    >>> rec = read_inspect("tests/data/harness/inspect_ai/log_streaming.eval")
    >>> rec.name, [(t["task_id"], t["trial"], t["final_score"]) for t in rec.tasks]
    ('log_streaming', [(1, 1, 0.0), (2, 1, 1.0), (1, 2, 1.0), (2, 2, 1.0)])
    """
    path = Path(path)
    read_eval_log, to_float = _inspect()
    try:
        log = read_eval_log(str(path))
    except Exception as exc:  # noqa: BLE001 - inspect_ai's own errors, whatever their type
        raise RunLoadError(f"{path}: inspect_ai cannot read this log "
                           f"({type(exc).__name__}: {exc})") from None
    results = log.results.scores if log.results and log.results.scores else []
    samples = log.samples or []
    scorer = results[0].name if results else next(
        (k for s in samples for k in (s.scores or {})), None)
    meta = {"task": log.eval.task, "model": log.eval.model, "scorer": scorer,
            "status": log.status, "eval_id": log.eval.eval_id, "run_id": log.eval.run_id,
            "created": log.eval.created}
    if scorer is None:
        declared = _declared(log)
        why = ((f"the log has no samples ({declared.where})" if declared else
                "the log has no samples") if not samples else
               f"the log ({log.status}) has no scores: it was written before scoring")
        return Record(path.stem, [], meta=meta, not_evaluated=why)
    tasks, steps, calls, findings = [], [], [], []
    for s in samples:
        err = s.error.message if s.error else None
        tasks.append({"task_id": s.id, "trial": s.epoch,
                      **_score(s, scorer, to_float, path.name, findings),
                      "target": s.target, **_usage(s), "execution_time": s.total_time,
                      "working_time": s.working_time, "error": err})
        st, ca = _steps(s)
        steps += st
        calls += ca
    return Record(path.stem, tasks, steps or None, calls or None, findings, meta,
                  declared=_declared(log))


def _declared(log) -> Declared | None:
    """The log's own count of samples x epochs (``results.total_samples``), when it has one."""
    total = getattr(log.results, "total_samples", None) if log.results else None
    if not isinstance(total, int) or isinstance(total, bool):
        return None
    return Declared(total, f"results.total_samples {total}, status {log.status}",
                    "warning" if log.status == "success" else "info")
