"""The reliability profile (issue 36 item 1): each metric checked against its formula computed
here with numpy/scipy/sklearn on small hand-built trials, the edge cases (all-success and
all-fail tasks, runs without trials, resources not recorded), and outcome consistency of the
shared tau-bench file from its raw JSON rewards.
"""

from __future__ import annotations

import csv
import itertools
import json
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure
from scipy.spatial.distance import jensenshannon
from sklearn.metrics import roc_auc_score

import dabench_analysis as da
from dabench_analysis.schema import Skipped
from dabench_analysis.stats import consistency as cs

ROOT = Path(__file__).resolve().parents[1]
TAU = ROOT / "tests" / "data" / "harness" / "tau-bench" / "gpt-4o-airline.json"


def _trials(successes: dict[str, list[int]], **cols) -> pd.DataFrame:
    """One row per task and trial; ``final_score`` 1.0 / 0.0 from the success lists."""
    rows = [{"task_id": t, "trial": k, "final_score": float(s)}
            for t, ss in successes.items() for k, s in enumerate(ss)]
    return pd.DataFrame(rows).assign(**cols)


def _profile(frame, **kw) -> pd.DataFrame:
    return da.tables.reliability(frame, n_boot=300, **kw).set_index("metric")


def _lev(s, t) -> int:
    """Wagner–Fischer edit distance, the textbook double loop."""
    d = [[i + j if i * j == 0 else 0 for j in range(len(t) + 1)] for i in range(len(s) + 1)]
    for i, j in itertools.product(range(1, len(s) + 1), range(1, len(t) + 1)):
        d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (s[i - 1] != t[j - 1]))
    return d[-1][-1]


def test_outcome_consistency_formula_and_edge_cases():
    succ = {"a": [1, 1, 1, 1], "b": [0, 0, 0, 0], "c": [1, 0, 1, 0], "d": [1, 0, 0, 0],
            "e": [1, 1, 1, 0], "f": [1]}
    r = _profile(_trials(succ)).loc["outcome_consistency"]
    p = np.array([np.mean(v) for k, v in succ.items() if len(v) >= 2])
    # HAL's code: 1 - p(1-p)/0.25; all-success and all-fail tasks (p(1-p) = 0) count as 1
    expected = np.mean(1 - p * (1 - p) / 0.25)
    assert r["value"] == pytest.approx(expected, abs=1e-12)  # (1 + 1 + 0 + .25 + .25) / 5
    assert r["value"] == pytest.approx(0.5)
    assert (r["n_tasks"], r["n_trials"]) == (5, 20)  # task f (one trial) left out
    assert r["ci_low"] < r["value"] < r["ci_high"]
    all_agree = _profile(_trials({"a": [1, 1], "b": [0, 0], "c": [1, 1]}))
    row = all_agree.loc["outcome_consistency"]
    assert row["value"] == 1.0 and np.isnan(row["ci_low"]) and "same value" in row["note"]


def test_bootstrap_resamples_tasks_with_their_trials_and_is_seeded():
    succ = {t: list(np.random.default_rng(i).integers(0, 2, 3)) for i, t in enumerate("abcdefgh")}
    frame = _trials(succ)
    a = da.tables.reliability(frame, n_boot=400, seed=7)
    assert a.equals(da.tables.reliability(frame, n_boot=400, seed=7))
    # the same percentile bootstrap written out: resample the 8 tasks' values, 400 times
    per_task = np.array([(2 * np.mean(v) - 1) ** 2 for v in succ.values()])
    rng = np.random.default_rng(7)
    reps = [per_task[rng.integers(0, 8, 8)].mean() for _ in range(400)]
    row = a.set_index("metric").loc["outcome_consistency"]
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(tuple(np.quantile(reps, [.025, .975])))


