"""SWE-agent / mini-swe-agent trajectory files -> one run (:class:`~dabench_analysis.load._harness.Record`).

A run is a folder holding ``<instance>/<instance>.traj.json`` (or ``.traj``) files, one per
task, up to three levels down (mini-swe-agent's ``trajs/<instance>/`` layout), plus the run's resolved list; or one
trajectory file alone. mini-swe-agent (SWE-agent/mini-swe-agent, ``trajectory_format``
``mini-swe-agent-1``) writes ``{"info", "messages", "instance_id"}``: ``messages`` are the
system prompt, the task, then assistant turns (a THOUGHT and one bash block) each answered by
a user turn ``<returncode>N</returncode><output>...``.

Fields, and the judgement calls:

* task: ``task_id`` the file's ``instance_id`` (else its name without ``.traj.json``);
  ``final_score`` 1.0 / 0.0 from the resolved list (``resolved`` True/False); a task the list
  does not name (or no list at all) keeps ``final_score`` missing and gets a
  ``missing_outcome`` error naming the file and instance (``load_run`` raises; with
  ``strict=False`` the task stays unscored, never a silent 0). The resolved list is the first
  of, in the folder (or, for one file, its folder and two above): ``results_summary.csv``
  (columns ``instance_id``, ``resolved``), a JSON report with ``resolved_ids`` and
  ``completed_ids`` or ``submitted_ids`` (SWE-bench's harness report: listed and not resolved
  is 0). ``info.model_stats.instance_cost`` -> ``cost``; ``info.model_stats.api_calls`` ->
  ``llm_calls``; the sum of the turns' ``usage.total_tokens`` -> ``total_tokens`` (missing
  when no turn has usage); ``info.exit_status`` -> ``exit_status``; the model name
  (``info.config.model.model_name``) -> ``run.meta["model"]``.
* step: each **assistant turn** (``step_id`` 1, 2, ... in order; the system and task
  messages are no steps); ``agent`` ``assistant``; ``thought`` the text before the bash
  block; ``action_input`` the command; ``observation`` the next user turn whole;
  ``timestamp`` ``extra.response.created`` (epoch seconds, written as ISO 8601 UTC);
  ``tokens`` ``extra.response.usage.total_tokens``; ``metadata_json`` prompt and completion
  tokens and the turn's ``cost`` where present. ``action``: ``bash`` (one block, run),
  ``submit`` (the command whose output the harness took as the submission: the last turn of a
  run whose ``exit_status`` is ``Submitted``), ``format_error`` (zero or several bash blocks:
  mini-swe-agent runs nothing and answers "EXACTLY ONE action"). ``stage``: none (the file
  has no phases).
* tool call: one per turn that ran a command (exactly one bash block): ``tool_name`` ``bash``,
  ``call_id`` the step's id, ``success`` ``returncode == 0`` (a nonzero return code is a
  failure, whatever the output; ``error_type`` ``returncode N``, ``error_message`` the
  output's first 500 characters); a reply saying the command timed out is a failure
  (``error_type`` ``timeout``); the submitting turn's reply (the patch, no return code) is a
  success; any other reply without a return code leaves ``success`` missing (counted in a
  ``no_returncode`` info finding). A format-error turn has no call (nothing ran); its step's
  ``success`` is false. Every call is the agent's own (no ``actor`` column).
* a message that is not an object with a text ``role`` and ``content`` is left out with a
  ``malformed_message`` warning naming the file, the message's 0-based position and field.
"""

from __future__ import annotations

import csv
import json
import math
import os
import re
from datetime import UTC, datetime
from json.encoder import encode_basestring
from pathlib import Path

from dabench_analysis.load._findings import Finding, RunLoadError
from dabench_analysis.load._harness import Record

#: Suffixes of trajectory files.
SUFFIXES = (".traj.json", ".traj")
_BLOCK = re.compile(r"```bash\s*\n(.*?)\n```", re.S)
_RC = re.compile(r"<returncode>\s*(-?\d+)\s*</returncode>")


def trajectory_files(folder: Path, *, first: bool = False) -> list[Path]:
    """The trajectory files in ``folder`` and up to three levels down (mini-swe-agent's
    ``trajs/<instance>/<instance>.traj.json``), sorted by path; ``first``: at most one.

    Hidden names are passed over, as a glob would, and so are eval-v2 run folders below
    ``folder`` (those holding a task file): a folder of runs is not searched through every
    task folder of every run (48,000 task folders in a sweep of 120 runs of 400 tasks).
    """
    from dabench_analysis.schema._files import TASK_FILES

    out: list[Path] = []
    level = [folder]
    for depth in range(4):
        below = []
        for d in level:
            try:
                entries = sorted(os.scandir(d), key=lambda e: e.name)
            except OSError:
                continue
            for e in entries:
                if e.name.startswith("."):
                    continue
                if e.name.endswith(SUFFIXES) and e.is_file():
                    out.append(Path(e.path))
                    if first:
                        return out
                elif depth < 3 and e.is_dir() and not any(
                        os.path.lexists(os.path.join(e.path, t)) for t in TASK_FILES):
                    below.append(e.path)
        level = below
    return sorted(out)


