"""The explorer (issue 27, item 2): the task list and its filters against numbers counted from the
sample runs' CSV files with the csv module; the panel's selection and filters; two runs paired;
the static copy shown where no kernel runs (an HTML export, tested on the executed notebook)."""

from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path

import nbformat
import numpy as np
import pytest

from dabench_analysis import explore, load_run, report
from dabench_analysis.report._explorer import STATIC_NOTE
from dabench_analysis.tables.explore import filter_tasks, task_list

ROOT = Path(__file__).resolve().parents[1]
RUNS = ROOT / "data" / "sample_runs"
THRESHOLD = 0.8  # seed 000 §Breakdown by Difficulty


def _rows(run: str, file: str) -> list[dict]:
    with (RUNS / run / file).open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _expected(run: str) -> dict[str, dict]:
    """Per task, from the CSV files: outcome (correct at 0.8, else partial where outcome_status
    says so, else failed), steps (trajectory rows), first failing step (lowest step_id with
    success 0), score."""
    steps, failing = defaultdict(int), defaultdict(list)
    for r in _rows(run, "trajectory.csv"):
        steps[r["task_id"]] += 1
        if r["success"] == "0":
            failing[r["task_id"]].append(int(r["step_id"]))
    out = {}
    for r in _rows(run, "task_metrics.csv"):
        score = float(r["final_score"])
        outcome = ("correct" if score >= THRESHOLD else
                   "partial" if r["outcome_status"] == "partial" else "failed")
        out[r["task_id"]] = {"outcome": outcome, "steps": steps[r["task_id"]], "score": score,
                             "first": min(failing[r["task_id"]], default=None),
                             "difficulty": r["difficulty"], "root_cause": r["root_cause"]}
    return out


@pytest.fixture(scope="module")
def base():
    return load_run(RUNS / "baseline_react")


@pytest.fixture(scope="module")
def prop():
    return load_run(RUNS / "proposed_aat")


def test_task_list_counts_what_the_files_hold(base):
    want = _expected("baseline_react")
    listing = task_list(base)
    assert listing["task_id"].tolist() == list(want)
    assert listing["outcome"].astype(str).tolist() == [w["outcome"] for w in want.values()]
    assert listing["steps"].tolist() == [w["steps"] for w in want.values()]
    got_first = [None if v is None or v is np.nan or str(v) == "<NA>" else int(v)
                 for v in listing["first_failing_step"].astype(object)]
    assert got_first == [w["first"] for w in want.values()]
    assert listing["final_score"].tolist() == pytest.approx([w["score"] for w in want.values()])


def test_the_outcome_follows_the_threshold_given():
    run = load_run(RUNS / "baseline_react")
    scores = [float(r["final_score"]) for r in _rows("baseline_react", "task_metrics.csv")]
    correct = (task_list(run, threshold=0.5)["outcome"] == "correct").sum()
    assert correct == sum(s >= 0.5 for s in scores)


def test_filters_and_sort_match_the_files(base):
    want = _expected("baseline_react")
    listing = task_list(base)
    got = filter_tasks(listing, outcome=["failed", "partial"], difficulty="Hard",
                       sort_by="steps", descending=True)
    rows = [(t, w) for t, w in want.items() if w["outcome"] != "correct"
            and w["difficulty"] == "Hard"]
    order = [t for t, _ in sorted(rows, key=lambda tw: -tw[1]["steps"])]  # stable, like pandas
    assert got["task_id"].tolist() == order and len(order) > 3
    key_error = [t for t, w in want.items() if "keyerror" in w["root_cause"].lower()]
    assert filter_tasks(listing, text="  KeyError ")["task_id"].tolist() == key_error
    assert filter_tasks(listing, text="task_4")["task_id"].tolist() == \
        [t for t in want if "task_4" in t]
    with pytest.raises(ValueError, match="change"):
        filter_tasks(listing, change="improved")


def test_two_runs_paired_on_their_shared_tasks(base, prop):
    b = {r["task_id"]: float(r["final_score"]) for r in _rows("baseline_react",
                                                               "task_metrics.csv")}
    p = {r["task_id"]: float(r["final_score"]) for r in _rows("proposed_aat", "task_metrics.csv")}
    diff = np.array([p[t] - b[t] for t in b if t in p])
    listing = task_list(prop, baseline=base)
    assert len(listing) == len(diff)
    counts = listing["change"].value_counts()
    assert counts["improved"] == (diff > 0).sum() and counts["regressed"] == (diff < 0).sum()
    assert counts["unchanged"] == (diff == 0).sum()
    fixed = sum(b[t] < THRESHOLD <= p[t] for t in b)
    assert (listing["flip"] == "fixed").sum() == fixed


