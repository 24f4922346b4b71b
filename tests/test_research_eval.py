"""Tests of dabench_analysis.research_eval._load, .tables and
.research_eval.figures: the loader, the analyses and the notebook.

``tests/data/research_eval/tiny_session`` is a hand-written session (2 runs x 4 cases) whose
numbers are worked out below; ``data/research_eval`` is the generated sample. Reference values
for Wilson intervals and McNemar come from the shared refvectors (R 4.2.2).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dabench_analysis.research_eval import ResearchEval, load_research_eval
from dabench_analysis.research_eval import figures as plots
from dabench_analysis.research_eval import tables as rev

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "tests" / "data" / "research_eval" / "tiny_session"
SAMPLE = ROOT / "data" / "research_eval"
SHARED = ROOT.parent / "shared" / "refvectors" / "vectors.json"
VENDORED = ROOT / "tests" / "data" / "refvectors" / "vectors.json"
VECTORS = {v["id"]: v for v in json.loads((SHARED if SHARED.exists() else VENDORED).read_text())}


@pytest.fixture(scope="module")
def tiny() -> ResearchEval:
    return load_research_eval(TINY)


def status_cases(table: list[list[int]]) -> pd.DataFrame:
    """Cases of profiles a and b from a 2x2 table [[both pass, a only], [b only, both fail]]."""
    pairs = [("PASS", "PASS")] * table[0][0] + [("PASS", "FAIL")] * table[0][1] + \
        [("FAIL", "PASS")] * table[1][0] + [("FAIL", "FAIL")] * table[1][1]
    ids = [f"c{i}" for i in range(len(pairs))]
    return pd.DataFrame({"run_id": ["a"] * len(ids) + ["b"] * len(ids), "case_id": ids * 2,
                         "status": [p[0] for p in pairs] + [p[1] for p in pairs]})


# ---------------------------------------------------------------- loader


def test_loader_reads_tiny_session(tiny):
    c = tiny.cases
    assert c.shape[0] == 8 and c["run_id"].unique().tolist() == ["alpha", "beta"]
    assert isinstance(c["status"].dtype, pd.CategoricalDtype) and c["status"].cat.ordered
    assert list(c["status"].cat.categories) == ["PASS", "FAIL", "ERROR", "HALTED"]
    assert c["passed"].dtype == "boolean" and c["main_total_tokens"].dtype == "Int64"
    for col in ("main_input_tokens", "summarizer_output_tokens", "audit_planner_total_tokens",
                "run_turn_ms", "llm_total_ms", "case_total_ms", "n_tool_calls",
                "calls_web_search", "calls_get_relevant_content", "source"):
        assert col in c.columns
    a = c[c["run_id"] == "alpha"].set_index("case_id")
    assert a["calls_web_search"].tolist() == [2, 1, 0, 0]
    assert a["n_tool_calls"].tolist() == [2, 2, 0, 1]
    assert a.loc["c1", "total_tokens"] == 1100  # main 1000 + 100, others 0
    assert a.loc["c3", "error"].startswith("TimeoutError")
    assert a.loc["c2", "source"] == "alpha/artifacts/results.jsonl:2"
    assert tiny.runs["run_id"].tolist() == ["alpha", "beta"]
    assert tiny.runs.set_index("run_id").loc["beta", "disabled_tools"] == "web_search"
    assert tiny.tool_calls.shape[0] == 5 + 5
    assert tiny.session["session_id"] == "tiny"


def test_loader_never_writes_into_the_session(tmp_path):
    def snapshot(root: Path) -> dict:
        return {str(p.relative_to(root)): (p.is_file() and hashlib.sha256(
            p.read_bytes()).hexdigest(), p.stat().st_mtime_ns) for p in sorted(root.rglob("*"))}

    before = snapshot(SAMPLE)
    ev = load_research_eval(SAMPLE)
    assert ev.cases.shape[0] == 72
    assert snapshot(SAMPLE) == before


def copy_tiny(tmp_path: Path) -> Path:
    dest = tmp_path / "session"
    shutil.copytree(TINY, dest)
    return dest


@pytest.mark.parametrize("line, message", [
    ("{not json\n", r"alpha/artifacts/results.jsonl:3: malformed JSON"),
    ('{"case_id": "c9"}\n', r"results.jsonl:3: missing field 'status'"),
    ('{"case_id": "c9", "status": "SKIPPED"}\n', r"results.jsonl:3: status 'SKIPPED'"),
    ('{"case_id": "c1", "status": "PASS"}\n', r"results.jsonl:3: field 'case_id': duplicate "
                                              r"case 'c1' \(first at line 1\)"),
    ('[1, 2]\n', r"results.jsonl:3: expected a JSON object"),
])
@pytest.mark.filterwarnings("ignore:.*summary.json:UserWarning")  # counts change with the line
def test_loader_bad_lines_name_file_and_line(tmp_path, line, message):
    root = copy_tiny(tmp_path)
    file = root / "alpha" / "artifacts" / "results.jsonl"
    lines = file.read_text().splitlines(keepends=True)
    lines[2] = line
    file.write_text("".join(lines))
    with pytest.raises(ValueError, match=message):
        load_research_eval(root)


def test_loader_missing_files(tmp_path):
    with pytest.raises(ValueError, match="not found"):
        load_research_eval(tmp_path / "nope")
    root = copy_tiny(tmp_path)
    (root / "beta" / "artifacts" / "results.jsonl").unlink()
    with pytest.raises(ValueError, match=r"beta/artifacts/results.jsonl: file not found"):
        load_research_eval(root)
    root = copy_tiny(tmp_path / "b")
    (root / "alpha" / "artifacts" / "summary.json").unlink()
    with pytest.raises(ValueError, match=r"alpha/artifacts/summary.json: file not found"):
        load_research_eval(root)
    root = copy_tiny(tmp_path / "c")
    (root / "summary.json").write_text('{"runs": [{"run_id": "alpha"}, {"run_id": "gamma"}]}')
    with pytest.raises(ValueError, match="gamma"):
        load_research_eval(root)
    (root / "summary.json").write_text('{"runs": [')
    with pytest.raises(ValueError, match=r"summary.json:1: malformed JSON"):
        load_research_eval(root)


def test_loader_warns_when_summary_counts_disagree(tmp_path):
    root = copy_tiny(tmp_path)
    file = root / "beta" / "artifacts" / "summary.json"
    summary = json.loads(file.read_text()) | {"passed_cases": 4}
    file.write_text(json.dumps(summary))
    with pytest.warns(UserWarning, match="passed_cases=4 but results.jsonl has 3 PASS"):
        load_research_eval(root)


# ---------------------------------------------------------------- analyses


def test_pass_rate_tiny(tiny):
    out = rev.pass_rate(tiny.cases).set_index("run_id")
    assert out[["n", "n_pass", "n_fail", "n_error", "n_halted"]].values.tolist() == [
        [4, 2, 1, 1, 0], [4, 3, 0, 0, 1]]
    # R: prop.test(2, 4, correct = FALSE)$conf.int -> 0.1500 0.8500
    assert out.loc["alpha", ["ci_low", "ci_high"]].tolist() == pytest.approx([0.15, 0.85],
                                                                            abs=5e-5)
    answered = rev.pass_rate(tiny.cases, exclude=("ERROR",)).set_index("run_id")
    assert answered.loc["alpha", "n"] == 3 and answered.loc["alpha", "pass_rate"] == 2 / 3
    with pytest.raises(ValueError, match="not statuses"):
        rev.pass_rate(tiny.cases, exclude=("error",))


@pytest.mark.parametrize("vid", ["proportion_ci_5_of_25", "proportion_ci_20_of_20",
                                 "proportion_ci_1_of_29", "proportion_ci_15_of_148"])
def test_pass_rate_wilson_refvectors(vid):
    v = VECTORS[vid]
    k, n = v["inputs"]["k"], v["inputs"]["n"]
    cases = pd.DataFrame({"run_id": "r", "status": ["PASS"] * k + ["FAIL"] * (n - k)})
    out = rev.pass_rate(cases, ci=v["inputs"]["confidence"]).iloc[0]
    assert [out["ci_low"], out["ci_high"]] == pytest.approx(v["expected"]["wilson"],
                                                            abs=v["expected"]["tol"])


def test_mcnemar_tiny_by_hand(tiny):
    # alpha vs beta: c1 both pass, c2 and c3 only beta, c4 only alpha -> b = 1, c = 2;
    # exact p = min(1, 2 * P(X <= 1 | n = 3, 1/2)) = 1
    out = rev.mcnemar_profiles(tiny.cases, "alpha", "beta").iloc[0]
    assert [out["both_pass"], out["a_only"], out["b_only"], out["both_fail"]] == [1, 1, 2, 0]
    assert out["p_value"] == 1.0 and out["statistic"] == 1.0
    assert out["diff"] == pytest.approx(0.25)


def test_mcnemar_refvector_r_example():
    v = VECTORS["mcnemar_R_example_no_correction_and_exact"]
    cases = status_cases(v["inputs"]["table"])
    e = v["expected"]
    exact = rev.mcnemar_profiles(cases, "a", "b").iloc[0]
    assert exact["p_value"] == pytest.approx(e["pvalue_exact_binomial"], abs=e["tol"])
    assert exact["statistic"] == 86  # statsmodels: min(b, c)
    chi = rev.mcnemar_profiles(cases, "a", "b", exact=False, correction=False).iloc[0]
    assert chi["statistic"] == pytest.approx(e["chi2_no_cc"], abs=e["tol"])
    assert chi["p_value"] == pytest.approx(e["pvalue_no_cc"], abs=e["tol"])


def test_mcnemar_equal_discordant_counts_follows_r():
    v = VECTORS["mcnemar_equal_discordant_counts"]
    cases = status_cases(v["inputs"]["table"])
    chi = rev.mcnemar_profiles(cases, "a", "b", exact=False).iloc[0]
    assert (chi["statistic"], chi["p_value"]) == (v["expected"]["statistic_R"],
                                                  v["expected"]["pvalue_R"])
    assert rev.mcnemar_profiles(cases, "a", "b").iloc[0]["p_value"] == v["expected"]["pvalue_exact"]


def test_mcnemar_no_discordant_pairs_and_errors():
    cases = status_cases([[3, 0], [0, 2]])
    out = rev.mcnemar_profiles(cases, "a", "b").iloc[0]
    assert (out["statistic"], out["p_value"]) == (0.0, 1.0)
    with pytest.raises(ValueError, match="profile 'z'"):
        rev.mcnemar_profiles(cases, "a", "z")


def test_describe_profiles_tiny(tiny):
    out = rev.describe_profiles(tiny.cases).set_index(["run_id", "metric"])
    row = out.loc[("alpha", "elapsed_s")]  # times in seconds (issue 25): elapsed_ms / 1000
    # by hand: 1, 2, 3, 4 s -> mean 2.5, median 2.5, sd 1.29099
    assert [row["n"], row["mean"], row["median"], row["min"], row["max"]] == [4, 2.5, 2.5,
                                                                            1.0, 4.0]
    assert row["std"] == pytest.approx(np.std([1.0, 2.0, 3.0, 4.0], ddof=1))
    assert out.loc[("beta", "total_tokens"), "mean"] == 1100 + 220


def test_tool_mix_and_test(tiny):
    mix = rev.tool_mix(tiny.cases).set_index(["run_id", "tool"])
    # alpha: web_search 3, get_url_content 2 -> shares 0.6, 0.4; beta: 4 + 1 save_finding
    assert mix.loc[("alpha", "web_search"), ["n_calls", "share"]].tolist() == [3, 0.6]
    assert mix.loc[("beta", "web_search"), "n_calls"] == 0
    assert mix.loc[("beta", "get_relevant_content"), "calls_per_case"] == 1.0
    assert mix.groupby(level="run_id")["share"].sum().tolist() == pytest.approx([1.0, 1.0])
    out = rev.tool_mix_test(tiny.cases).iloc[0]
    # table [[0, 2, 0, 3], [4, 0, 1, 0]] (get_relevant, get_url, save, web_search):
    # R: chisq.test(matrix(c(0, 4, 2, 0, 0, 1, 3, 0), 2), correct = FALSE) -> X-squared = 10,
    #    df = 3, p = 0.018566135463; Cramér's V = sqrt(10 / (10 * 1)) = 1
    assert out["statistic"] == pytest.approx(10.0, abs=1e-12)
    assert out["p_value"] == pytest.approx(0.018566135463, abs=1e-11)
    assert out["effect_size"] == pytest.approx(1.0)  # perfectly separated tool use
    # expected counts: row totals 5, 5, column totals 4, 2, 1, 3 of 10 -> 2, 1, 0.5, 1.5 in
    # both rows: all 8 below 5, a share of 8 / 8 (printed by the number rule)
    assert out["note"] == "a share of 1.000 of the expected counts below 5: p approximate"


def test_tool_mix_test_untestable():
    cases = pd.DataFrame({"run_id": ["a", "b"], "calls_x": [3, 4]})
    out = rev.tool_mix_test(cases).iloc[0]
    assert out["p_value"] == 1.0 and out["note"].startswith("not testable")


def test_failures_listing(tiny):
    out = rev.failures(tiny.cases, "alpha")
    assert out["case_id"].tolist() == ["c2", "c3"]  # FAIL before ERROR
    assert list(out.columns[:7]) == ["profile", "case_id", "status", "query", "expected_type",
                                     "expected", "answer"]
    assert (out["profile"] == "alpha").all()
    assert out.loc[0, "expected"] == "answer c2" and out.loc[0, "answer"] == "wrong"
    with pytest.raises(ValueError, match="'gamma' not in cases"):
        rev.failures(tiny.cases, "gamma")


def _wilson(k: int, n: int, ci: float) -> list[float]:
    """Wilson (1927), closed form: (p + z²/2n ± z·sqrt(p(1 − p)/n + z²/4n²)) / (1 + z²/n)."""
    from scipy.stats import norm

    z, p = norm.ppf((1 + ci) / 2), k / n
    centre, half = p + z**2 / (2 * n), z * np.sqrt(p * (1 - p) / n + z**2 / (4 * n**2))
    return [(centre - half) / (1 + z**2 / n), (centre + half) / (1 + z**2 / n)]


@pytest.mark.parametrize("ci, label", [(0.95, "Wilson 95% CI"), (0.9, "Wilson 90% CI")])
def test_plot_pass_rate_bars_and_wilson_ends_by_hand(ci, label):
    from matplotlib.container import BarContainer

    cases = pd.DataFrame({"run_id": ["a"] * 4 + ["b"] * 4 + ["c"] * 2,
                          "status": ["PASS", "FAIL", "ERROR", "PASS", "PASS", "PASS", "PASS",
                                     "HALTED", "PASS", "PASS"]})
    ax = plots.plot_pass_rate(rev.pass_rate(cases, ci=ci), ci=ci)
    # a 2 of 4, b 3 of 4 (ERROR and HALTED are not passes), c 2 of 2; first profile on top
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a", "b", "c"] and ax.yaxis_inverted()
    (bars,) = [c for c in ax.containers if isinstance(c, BarContainer)]
    assert [p.get_y() + p.get_height() / 2 for p in bars] == pytest.approx([0, 1, 2])
    assert [p.get_width() for p in bars] == pytest.approx([0.5, 0.75, 1.0], abs=1e-12)
    ends = [sorted(seg[:, 0]) for seg in bars.errorbar.lines[2][0].get_segments()]
    assert sum(ends, []) == pytest.approx(
        _wilson(2, 4, ci) + _wilson(3, 4, ci) + _wilson(2, 2, ci), abs=1e-9)
    assert ends[2][1] == 1.0 and ax.get_xlim() == (0.0, 1.0)  # 2/2: the upper end is exactly 1
    assert ax.get_xlabel() == f"Pass rate ({label})"


def test_plot_latency_one_point_per_case_and_boxes_at_hand_quartiles():
    cases = pd.DataFrame({"run_id": ["b", "a", "b", "b", "a", "a"],
                          "elapsed_ms": [1000.0, 2000.0, 500.0, None, 3000.0, 7000.0]})
    ax = plots.plot_latency(cases)
    # profiles in order of appearance, the first on top
    assert [t.get_text() for t in ax.get_yticklabels()] == ["b", "a"] and ax.yaxis_inverted()
    points = [line for line in ax.lines if line.get_marker() == "o"]
    # one point per case with a latency, in seconds, on its profile's row
    assert [np.asarray(p.get_xdata()).tolist() for p in points] == [[1.0, 0.5], [2.0, 3.0, 7.0]]
    assert [np.asarray(p.get_ydata()).tolist() for p in points] == [[1.0] * 2, [2.0] * 3]
    # boxes from Q1 to Q3 with the median inside (linear interpolation, R quantile type 7):
    # b (0.5, 1): 0.625, 0.75, 0.875; a (2, 3, 7): 2.5, 3, 5
    boxes = [line for line in ax.lines if len(line.get_xdata()) == 5]
    assert [(min(b.get_xdata()), max(b.get_xdata())) for b in boxes] == [(0.625, 0.875),
                                                                          (2.5, 5.0)]
    box_height = np.ptp(boxes[0].get_ydata())
    medians = [line.get_xdata()[0] for line in ax.lines if len(line.get_xdata()) == 2
               and np.ptp(line.get_xdata()) == 0
               and np.ptp(line.get_ydata()) == pytest.approx(box_height)]
    assert medians == [0.75, 3.0]
    lo, hi = ax.get_xlim()
    assert lo <= 0.5 and hi >= 7.0
    assert ax.get_xlabel() == "Time per case (s)"


# ---------------------------------------------------------------- notebook end to end


def test_research_eval_notebook_end_to_end(tmp_path):
    import papermill as pm

    out = tmp_path / "fig"
    pm.execute_notebook(str(ROOT / "notebooks" / "research_eval.ipynb"),
                        str(tmp_path / "executed.ipynb"), kernel_name="python3",
                        cwd=str(ROOT / "notebooks"), progress_bar=False,
                        parameters={"session_dir": str(SAMPLE), "output_dir": str(out)})
    summary = json.loads((out / "summary.json").read_text())
    # expected values counted straight from the results.jsonl files (not through the package)
    statuses = {d.name: [json.loads(line)["status"] for line in
                         (d / "artifacts" / "results.jsonl").read_text().splitlines() if line]
                for d in sorted(SAMPLE.iterdir()) if d.is_dir()}
    assert summary["n_runs"] == 3 and summary["n_cases"] == 24
    assert summary["pass_rate"] == pytest.approx(
        {run: st.count("PASS") / len(st) for run, st in statuses.items()}, abs=1e-12)
    assert summary["mcnemar"]["profile_a"] == "standard-gf-live"
    assert summary["n_failures"]["n"] == sum(
        s != "PASS" for s in statuses["standard-gf-live"])
    for name in ("pass_rate", "mcnemar", "distributions", "tool_mix", "tool_mix_test",
                 "failures"):
        assert (out / "tables" / f"{name}.csv").is_file()
        assert (out / "tables" / f"{name}.md").is_file()
    for fig in ("pass_rate", "latency"):
        assert (out / f"{fig}.png").is_file() and (out / f"{fig}.pdf").is_file()
