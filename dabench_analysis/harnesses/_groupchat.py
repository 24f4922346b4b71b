"""AutoGen / AG2 group chats as Who&When publishes them -> one run
(:class:`~dabench_analysis.load._harness.Record`).

A run is a folder of ``N.json`` files, one task each (Who&When, mingyin1/Agents_Failure_Attribution,
arXiv:2505.00212: ``Algorithm-Generated/`` are CaptainAgent runs on AG2, ``Hand-Crafted/``
Magentic-One runs). Each file: ``history`` (the chat: ``{role, name, content}``), the outcome
(``is_correct``; Magentic-One files: ``is_corrected``), ``question``, ``ground_truth``,
``question_ID``, ``level`` and the human labels ``mistake_agent``, ``mistake_step``,
``mistake_reason`` (some: ``mistake_type``).

Fields, and the judgement calls:

* task: ``task_id`` the file's name without ``.json`` (``"3"``: Who&When's own reference);
  ``final_score`` 1.0 / 0.0 from ``is_correct`` (else ``is_corrected``); a file with neither
  keeps it missing with a ``missing_outcome`` error (as for a SWE task without a resolved entry); ``question_ID`` -> ``question_id``,
  ``question``, ``ground_truth``, ``level`` kept. The labels are annotation columns of the
  catalogue: ``mistake_agent``, ``mistake_reason``, ``mistake_type`` -> ``mistake_category``,
  and ``mistake_step`` **converted to the step numbering**: Who&When writes a 0-based index
  into ``history`` as a string; a step's ``step_id`` is that index + 1, so ``mistake_step`` is
  ``int(index) + 1`` (a value that is not a whole number in range is left missing with a
  ``bad_label`` warning naming the file).
* step: **each message** of ``history`` (``step_id`` = position + 1). ``agent`` the speaker:
  ``name`` when given (AG2: ``Excel_Expert``, ``Computer_terminal``, ...), else ``role``
  (Magentic-One writes the speaker there). A Magentic-One role ``Orchestrator (thought)`` or
  ``Orchestrator (-> WebSurfer)`` is the agent ``Orchestrator`` (the name Who&When's
  ``mistake_agent`` uses) with ``action`` the part in brackets (``thought``,
  ``-> WebSurfer``, ``termination condition``); the message of the agent an instruction
  names, right after it, gets ``parent_step_id`` = the instruction's step (the delegation).
  Other messages: ``action`` ``message``. ``observation`` the content whole. No timestamps,
  tokens or stages (the files have none).
* tool call: a message whose content starts ``exitcode: N`` (AG2's ``Computer_terminal``
  answering the code of the message before) is a code execution: ``tool_name``
  ``code_execution``, ``call_id`` the step's id, ``success`` ``N == 0`` (``error_type``
  ``exitcode N``; 124 is the terminal's timeout), ``metadata_json`` the agent whose code ran
  (``code_of``, the previous message's speaker); its step's ``action`` is ``code_execution``
  and ``success`` the same flag. A terminal reply "There is no code from the last 1 message"
  ran nothing: a step (``action`` ``no_code``), no call. Magentic-One's web actions are
  messages of ``WebSurfer``, not tool calls (the file has no call or result structure). All
  calls are the agents' own (no ``actor`` column).
* a message that is not an object with text ``content`` is left out with a
  ``malformed_message`` warning naming the file and the 0-based position (the step ids of the
  others keep their positions).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from dabench_analysis.load._findings import Finding, RunLoadError
from dabench_analysis.load._harness import Record

_EXIT = re.compile(r"\s*exitcode:\s*(-?\d+)")
_ROLE = re.compile(r"^(.*?)\s*\((.*)\)\s*$")


def chat_files(folder: Path) -> list[Path]:
    """The ``*.json`` files of ``folder`` (not below), in numeric order of their names."""
    files = [p for p in folder.glob("*.json") if p.is_file()]
    return sorted(files, key=lambda p: (not p.stem.isdigit(), int(p.stem) if p.stem.isdigit()
                                        else 0, p.name))


def is_chat(path: Path) -> bool:
    """Whether a JSON file is an object holding a ``history`` key (read up to 4 MB)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(1 << 22)
    except OSError:
        return False
    return head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{") and b'"history"' in head


def _speaker(m: dict) -> tuple[str | None, str]:
    """The agent and the action of a message (see the module notes)."""
    if m.get("name"):
        return str(m["name"]), "message"
    role = m.get("role")
    if not isinstance(role, str):
        return None, "message"
    match = _ROLE.match(role)
    return (match.group(1), match.group(2)) if match else (role, "message")


def _label_step(raw, n: int, name: str, found: list[Finding]) -> int | None:
    try:
        index = int(str(raw).strip())
    except ValueError:
        index = -1
    if 0 <= index < n:
        return index + 1
    if raw is not None:
        found.append(Finding("warning", name, None, "mistake_step", "bad_label",
                             f"mistake_step {raw!r} is not a 0-based index into history "
                             f"({n} messages): left missing"))
    return None


def _history(task_id: str, history: list, name: str, found: list[Finding]) -> tuple[list, list]:
    steps, calls, previous, delegated = [], [], None, {}
    for i, m in enumerate(history):
        if not isinstance(m, dict) or not isinstance(m.get("content"), str):
            field = "message" if not isinstance(m, dict) else "content"
            found.append(Finding("warning", name, None, field, "malformed_message",
                                 f"history[{i}] has no text {field}; left out"))
            continue
        agent, action = _speaker(m)
        step = {"task_id": task_id, "step_id": i + 1, "agent": agent, "action": action,
                "observation": m["content"], "parent_step_id": delegated.pop(agent, None)}
        if action.startswith("->"):
            delegated[action[2:].strip()] = i + 1
        code = _EXIT.match(m["content"])
        if code:
            rc = int(code.group(1))
            step.update(action="code_execution", tool="code_execution", success=rc == 0)
            calls.append({"task_id": task_id, "step_id": i + 1, "call_id": str(i + 1),
                          "tool_name": "code_execution", "success": rc == 0,
                          "error_type": None if rc == 0 else f"exitcode {rc}",
                          "error_message": None if rc == 0 else m["content"][:500],
                          "metadata_json": {"exitcode": rc, "code_of": previous}})
        elif m["content"].startswith("There is no code from the last"):
            step["action"] = "no_code"
        steps.append(step)
        previous = agent
    return steps, calls


def _load(path: Path) -> dict:
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise RunLoadError(f"{path}: not a readable group-chat file ({exc})", [Finding(
            "error", path.name, None, None, "unreadable", str(exc))]) from None
    if not isinstance(data, dict) or not isinstance(data.get("history"), list):
        raise RunLoadError(f"{path}: not a group chat (an object with a history list)",
                           [Finding("error", path.name, None, "history", "unreadable",
                                    "no history list")])
    return data


def _task(path: Path, data: dict, row: int, found: list[Finding]) -> dict:
    outcome = next((data[k] for k in ("is_correct", "is_corrected") if k in data), None)
    if not isinstance(outcome, bool):
        found.append(Finding("error", path.name, row, "final_score", "missing_outcome",
                             f"no is_correct / is_corrected true or false ({outcome!r}): "
                             "final_score missing"))
        outcome = None
    return {"task_id": path.stem, "final_score": None if outcome is None else float(outcome),
            "question_id": data.get("question_ID"), "level": data.get("level"),
            "question": data.get("question"), "ground_truth": data.get("ground_truth"),
            "mistake_agent": data.get("mistake_agent"),
            "mistake_step": _label_step(data.get("mistake_step"), len(data["history"]),
                                        path.name, found),
            "mistake_reason": data.get("mistake_reason"),
            "mistake_category": data.get("mistake_type")}


def read_groupchat(path: str | Path) -> Record:
    """A folder of Who&When group-chat files (or one file) as a run.

    Parameters
    ----------
    path : path-like
        A folder of ``N.json`` files (one task each), or one such file.

    Returns
    -------
    Record
        Named after the folder (one file: after the file); tasks one per file in numeric order
        of the names, steps one per message, calls one per code execution.

    Raises
    ------
    RunLoadError
        No ``.json`` file; a file that is not JSON or has no ``history`` list.

    Examples
    --------
    >>> rec = read_groupchat("tests/data/harness/whowhen/Algorithm-Generated")
    >>> rec.name, [t["task_id"] for t in rec.tasks], rec.tasks[0]["mistake_step"]
    ('Algorithm-Generated', ['3', '4', '8', '10'], 5)
    """
    path = Path(path)
    files = chat_files(path) if path.is_dir() else [path]
    if not files:
        raise RunLoadError(f"{path}: no group-chat file (*.json)", [Finding(
            "error", path.name, None, None, "no_rows", "no .json file")])
    found: list[Finding] = []
    tasks, steps, calls = [], [], []
    for f in files:
        data = _load(f)
        tasks.append(_task(f, data, len(tasks) + 1, found))
        s, c = _history(f.stem, data["history"], f.name, found)
        steps += s
        calls += c
    return Record(path.name if path.is_dir() else path.stem, tasks, steps or None,
                  calls or None, findings=found)