def test_tau_bench_outcome_consistency_from_the_raw_rewards():
    records = json.loads(TAU.read_text())
    by_task: dict = {}
    for rec in records:  # success: reward >= 0.8, the package's threshold (rewards are 0/1)
        by_task.setdefault(rec["task_id"], []).append(rec["reward"] >= 0.8)
    p = np.array([np.mean(v) for v in by_task.values()])
    expected = np.mean((2 * p - 1) ** 2)
    r = _profile(da.load_run(TAU)).loc["outcome_consistency"]
    assert r["value"] == pytest.approx(expected, abs=1e-12)
    assert r["value"] == pytest.approx(0.56)  # the docs' worked example
    assert (r["n_tasks"], r["n_trials"]) == (50, 200)
    assert r["ci_low"] < 0.56 < r["ci_high"]


def test_trajectory_consistency_against_scipy_and_a_plain_edit_distance():
    calls = pd.DataFrame(
        [("a", 0, s, n) for s, n in enumerate(["x", "y", "x"])]
        + [("a", 1, s, n) for s, n in enumerate(["x", "x", "y", "z"])]
        + [("a", 2, s, n) for s, n in enumerate(["q"])]  # trial 2 failed: left out
        + [("b", 0, s, n) for s, n in enumerate(["y", "x"])]
        + [("b", 1, s, n) for s, n in enumerate(["x", "y"])],
        columns=["task_id", "trial", "step_id", "tool_name"])
    frame = _trials({"a": [1, 1, 0], "b": [1, 1]})
    r = _profile(frame, tool_calls=calls)
    cats = ["x", "y", "z"]

    def dist(seq):
        return [seq.count(c) for c in cats]

    a0, a1, b0, b1 = ["x", "y", "x"], ["x", "x", "y", "z"], ["y", "x"], ["x", "y"]
    jsd_a = jensenshannon(dist(a0), dist(a1), base=2) ** 2
    assert r.loc["trajectory_action_consistency", "value"] == pytest.approx(
        np.mean([1 - jsd_a, 1.0]), abs=1e-12)  # task b: same distribution
    order = np.mean([1 - _lev(a0, a1) / 4, 1 - _lev(b0, b1) / 2])
    assert r.loc["trajectory_order_consistency", "value"] == pytest.approx(order, abs=1e-12)
    assert r.loc["trajectory_order_consistency", "n_trials"] == 4
    arrow = _profile(frame, tool_calls=calls.astype({"tool_name": "string[pyarrow]"}))
    assert arrow["value"].equals(r["value"])  # the loaders' Arrow text reads the same
    assert cs.order_consistency([list("kitten"), list("sitting")]) == pytest.approx(1 - 3 / 7)


def test_resource_cv_among_successes_and_absent_is_not_zero():
    frame = _trials({"a": [1, 1, 1, 0], "b": [1, 1, 0, 0]},
                    cost=[0.1, 0.2, 0.3, 9.0, 1.0, 3.0, 5.0, 5.0],
                    execution_time=0.0, total_tokens=np.nan)
    r = _profile(frame)
    cv_a = np.std([0.1, 0.2, 0.3], ddof=1) / np.mean([0.1, 0.2, 0.3])
    cv_b = np.std([1.0, 3.0], ddof=1) / 2.0
    assert r.loc["resource_cv_cost", "value"] == pytest.approx((cv_a + cv_b) / 2, abs=1e-12)
    assert r.loc["resource_cv_cost", "n_trials"] == 5
    for m, col in (("resource_cv_time", "execution_time"), ("resource_cv_tokens", "total_tokens")):
        assert np.isnan(r.loc[m, "value"]) and r.loc[m, "note"] == (
            f"{col} not recorded (absent, all missing or all 0)")