def _csv_list(path: Path) -> dict[str, bool] | None:
    with open(path, encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    if not rows or not {"instance_id", "resolved"} <= set(rows[0]):
        return None
    return {r["instance_id"]: str(r["resolved"]).strip().lower() in ("true", "1")
            for r in rows if r.get("instance_id")}


def _json_list(path: Path) -> dict[str, bool] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("resolved_ids"), list):
        return None
    listed = data.get("completed_ids") or data.get("submitted_ids") or []
    resolved = set(map(str, data["resolved_ids"]))
    return {**{str(i): False for i in listed}, **dict.fromkeys(resolved, True)}


def resolved_list(folders: list[Path]) -> tuple[dict[str, bool] | None, str]:
    """The first resolved list in ``folders``: instance -> resolved, and the file's name."""
    for folder in folders:
        for p in sorted(folder.glob("*.csv")) + sorted(folder.glob("*.json")):
            found = _csv_list(p) if p.suffix == ".csv" else _json_list(p)
            if found is not None:
                return found, p.name
    return None, ""


def _iso(epoch) -> str | None:
    if isinstance(epoch, bool) or not isinstance(epoch, (int, float)):
        return None
    return datetime.fromtimestamp(epoch, UTC).isoformat()


def _usage(m: dict) -> tuple[dict, dict]:
    extra = m.get("extra") if isinstance(m.get("extra"), dict) else {}
    response = extra.get("response") if isinstance(extra.get("response"), dict) else {}
    usage = response.get("usage") if isinstance(response.get("usage"), dict) else {}
    return response, usage


def _output(text: str) -> str:
    """The text between ``<output>`` (and the newline after it) and the first ``</output>``
    after it; the whole text without them (``str.find``: a regex scan of long outputs cost
    a fifth of the load)."""
    i = text.find("<output>")
    j = text.find("</output>", i + 8) if i >= 0 else -1
    if j < 0:
        return text
    i += 9 if text.startswith("\n", i + 8) else 8
    return text[i:j]


def _meta(command: str, code: int | None = None) -> str:
    """The call's ``metadata_json`` text, ``{"command": ..., "returncode": n}``, written with
    the json module's string encoder (``json.dumps`` per call cost a tenth of the load)."""
    tail = "}" if code is None else f', "returncode": {code}}}'
    return '{"command": ' + encode_basestring(command) + tail


def _reply(text: str, command: str, submitting: bool) -> dict:
    """The tool call's outcome read from the user turn answering it."""
    rc = _RC.search(text, 0, 200)  # mini-swe-agent writes it first
    if rc:
        code = int(rc.group(1))
        return {"success": code == 0, "error_type": None if code == 0 else f"returncode {code}",
                "error_message": None if code == 0 else _output(text)[:500],
                "metadata_json": _meta(command, code)}
    if "timed out" in text[:300]:  # "The last command <command>...</command> timed out"
        return {"success": False, "error_type": "timeout", "error_message": text[:500],
                "metadata_json": _meta(command)}
    return {"success": True if submitting else None, "metadata_json": _meta(command)}


def _usage_meta(usage: dict) -> str | dict | None:
    """The step's ``metadata_json``: prompt and completion tokens and cost where present;
    finite numbers written as ``json.dumps`` writes them (``repr``), anything else left to
    the table's JSON encoder."""
    meta = {k: usage[k] for k in ("prompt_tokens", "completion_tokens", "cost") if k in usage}
    if not meta:
        return None
    if all(type(v) is int or (type(v) is float and math.isfinite(v)) for v in meta.values()):
        return "{" + ", ".join(f'"{k}": {v!r}' for k, v in meta.items()) + "}"
    return meta


def _valid(messages: list, name: str, found: list[Finding]) -> list[dict]:
    out = []
    for i, m in enumerate(messages):
        bad = ("message" if not isinstance(m, dict) else "role" if not isinstance(
            m.get("role"), str) else "content" if not isinstance(m.get("content"), str) else "")
        if bad:
            found.append(Finding("warning", name, None, bad, "malformed_message",
                                 f"message {i} (0-based) has no text {bad}; left out"))
        else:
            out.append(m)
    return out


