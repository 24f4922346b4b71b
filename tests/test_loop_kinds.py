"""Stuck repeats told apart from retries after change (issue 35 item 2) on the trimmed
mini-swe-agent SWE-bench trajectories, expected counts computed here from the raw JSON.

Rule, applied to each file's ``messages``: every assistant turn is a step (1, 2, ...); a turn
with exactly one ```` ```bash ```` block is an action, its command normalised (quotes dropped,
digit runs -> 0, whitespace runs -> one space, stripped); its observation is the next user
turn whole. A step is *stuck* when one of the 3 steps before it has the same normalised command
and the same observation; else a *retry* when one has the same command and another observation.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import dabench_analysis as da

SWE = Path(__file__).parent / "data" / "harness" / "mini-swe-agent"
BLOCK = re.compile(r"```bash\s*\n(.*?)\n```", re.DOTALL)


def _norm(cmd: str) -> str:
    cmd = re.sub(r"[\"'`]", "", cmd)
    return re.sub(r"\s+", " ", re.sub(r"\d+", "0", cmd)).strip()


def _kinds(messages: list[dict]) -> tuple[int, int]:
    steps = []
    for i, m in enumerate(messages):
        if m["role"] != "assistant":
            continue
        blocks = BLOCK.findall(m["content"])
        reply = (messages[i + 1]["content"] if i + 1 < len(messages)
                 and messages[i + 1]["role"] == "user" else "")
        steps.append((_norm(blocks[0]), reply) if len(blocks) == 1 else None)
    stuck = retry = 0
    for j, s in enumerate(steps):
        if s is None or not s[0]:
            continue
        before = [p for p in steps[max(0, j - 3):j] if p is not None and p[0] == s[0]]
        if any(p[1] == s[1] for p in before):
            stuck += 1
        elif before:
            retry += 1
    return stuck, retry


def test_stuck_and_retry_counts_swe():
    want = {}
    for f in sorted((SWE / "trajs").glob("*/*.traj.json")):
        want[f.parent.name] = _kinds(json.loads(f.read_text())["messages"])
    lt = da.trajectory.loop_tasks(da.load_run(SWE)).set_index("task_id")
    got = {t: (int(lt.loc[t, "n_stuck"]), int(lt.loc[t, "n_retry"])) for t in want}
    assert got == want
    assert sum(r for _, r in want.values()) > sum(s for s, _ in want.values())
    lp = da.trajectory.loops(da.load_run(SWE)).iloc[0]
    assert lp["n_stuck_steps"] == sum(s for s, _ in want.values())
    assert lp["n_retry_steps"] == sum(r for _, r in want.values())


def _program(cmd: str) -> str:
    """First word of the command after comment lines, VAR=value and a leading ``cd DIR &&``."""
    cmd = re.sub(r"(?m)^\s*#.*(\n|$)", "", cmd)
    m = re.match(r"^\s*(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*(?:cd\s+\S+\s*&&\s*)?([^\s;|&]+)", cmd)
    return m.group(1) if m else "bash"


def test_variants_by_program_with_cycles_swe():
    """by="program": consecutive equal programs one block; variants say "not tested" when every
    task has its own sequence; by="auto" without stages is the agent."""
    want = {}
    for f in sorted((SWE / "trajs").glob("*/*.traj.json")):
        progs = []
        for m in json.loads(f.read_text())["messages"]:
            blocks = BLOCK.findall(m["content"]) if m["role"] == "assistant" else []
            if len(blocks) == 1 and (not progs or progs[-1] != _program(blocks[0])):
                progs.append(_program(blocks[0]))
        want[f.parent.name] = "→".join(progs)
    run = da.load_run(SWE)
    tp = da.trajectory.task_patterns(run, by="program").set_index("task_id")
    assert tp["pattern"].to_dict() == want
    v = da.trajectory.variants(run, by="program", collapse_cycles=True)
    assert len(set(want.values())) == len(want)  # one sequence per task
    assert v["p_value"].isna().all() and "not tested" in v["method"].iloc[0]
    assert da.trajectory.transitions(run, by="auto")["method"].iloc[0].startswith(
        "by=action_class")


def test_normalise_inputs_every_python_whitespace():
    """The whitespace class handed to pyarrow's RE2 matches what Python's ``re`` ``\\s`` does:
    every character for which ``str.isspace()`` holds (the vertical tab, the file separators
    and the Unicode spaces included), others kept (zero-width space, Arabic-Indic digit)."""
    import pandas as pd

    from dabench_analysis.trajectory.step_events import normalise_inputs

    spaces = "".join(c for c in map(chr, range(0x110000)) if c.isspace())
    raw = [f"{spaces}ls{spaces}-la 'a.py'{spaces}", "x\u200by \u0663", "\x0bcat  12\x1cf\u3000", ""]
    want = [_norm(v) for v in raw]  # Python's re, the rule of the module docstring
    assert want[0] == "ls -la a.py" and want[2] == "cat 0 f"
    got = normalise_inputs(pd.Series(raw, dtype="string")).tolist()
    assert got == want


def test_normalise_inputs_rewrites_only_what_changes_and_equals_the_rule_on_every_input():
    """Inputs with nothing to change (single inner spaces, no quote, digit or other space) are
    passed over, the others rewritten: on 4,000 random inputs drawn from letters, quotes, ASCII
    and Arabic-Indic digits, spaces, tabs and Unicode spaces, each equals the module's rule in
    Python's ``re`` (``_norm``), None kept as missing."""
    import numpy as np
    import pandas as pd

    from dabench_analysis.trajectory.step_events import normalise_inputs

    rng = np.random.default_rng(0)
    alphabet = list("ab  ") + ["'", '"', "`", "1", "23", "\u0663", "\t", "\u3000", "\xa0", "\n"]
    raw = ["".join(rng.choice(alphabet, size=rng.integers(0, 9))) for _ in range(4000)]
    raw += ["plain words only", " lead", "trail ", None]
    got = normalise_inputs(pd.Series(raw, dtype="string"))
    assert got.iloc[-1] is pd.NA
    assert got.iloc[:-1].tolist() == [_norm(v) for v in raw[:-1]]
    assert sum(v == _norm(v) for v in raw[:-1]) > 100  # inputs left as they are, some