def test_confidence_auroc_and_aurc_against_sklearn_and_the_definition():
    conf = [0.9, 0.8, 0.8, 0.3, 0.6, 0.95, 0.2, 0.5]
    ok = [1, 1, 0, 0, 1, 1, 0, 1]
    frame = _trials({"a": ok[:2], "b": ok[2:4], "c": ok[4:6], "d": ok[6:]}, confidence_score=conf)
    r = _profile(frame)
    assert r.loc["confidence_auroc", "value"] == pytest.approx(roc_auc_score(ok, conf))
    # AuRC by its definition, averaging the one tied block (0.8: one right, one wrong) over
    # both orders; the optimum puts the 5 correct trials first.
    err = 1 - np.array(ok)
    curves = []
    for perm in itertools.permutations(range(len(conf))):
        c = np.array(conf)[list(perm)]
        if all(c[i] >= c[i + 1] for i in range(len(c) - 1)):
            curves.append(np.cumsum(err[list(perm)]) / np.arange(1, 9))
    aurc = np.mean([c.mean() for c in curves])
    best = (np.cumsum(np.sort(err)) / np.arange(1, 9)).mean()
    assert len(curves) == 2
    assert r.loc["aurc", "value"] == pytest.approx(aurc, abs=1e-12)
    assert r.loc["excess_aurc", "value"] == pytest.approx(aurc - best, abs=1e-12)
    assert r.loc["confidence_auroc", "n_trials"] == 8
    # one class only: AUROC undefined, said so
    one = _profile(_trials({"a": [1, 1], "b": [1, 1]}, confidence_score=[0.1, 0.2, 0.3, 0.4]))
    assert np.isnan(one.loc["confidence_auroc", "value"]) and "every trial" in one.loc[
        "confidence_auroc", "note"]


def test_pooled_bootstrap_is_that_of_the_drawn_trials_to_the_last_bit():
    """The AUROC and AuRC intervals resample tasks with their trials: the same percentile
    bootstrap written out (one ``rng.integers(0, n, n)`` per resample, the drawn tasks' trials
    concatenated, AUROC by sklearn, AuRC by its definition with ties spread evenly) gives the
    same bounds exactly, ties and unequal numbers of trials included."""
    rng = np.random.default_rng(3)
    k = rng.integers(1, 4, 25)
    conf = [np.round(rng.random(j), 1) for j in k]
    ok = [rng.integers(0, 2, j) for j in k]
    frame = pd.DataFrame({"task_id": np.repeat([f"t{i}" for i in range(25)], k),
                          "trial": np.concatenate([np.arange(j) for j in k]),
                          "final_score": np.concatenate(ok).astype(float),
                          "confidence_score": np.concatenate(conf)})
    r = da.tables.reliability(frame, n_boot=300, seed=5).set_index("metric")

    def aurc(c, y):  # risk at i/n, a tied block's errors spread evenly over its positions
        order = np.argsort(-c, kind="stable")
        c, e = c[order], 1.0 - y[order]
        risk = [sum(e[c > c[i]]) + (i + 1 - sum(c > c[i])) * e[c == c[i]].mean()
                for i in range(len(c))]
        return np.mean(np.array(risk) / np.arange(1, len(c) + 1))

    draws = np.random.default_rng(5)
    reps = {"confidence_auroc": [], "aurc": []}
    for _ in range(300):
        idx = draws.integers(0, 25, 25)
        c, y = np.concatenate([conf[i] for i in idx]), np.concatenate([ok[i] for i in idx])
        reps["confidence_auroc"].append(roc_auc_score(y, c) if 0 < y.sum() < len(y) else np.nan)
        reps["aurc"].append(aurc(c, y.astype(float)))
    for m, v in reps.items():
        v = np.array(v)
        lo, hi = np.quantile(v[np.isfinite(v)], [0.025, 0.975])
        assert (r.loc[m, "ci_low"], r.loc[m, "ci_high"]) == pytest.approx((lo, hi), abs=1e-12)


def _aurc_by_definition(c, y) -> tuple[float, float]:
    """AuRC and optimal AuRC by Geifman et al. (2019), §3: the mean over i = 1..n of the share
    wrong among the i most confident, a tied block taken in every order (its expected share:
    the errors above it plus the block's error rate per position), the optimum with every
    correct trial first."""
    e = 1.0 - y
    risk = [(e[c > t].sum() + (i - (c > t).sum()) * e[c == t].mean()) / i
            for i, t in enumerate(np.sort(c)[::-1], start=1)]
    i = np.arange(1, len(c) + 1)
    return float(np.mean(risk)), float(np.mean(np.cumsum(np.sort(e)) / i))


