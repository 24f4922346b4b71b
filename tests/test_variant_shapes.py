"""Variants that group real traces (issue 35 item 2): the action class of a SWE-bench command
(localize, patch, validate, submit; after Liu et al. 2025, arXiv:2512.02393), the shapes of a
pattern (cycles of any length, first occurrences, a prefix; van der Aalst et al. 2010) and
``shape="auto"``. Expected patterns are computed here from the raw trajectory JSON and the
Who&When JSON with plain ``json`` and ``re``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import dabench_analysis as da
from dabench_analysis.trajectory._by import collapse_cycles, shape_of

DATA = Path(__file__).parent / "data" / "harness"
SWE = DATA / "mini-swe-agent"
BLOCK = re.compile(r"```bash\s*\n(.*?)\n```", re.DOTALL)
READ = {"cat", "sed", "grep", "nl", "ls", "find", "head", "tail", "git", "echo", "wc"}
RUN = {"python", "python3", "pytest", "make", "bash", "sh", "pip", "sphinx-build"}
EDIT = {"cp", "mv", "rm", "mkdir", "touch", "tee", "patch"}


def _class(cmd: str) -> str:
    """The test's own reading of the rule in ``action_classes``' docstring."""
    body = re.sub(r"(?m)^\s*#.*(\n|$)", "", cmd)
    m = re.match(r"^\s*(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*(?:cd\s+\S+\s*&&\s*)?([^\s;|&]+)", body)
    word = (m.group(1) if m else "bash").rsplit("/", 1)[-1].lower()
    if "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT" in cmd or word == "submit":
        return "submit"
    writes = (re.search(r"(^|[^0-9&>])>>?\s*(?!/dev/null|&)[^\s>&|;]", cmd)
              or re.search(r"\bsed\s+(-[A-Za-z]*\s+)*-[A-Za-z]*i", cmd)
              or re.search(r"\bgit\s+(apply|checkout|stash|am)\b", cmd))
    if word in EDIT or writes:
        return "patch"
    if word in RUN or "test" in word or word.startswith("python"):
        return "validate"
    return "localize" if word in READ else "other"


def _swe_blocks() -> dict[str, list[str]]:
    """Each task's action-class blocks (consecutive equal classes one block): every assistant
    turn with exactly one bash block is a step calling the shell."""
    out = {}
    for f in sorted((SWE / "trajs").glob("*/*.traj.json")):
        classes = []
        for m in json.loads(f.read_text())["messages"]:
            blocks = BLOCK.findall(m["content"]) if m["role"] == "assistant" else []
            if len(blocks) == 1 and (not classes or classes[-1] != _class(blocks[0])):
                classes.append(_class(blocks[0]))
        out[f.parent.name] = classes
    return out


def test_action_class_patterns_swe():
    want = _swe_blocks()
    run = da.load_run(SWE)
    tp = da.trajectory.task_patterns(run, by="action_class").set_index("task_id")
    assert tp["pattern"].to_dict() == {t: "→".join(b) for t, b in want.items()}
    first = da.trajectory.task_patterns(run, by="action_class", shape="first")
    assert first.set_index("task_id")["pattern"].to_dict() == {
        t: "→".join(dict.fromkeys(b)) for t, b in want.items()}
    two = da.trajectory.task_patterns(run, by="action_class", prefix=2)
    assert two.set_index("task_id")["pattern"].to_dict() == {
        t: "→".join(b[:2]) for t, b in want.items()}


def test_variants_group_swe_at_action_class_level():
    """Five tasks, five full sequences; every one reads localize→patch→validate→submit when
    each class is kept at its first occurrence (the raw files: counted here)."""
    want = _swe_blocks()
    shapes = {"→".join(dict.fromkeys(b)) for b in want.values()}
    assert len({"→".join(b) for b in want.values()}) == 5 and len(shapes) == 1
    run = da.load_run(SWE)
    v = da.trajectory.variants(run, by="auto", shape="auto")
    assert v["pattern"].tolist() == sorted(shapes)
    assert v["n_tasks"].tolist() == [5]
    assert v["method"].iloc[0].startswith("by=action_class; shape=first; Wilson")
    full = da.trajectory.variants(run, by="action_class")
    assert "nearly one variant per task: not tested" in full["method"].iloc[0]
    assert full["p_value"].isna().all()


def _speakers(path: Path) -> list[str]:
    """A Who&When file's speaker blocks (``name``, else ``role`` without its parenthesised
    remark: "Orchestrator (thought)" is Orchestrator; consecutive equal ones one block)."""
    out = []
    for m in json.loads(path.read_text())["history"]:
        who = (m.get("name") or m.get("role")).split(" (")[0]
        if not out or out[-1] != who:
            out.append(who)
    return out


def test_variant_shapes_groupchat():
    """Magentic-One (Hand-Crafted): cycles of any length written once with ×n."""
    folder = DATA / "whowhen" / "Hand-Crafted"
    want = {p.stem: _speakers(p) for p in sorted(folder.glob("*.json"))}
    tp = da.trajectory.task_patterns(da.load_run(folder), by="agent", shape="cycles")
    got = tp.set_index("task_id")["pattern"].to_dict()
    assert got == {
        t: collapse_cycles("→".join(b), counts=False) for t, b in want.items()}
    assert "×n" in got["3"] and len(got["3"]) < len("→".join(want["3"])) / 5


def test_collapse_cycles_any_length():
    # A cycle of five written out by hand; the same cycle next to a cycle of two.
    assert collapse_cycles("a→b→c→d→e→a→b→c→d→e→f") == "(a→b→c→d→e)×2→f"
    assert collapse_cycles("x→a→b→a→b→a→b→c→d→e→f→g→c→d→e→f→g") == \
        "x→(a→b)×3→(c→d→e→f→g)×2"
    assert collapse_cycles("a→b→c") == "a→b→c"
    assert shape_of(["a", "b", "a", "c", "b"], "first") == "a→b→c"
    assert shape_of([], "cycles") == ""


def test_shape_and_prefix_refused():
    run = da.load_run(SWE)
    with pytest.raises(ValueError, match="shape must be one of"):
        da.trajectory.variants(run, by="action_class", shape="coarse")
    with pytest.raises(ValueError, match="prefix must be"):
        da.trajectory.task_patterns(run, by="action_class", prefix=0)
