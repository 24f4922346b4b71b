"""Attribution against human labels (issue 35 item 3) on the Who&When CaptainAgent runs, with
the expected numbers computed here from the raw JSON.

Rule for the first failing step, stated here and applied to the raw ``history``: the first
message whose content starts ``exitcode: N`` with N != 0 (a failed code execution); its step is
its 0-based position + 1. The labelled step is ``int(mistake_step) + 1`` (Who&When writes a
0-based index into ``history``). A task is failed when ``is_correct`` is false.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pandas as pd
import pytest

import dabench_analysis as da
from dabench_analysis.schema.needs import Skipped

HERE = Path(__file__).parent
TRIMMED = HERE / "data" / "harness" / "whowhen" / "Algorithm-Generated"
SHARED = Path("/work/shared/realdata/whowhen/Algorithm-Generated")
EXIT = re.compile(r"\s*exitcode:\s*(-?\d+)")


def _raw(folder: Path) -> list[tuple[int | None, int, str | None, str]]:
    """(first failing step, labelled step, agent labelled, agent of the failing message)."""
    out = []
    for f in sorted(folder.glob("*.json")):
        d = json.loads(f.read_text())
        if d.get("is_correct", d.get("is_corrected")):
            continue
        first = next((i + 1 for i, m in enumerate(d["history"])
                      if (x := EXIT.match(str(m.get("content", "")))) and int(x.group(1)) != 0),
                     None)
        speaker = (d["history"][first - 1].get("name") or d["history"][first - 1]["role"]
                   if first else None)
        out.append((first, int(d["mistake_step"]) + 1, d["mistake_agent"], speaker))
    return out


def _wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    p = k / n
    c = (p + z * z / (2 * n)) / (1 + z * z / n)
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return c - h, c + h


@pytest.mark.parametrize("folder", [TRIMMED, SHARED])
def test_mistake_agreement_who_when(folder):
    if not folder.exists():
        pytest.skip("shared Who&When runs absent")
    raw = _raw(folder)
    off = [None if f is None else f - m for f, m, _, _ in raw]
    n = len(raw)
    want = {"exact step": sum(o == 0 for o in off if o is not None),
            "within 1 step": sum(abs(o) <= 1 for o in off if o is not None),
            "within 3 steps": sum(abs(o) <= 3 for o in off if o is not None),
            "agent": sum(a == s for _, _, a, s in raw),
            "earlier": sum(o < 0 for o in off if o is not None),
            "later": sum(o > 0 for o in off if o is not None),
            "no failing step": sum(o is None for o in off)}
    got = da.trajectory.mistake_agreement(da.load_run(folder)).set_index("measure")
    assert got["k"].to_dict() == want
    assert (got["n"] == n).all()
    lo, hi = _wilson(want["within 3 steps"], n)
    assert got.loc["within 3 steps", "share_ci_low"] == pytest.approx(lo)
    assert got.loc["within 3 steps", "share_ci_high"] == pytest.approx(hi)
    mo = da.trajectory.mistake_offsets(da.load_run(folder))
    counts = pd.Series([o for o in off if o is not None]).value_counts()
    assert dict(zip(mo["offset"].dropna().astype(int), mo["n_tasks"][mo["offset"].notna()],
                    strict=True)) == counts.to_dict()
    assert mo["n_tasks"].sum() == n


def test_mistake_agreement_annotations_csv(tmp_path):
    """Labels from a per-task CSV (step_id numbering) added with with_labels replace the run's."""
    raw = _raw(TRIMMED)
    files = [f.stem for f in sorted(TRIMMED.glob("*.json"))
             if not json.loads(f.read_text()).get("is_correct")]
    firsts = [f for f, _, _, _ in raw]
    labels = pd.DataFrame({"task_id": files, "mistake_step": [f or 1 for f in firsts],
                           "mistake_agent": "Computer_terminal"})
    labels.to_csv(tmp_path / "labels.csv", index=False)
    tr = da.trajectory
    run = tr.with_labels(da.load_run(TRIMMED), tmp_path / "labels.csv")
    got = tr.mistake_agreement(run).set_index("measure")
    assert got.loc["exact step", "k"] == sum(f is not None for f in firsts)
    assert got.loc["agent", "k"] == sum(f is not None for f in firsts)  # the terminal's steps
    with pytest.raises(ValueError, match="mistake_step"):
        tr.with_labels(da.load_run(TRIMMED), labels[["task_id"]])
    with pytest.raises(ValueError, match="does not have"):
        tr.with_labels(da.load_run(TRIMMED), labels.head(1).assign(task_id="999"))


def test_mistake_agreement_without_labels_is_skipped():
    with pytest.raises(Skipped, match="mistake_step"):
        da.trajectory.mistake_agreement(da.load_run("data/sample_runs/baseline_react"))


def test_run_report_writes_the_attribution_sections(tmp_path):
    """The run report's code on the trimmed CaptainAgent runs (no stages): the new sections and
    the process-mining sections by agent are written (code cells in this process)."""
    import warnings

    from notebook_runs import figures_not_rendered, run_cells

    root = HERE.parent
    with figures_not_rendered(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run_cells(root / "notebooks" / "run_report.ipynb",
                  {"run_dir": str(TRIMMED), "output_dir": str(tmp_path)})
    tables = tmp_path / "tables"
    ma = pd.read_csv(tables / "mistake_agreement.csv").set_index("measure")
    raw = _raw(TRIMMED)
    assert ma.loc["within 3 steps", "k"] == sum(f is not None and abs(f - m) <= 3
                                                for f, m, _, _ in raw)
    assert (tables / "mistake_offsets.csv").is_file()
    aa = pd.read_csv(tables / "agent_attribution.csv").set_index("agent")
    assert aa.loc["Computer_terminal", "first_failures_acted"] == sum(
        f is not None for f, _, _, _ in raw)
    for stem in ("trajectory_variants", "trajectory_transitions"):  # by agent: no stages
        assert pd.read_csv(tables / f"{stem}.csv")["method"].iloc[0].startswith("by=agent")
    summary = json.loads((tmp_path / "summary.json").read_text())
    skipped = {s["section"] for s in summary["skipped"]}
    assert {"mistake_agreement", "agent_attribution", "trajectory_variants",
            "trajectory_transitions"}.isdisjoint(skipped)
    assert "trajectory_conformance" in skipped  # the stage model needs stages