def test_level_counts_path_one_sample_and_many_rows_against_sklearn_and_the_definition():
    """The one home of AUROC and AuRC (``consistency._by_level``, from counts of correct and
    wrong trials by confidence level): its single-sample callers (``auroc``, ``aurc``,
    ``risk_coverage``) and the many-row path the table's bootstrap takes agree with sklearn's
    ``roc_auc_score`` and the AuRC written out from its definition, on random trials with
    many ties (confidence rounded to one decimal), one-class samples included."""
    rng = np.random.default_rng(11)
    samples = []
    for k in [2, 3, 5, 8, 13, 40, 40, 40, 97] + [int(x) for x in rng.integers(1, 60, 20)]:
        c = np.round(rng.random(k), 1)
        y = (rng.random(k) < rng.choice([0.0, 0.3, 0.7, 1.0], p=[0.1, 0.4, 0.4, 0.1])) * 1.0
        samples.append((c, y))
    levels = np.unique(np.concatenate([c for c, _ in samples]))[::-1]  # most confident first
    won = np.array([[((c == v) & (y == 1)).sum() for v in levels] for c, y in samples])
    lost = np.array([[((c == v) & (y == 0)).sum() for v in levels] for c, y in samples])
    rows = cs._by_level(won, lost)
    for j, (c, y) in enumerate(samples):
        auc = roc_auc_score(y, c) if 0 < y.sum() < len(y) else np.nan
        a, best = _aurc_by_definition(c, y)
        one = cs._by_level(won[j], lost[j])
        curve = cs.aurc(c, y)
        for got in (one["auroc"], rows["auroc"][j], cs.auroc(c, y)):
            assert got == pytest.approx(auc, abs=1e-12, nan_ok=True)
        for got in (one, {k: v[j] for k, v in rows.items()}, curve):
            assert got["aurc"] == pytest.approx(a, abs=1e-12)
            assert got["aurc_optimal"] == pytest.approx(best, abs=1e-12)
            assert got["excess_aurc"] == pytest.approx(a - best, abs=1e-12)
            assert got["n"] == len(c)
        rc = cs.risk_coverage(c, y)
        assert rc["risk"].mean() == pytest.approx(a, abs=1e-12)
        assert rc["optimal_risk"].mean() == pytest.approx(best, abs=1e-12)
    assert np.isnan(rows["auroc"]).any() and np.isfinite(rows["auroc"]).any()
    # no trial: every value undefined (n = 0)
    empty = cs._by_level(np.zeros(3), np.zeros(3))
    assert np.isnan([empty[k] for k in ("auroc", "aurc", "excess_aurc")]).all()
    assert empty["n"] == 0


def test_robustness_ratio_against_the_baseline_condition():
    base = _trials({"a": [1, 1], "b": [1, 0], "c": [0, 0]}, condition="baseline")
    fault = _trials({"a": [1, 0], "b": [0, 0], "c": [0, 0]}, condition="fault:timeout")
    para = _trials({"a": [1, 1], "b": [1, 1]}, condition="prompt:paraphrase")
    r = _profile(pd.concat([base, fault, para], ignore_index=True))
    assert r.loc["robustness_ratio:fault:timeout", "value"] == pytest.approx(
        np.mean([0.5, 0, 0]) / np.mean([1, 0.5, 0]))
    para_row = r.loc["robustness_ratio:prompt:paraphrase"]  # tasks a, b only; not clipped at 1
    assert para_row["value"] == pytest.approx(1.0 / 0.75) and para_row["n_tasks"] == 2
    # consistency is measured on the baseline trials only
    assert r.loc["outcome_consistency", "value"] == pytest.approx(np.mean([1, 0, 1]))
    ax = da.figures.reliability_profile(r.reset_index().assign(run_id="x"),
                                        ax=Figure().add_subplot())
    ref = [ln for ln in ax.lines if ln.get_linestyle() == ":"]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels[-2:] == ["Accuracy ratio, fault:timeout", "Accuracy ratio, prompt:paraphrase"]
    assert len(ref) == 1 and list(ref[0].get_xdata()) == [1, 1]
    assert list(ref[0].get_ydata()) == [len(labels) - 2.5, len(labels) - 0.5]
    with pytest.raises(ValueError, match="no 'baseline' rows; known: fault:timeout"):
        da.tables.reliability(fault)