def _turns(task_id: str, messages: list[dict], submitted: bool) -> tuple[list, list, int]:
    """Steps, calls and the number of calls without a return code of one trajectory."""
    steps, calls, unknown = [], [], 0
    last = max((i for i, m in enumerate(messages) if m["role"] == "assistant"), default=-1)
    k = 0
    for i, m in enumerate(messages):
        if m["role"] != "assistant":
            continue
        k += 1
        text = m["content"]
        found = list(_BLOCK.finditer(text))
        blocks = [b.group(1) for b in found]
        reply = messages[i + 1]["content"] if i + 1 < len(messages) and \
            messages[i + 1]["role"] == "user" else ""
        response, usage = _usage(m)
        stamp = _iso(response.get("created"))
        meta = _usage_meta(usage)
        step = {"task_id": task_id, "step_id": k, "agent": "assistant",
                "thought": text[:found[0].start() if found else len(text)].strip(), "observation": reply,
                "timestamp": stamp, "tokens": usage.get("total_tokens"),
                "metadata_json": meta}
        if len(blocks) != 1:
            steps.append({**step, "action": "format_error", "success": False,
                          "action_input": blocks or None})
            continue
        submitting = submitted and i == last
        call = _reply(reply, blocks[0], submitting)
        unknown += call["success"] is None
        steps.append({**step, "action": "submit" if submitting else "bash", "tool": "bash",
                      "action_input": blocks[0], "success": call["success"]})
        calls.append({"task_id": task_id, "step_id": k, "call_id": str(k), "tool_name": "bash",
                      "timestamp": stamp, **call})
    return steps, calls, unknown


def _load(path: Path):
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise RunLoadError(f"{path}: not a readable trajectory file ({exc})", [Finding(
            "error", path.name, None, None, "unreadable", str(exc))]) from None


def _one(path: Path, found: list[Finding]) -> tuple[dict, list, list, str | None]:
    """One trajectory file: its task row, steps, calls and model name."""
    data = _load(path)
    if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
        raise RunLoadError(f"{path}: not a SWE-agent trajectory (an object with messages)",
                           [Finding("error", path.name, None, "messages", "unreadable",
                                    "no messages list")])
    info = data.get("info") if isinstance(data.get("info"), dict) else {}
    stats = info.get("model_stats") if isinstance(info.get("model_stats"), dict) else {}
    task_id = data.get("instance_id") or path.name.removesuffix(".json").removesuffix(".traj")
    messages = _valid(data["messages"], path.name, found)
    steps, calls, unknown = _turns(str(task_id), messages, info.get("exit_status") == "Submitted")
    if unknown:
        found.append(Finding("info", path.name, None, "success", "no_returncode",
                             f"{unknown} command(s) answered without a return code: success "
                             "not recorded"))
    tokens = [s["tokens"] for s in steps if isinstance(s["tokens"], (int, float))]
    model = ((info.get("config") or {}).get("model") or {}).get("model_name") \
        if isinstance(info.get("config"), dict) else None
    task = {"task_id": str(task_id), "cost": stats.get("instance_cost"),
            "llm_calls": stats.get("api_calls"), "total_tokens": sum(tokens) if tokens else None,
            "exit_status": info.get("exit_status"), "file": path.name}
    return task, steps, calls, model


def read_swe(path: str | Path) -> Record:
    """A folder of SWE-agent / mini-swe-agent trajectories (or one file) as a run.

    Parameters
    ----------
    path : path-like
        A folder holding ``*.traj.json`` / ``*.traj`` files (up to three levels down) and the run's resolved
        list (the module notes say which files are read), or one trajectory file.

    Returns
    -------
    Record
        Named after the folder (one file: after the file, without its suffix); tasks one per
        trajectory, in path order; steps one per assistant turn; calls one per command run.

    Raises
    ------
    RunLoadError
        No trajectory file in the folder; a file that is not JSON or has no messages list.

    Examples
    --------
    >>> rec = read_swe("tests/data/harness/mini-swe-agent")
    >>> rec.name, len(rec.tasks), rec.tasks[0]["final_score"], rec.calls[0]["tool_name"]
    ('mini-swe-agent', 5, 1.0, 'bash')
    """
    path = Path(path)
    files = trajectory_files(path) if path.is_dir() else [path]
    if not files:
        raise RunLoadError(f"{path}: no trajectory file (*.traj.json or *.traj)", [Finding(
            "error", path.name, None, None, "no_rows", "no trajectory file")])
    where = [path] if path.is_dir() else [path.parent, path.parent.parent,
                                          path.parent.parent.parent]
    resolved, list_name = resolved_list(where)
    found: list[Finding] = []
    tasks, steps, calls, models = [], [], [], set()
    for f in files:
        task, s, c, model = _one(f, found)
        outcome = None if resolved is None else resolved.get(task["task_id"])
        if outcome is None:
            found.append(Finding("error", f.name, len(tasks) + 1, "final_score",
                                 "missing_outcome", f"{task['task_id']} is not in the resolved "
                                 f"list ({list_name or 'none found'}): final_score missing"))
        tasks.append({**task, "final_score": None if outcome is None else float(outcome)})
        steps += s
        calls += c
        models.add(model)
    name = path.name if path.is_dir() else path.name.removesuffix(".json").removesuffix(".traj")
    return Record(name, tasks, steps or None, calls or None, findings=found,
                  meta={"model": ", ".join(sorted(m for m in models if m)) or None,
                        "resolved_list": list_name or None})