def test_the_panel_selects_filters_and_shows_a_task(base):
    want = _expected("baseline_react")
    ex = explore(base)
    first_not_correct = next(t for t, w in want.items() if w["outcome"] != "correct")
    assert ex.selected == first_not_correct
    shown = ex.filter(outcome="failed", sort_by="final score")
    failed = [t for t, w in want.items() if w["outcome"] == "failed"]
    assert sorted(shown["task_id"]) == sorted(failed)
    assert ex.selected in failed and f"{len(failed)} of {len(want)} tasks" in ex._count.value
    ex.select("task_3")  # correct: hidden by the filter, which is cleared
    assert ex.selected == "task_3" and len(ex.shown) == len(want)
    pane = ex._panes[0].value
    assert "Task task_3" in pane and pane.count('class="dabench-first-failure"') == 1
    with pytest.raises(ValueError, match="one of all, correct"):
        ex.filter(outcome="broken")
    with pytest.raises(KeyError, match="task_999"):
        ex.select("task_999")
    assert ex.filter(text="no task has this").empty and ex.selected is None
    assert "No task matches" in ex._panes[0].value


def test_explore_takes_runs_only(base):
    from dabench_analysis import load_runs

    with pytest.raises(TypeError, match=r"got Runs \(a Runs: pick one"):
        explore(load_runs(RUNS))
    with pytest.raises(TypeError, match="as proposed, got DataFrame"):
        explore(base, base.tasks)


def test_pair_panel_and_display_bundle(base, prop):
    ex = explore(base, prop, task_id="task_13")
    assert repr(ex) == "<Explorer of 'proposed_aat' against 'baseline_react': 80 tasks, " \
                       "selected task_13>"
    assert "Task task_13 · run baseline_react" in ex._panes[1].value
    assert "Task task_13 · run proposed_aat" in ex._panes[0].value
    bundle = ex._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    static = bundle["text/html"]
    assert STATIC_NOTE.split(":")[0] in static and static.count(">task_") >= 80


def _first_failure_rows(page: str) -> list[tuple[dict, str]]:
    """Each highlighted row of a page: its attributes and its first cell's text."""
    from html.parser import HTMLParser

    class Rows(HTMLParser):
        def __init__(self) -> None:
            super().__init__(convert_charrefs=True)
            self.rows: list[list] = []
            self._cell = False

        def handle_starttag(self, tag, attrs):
            attrs = dict(attrs)
            if tag == "tr" and "dabench-first-failure" in (attrs.get("class") or "").split():
                self.rows.append([attrs, None])
            self._cell = tag == "td" and bool(self.rows) and self.rows[-1][1] is None

        def handle_data(self, data):
            if self._cell:
                self.rows[-1][1] = data
                self._cell = False

    parser = Rows()
    parser.feed(page)
    return [tuple(row) for row in parser.rows]


def test_static_copy_in_the_html_export(tmp_path):
    """The executed notebook exported to HTML (the report page; and nbconvert's own page of a
    notebook saved without widget state, as JupyterLab saves it) shows the static copy: the
    note, the task list, the selected task with its first failing step highlighted."""
    from nbconvert import HTMLExporter

    out = report.run_notebook(ROOT / "notebooks" / "explore.ipynb", tmp_path,
                              {"run_dir": str(RUNS / "baseline_react"),
                               "compare_dir": str(RUNS / "proposed_aat"), "task_id": "task_47"})
    nb = nbformat.read(out, as_version=4)
    assert "widgets" in nb.metadata  # papermill saved the widgets' state
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    nb.metadata.pop("widgets")
    plain, _ = HTMLExporter().from_notebook_node(nb)
    first = _expected("baseline_react")["task_47"]["first"]
    for html in (page, plain):
        assert html.count("dabench-explorer-static") == 2 and "A static copy of the explorer" in html
        assert "Task task_47 · run baseline_react" in html
        assert ({"class": "dabench-first-failure", "style": "background:#f6c6c1",
                 "title": "the first failing step"}, str(first)) in _first_failure_rows(html)
    assert "application/vnd.jupyter.widget-view+json" not in page