def test_runs_without_trials_say_which_metrics_need_them():
    t = pd.DataFrame({"task_id": list("abcd"), "final_score": [1.0, 0.0, 0.9, 0.2],
                      "confidence_score": [0.9, 0.2, 0.6, 0.4]})
    r = _profile(t)
    consistency = r[r["dimension"] == "consistency"]
    assert consistency["value"].isna().all() and len(consistency) == 7
    assert consistency["note"].str.startswith("needs repeated trials").all()
    assert r.loc["confidence_auroc", "value"] == 1.0
    assert "no condition column" in r.loc["robustness_ratio", "note"]
    assert da.tables.reliability(t.iloc[:0]).empty  # no rows: no table, no crash
    unscored = t.assign(trial=[0, 1, 0, 1], task_id=list("aabb"),
                        final_score=[1.0, np.nan, 0.0, np.nan])
    assert _profile(unscored).loc["outcome_consistency", "note"].endswith("one scored trial")


def test_seeded_runs_of_one_configuration_are_its_trials():
    t = pd.DataFrame({"run_id": ["s1"] * 3 + ["s2"] * 3 + ["other"] * 3,
                      "task_id": list("abc") * 3,
                      "final_score": [1, 1, 0, 1, 0, 0, 1, 1, 1.0]})
    configs = pd.DataFrame({"run_id": ["s1", "s2", "other"], "config": ["cfg", "cfg", None]})
    r = da.tables.reliability(t, configs=configs, n_boot=100)
    out = r[r["metric"] == "outcome_consistency"].set_index("run_id")
    assert out.loc["cfg", "value"] == pytest.approx(np.mean([1, 0, 1]))
    assert out.loc["cfg", "n_trials"] == 6
    assert "needs repeated trials" in out.loc["other", "note"]


def _table() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    frames = []
    for run, skill in (("agent-a", 0.7), ("agent-b", 0.4)):
        p = rng.beta(2, 2, 30) * skill / 0.5
        ok = rng.random((30, 4)) < np.clip(p, 0, 1)[:, None]
        f = pd.DataFrame({"run_id": run, "task_id": np.repeat(np.arange(30), 4),
                          "trial": np.tile(np.arange(4), 30), "final_score": ok.ravel() * 1.0,
                          "cost": rng.gamma(5, 0.01, 120),
                          "confidence_score": np.clip(ok.ravel() * 0.3 + rng.random(120) * 0.7,
                                                      0, 1)})
        frames.append(f)
    return da.tables.reliability(pd.concat(frames, ignore_index=True), n_boot=300)


def test_reliability_profile_figure_draws_each_computed_metric():
    table = _table()
    before = plt.get_fignums()
    ax = Figure().add_subplot()
    assert da.figures.reliability_profile(table, ax=ax) is ax and plt.get_fignums() == before
    drawn = table[table["value"].notna()]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["Outcome consistency", "CV of cost (lower: steadier)",
                      "AUROC of confidence", "AuRC (lower: better)", "Excess AuRC (lower: better)"]
    assert len(ax.containers) == 2  # one errorbar container per run
    points = ax.containers[0].lines[0]
    a = drawn[drawn["run_id"] == "agent-a"]
    assert points.get_xdata().tolist() == pytest.approx(a["value"].tolist())
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["agent-a", "agent-b"]
    assert "trajectory_action_consistency" in ax.get_xlabel()
    empty = da.figures.reliability_profile(table.assign(value=np.nan), ax=Figure().add_subplot())
    assert "no reliability metric computed" in empty.texts[0].get_text()