def test_loop_flags_find_the_ledgers_whatever_the_strings_storage():
    """Magentic-One's progress ledgers in a real Who&When file (Hand-Crafted/3.json): the
    steps whose ledger answers ``is_in_loop`` true, counted by parsing each message's JSON,
    equal what :func:`loop_flags` finds on the texts as Python objects, as Arrow strings in one
    chunk or in several, and on a slice; texts without any ledger give all False."""
    import numpy as np
    import pandas as pd
    import pyarrow as pa

    from dabench_analysis.trajectory._loop_flags import loop_flags

    path = Path(__file__).parent / "data" / "harness" / "whowhen" / "Hand-Crafted" / "3.json"
    texts = [m.get("content") for m in json.loads(path.read_text())["history"]]

    def flagged(text):  # "Updated Ledger:\n{...}": the JSON object after the first brace
        start = (text or "").find("{")
        try:
            ledger, _ = json.JSONDecoder().raw_decode(text[start:])
        except (TypeError, ValueError):
            return False
        return isinstance(ledger, dict) and ledger.get("is_in_loop", {}).get("answer") is True

    want = np.array([flagged(t) for t in texts])
    assert want.sum() == 12  # of the 24 ledgers in this file
    chunked = pd.Series(pd.arrays.ArrowStringArray(pa.chunked_array(
        [pa.array(texts[:40], pa.large_string()), pa.array(texts[40:], pa.large_string())])))
    for series in (pd.Series(texts, dtype=object), pd.Series(texts, dtype="string"), chunked):
        assert (loop_flags(series) == want).all()
        assert (loop_flags(series.iloc[50:]) == want[50:]).all()
    plain = pd.Series(["ls", None, '{"answer": true}'], dtype="string")
    assert not loop_flags(plain).any()