def test_the_docs_worked_example():
    """docs/guide/reliability.md: every number, from the raw files."""
    records = json.loads(TAU.read_text())
    by_task: dict = {}
    for rec in records:
        by_task.setdefault(rec["task_id"], []).append(rec["reward"] >= 0.8)
    solved = np.array([sum(v) for v in by_task.values()])
    assert [(solved == k).sum() for k in range(5)] == [14, 12, 10, 4, 10]
    assert np.mean(np.isin(solved, [0, 4])) == pytest.approx(0.48)  # the paper's, clipped
    tau = da.tables.reliability(da.load_run(TAU)).set_index("metric")
    row = tau.loc["outcome_consistency"]
    assert (round(row["value"], 3), round(row["ci_low"], 3), round(row["ci_high"], 3)) == (
        0.56, 0.44, 0.685)
    assert tau["value"].notna().sum() == 1
    assert "no task has two successful trials with a recorded trajectory" in tau.loc[
        "trajectory_action_consistency", "note"]
    # proposed_aat: AUROC and AuRC from task_metrics.csv read with the csv module
    path = ROOT / "data" / "sample_runs" / "proposed_aat" / "task_metrics.csv"
    rows = list(csv.DictReader(path.open()))
    conf = np.array([float(r["confidence_score"]) for r in rows])
    ok = np.array([float(r["final_score"]) >= 0.8 for r in rows])
    err = (~ok).astype(float)
    risks = []
    for i in range(1, len(conf) + 1):  # expected risk of the i most confident, ties at random
        cut = np.sort(conf)[::-1][i - 1]
        above, tied = conf > cut, conf == cut
        risks.append((err[above].sum() + (i - above.sum()) * err[tied].mean()) / i)
    best = np.mean(np.cumsum(np.sort(err)) / np.arange(1, len(err) + 1))
    aat = da.tables.reliability(da.load_run(path.parent)).set_index("metric")
    assert aat.loc["confidence_auroc", "value"] == pytest.approx(roc_auc_score(ok, conf))
    # R 4.2.2: d <- read.csv(".../task_metrics.csv"); ok <- d$final_score >= 0.8
    #   wilcox.test(d$confidence_score[ok], d$confidence_score[!ok], exact = FALSE)$statistic
    #   / (72 * 8) -> 0.8524305556
    assert aat.loc["confidence_auroc", "value"] == pytest.approx(0.8524305556, abs=1e-10)
    assert aat.loc["aurc", "value"] == pytest.approx(np.mean(risks), abs=1e-12)
    assert aat.loc["excess_aurc", "value"] == pytest.approx(np.mean(risks) - best, abs=1e-12)
    shown = {m: tuple(round(aat.loc[m, c], d) for c in ("value", "ci_low", "ci_high"))
             for m, d in (("confidence_auroc", 3), ("aurc", 4), ("excess_aurc", 4))}
    assert shown == {"confidence_auroc": (0.852, 0.677, 0.968),
                     "aurc": (0.0256, 0.0038, 0.0643), "excess_aurc": (0.0198, 0.002, 0.0525)}
    needs = aat[aat["dimension"] == "consistency"]["note"]
    assert len(needs) == 7 and needs.str.startswith("needs repeated trials of a task").all()


def test_risk_coverage_curve_table_and_figure():
    conf = [0.9, 0.8, 0.8, 0.3, 0.6, 0.95, 0.2, 0.5]
    ok = [1, 1, 0, 0, 1, 1, 0, 1]
    frame = _trials({"a": ok[:2], "b": ok[2:4], "c": ok[4:6], "d": ok[6:]}, confidence_score=conf)
    curve = da.tables.risk_coverage(frame)
    assert curve["coverage"].tolist() == pytest.approx(np.arange(1, 9) / 8)
    err = 1 - np.array(ok)[np.argsort(conf)[::-1]]  # descending; the tie (0.8) is at 3 and 4
    assert curve["risk"].iloc[0] == 0.0 and curve["risk"].iloc[2] == pytest.approx(0.5 / 3)
    assert curve["risk"].iloc[-1] == pytest.approx(err.mean())
    assert curve["risk"].mean() == pytest.approx(_profile(frame).loc["aurc", "value"])
    ax = da.figures.risk_coverage_curve(curve, ax=Figure().add_subplot())
    assert len(ax.lines) == 2 and ax.lines[1].get_linestyle() == "--"
    assert ax.lines[0].get_ydata().tolist() == pytest.approx(curve["risk"].tolist())
    assert ax.get_xlabel().startswith("Coverage") and ax.get_ylabel().startswith("Risk")
    with pytest.raises(Skipped, match="confidence_score"):
        da.tables.risk_coverage(frame.drop(columns="confidence_score"))
