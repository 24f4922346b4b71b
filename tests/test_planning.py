"""Planning from a pilot (issue 36, item 2): variance components (Miller 2024, §3) computed here
from the raw files; power, sample size and detectable difference against R's power.t.test
(noncentral t; R's values stored with the R code beside them); a simulation that the planned
number of tasks reaches the power."""

from __future__ import annotations

import csv
import json
import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as st

import dabench_analysis as da
from dabench_analysis.stats.planning import plan_study, variance_components

ROOT = Path(__file__).resolve().parents[1]
TAU = ROOT / "tests" / "data" / "harness" / "tau-bench" / "gpt-4o-airline.json"
SAMPLE = ROOT / "data" / "sample_runs"

# R 4.x (Debian r-base-core), stats::power.t.test with strict = TRUE (both tails, as the
# package's noncentral-t power) and tol = 1e-12 where R solves (its default uniroot tolerance,
# .Machine$double.eps^0.25, leaves R's delta of case 3 at 0.101023687571612, whose power is
# 0.79983). Each value printed with options(digits = 15).
R_CASES = [
    # power.t.test(delta=0.1, sd=0.3, power=0.8, type="paired", strict=TRUE, tol=1e-12)$n
    ("n", dict(delta=0.1, sd=0.3, power=0.8, paired=True), 72.5839026978339),
    # power.t.test(n=30, delta=0.05, sd=0.2, type="one.sample", strict=TRUE)$power
    ("power", dict(n=30, delta=0.05, sd=0.2, paired=True), 0.2629625267629),
    # power.t.test(n=50, sd=0.25, power=0.8, type="paired", strict=TRUE, tol=1e-12)$delta
    ("delta", dict(n=50, sd=0.25, power=0.8, paired=True), 0.101045750533947),
    # power.t.test(delta=0.5, sd=1, power=0.9, sig.level=0.01, type="one.sample",
    #              strict=TRUE, tol=1e-12)$n
    ("n", dict(delta=0.5, sd=1.0, power=0.9, alpha=0.01, paired=True), 62.870235280831),
    # power.t.test(n=12, delta=0.3, sd=0.4, type="paired", strict=TRUE)$power
    ("power", dict(n=12, delta=0.3, sd=0.4, paired=True), 0.658146977725871),
    # power.t.test(delta=0.1, sd=0.3, power=0.8, type="two.sample", strict=TRUE,
    #              tol=1e-12)$n (per group)
    ("n", dict(delta=0.1, sd=0.3, power=0.8, paired=False), 142.246249911839),
    # power.t.test(n=73, delta=0.1, sd=0.3, type="paired", strict=TRUE)$power
    ("power", dict(n=73, delta=0.1, sd=0.3, paired=True), 0.802298943383233),
]


@pytest.mark.parametrize(("what", "args", "r_value"), R_CASES)
def test_plan_study_matches_r_power_t_test(what, args, r_value):
    a = dict(args)
    sd, paired, alpha = a.pop("sd"), a.pop("paired"), a.pop("alpha", 0.05)
    vb = sd**2  # one trial per task, no within-task variance: the per-task sd is sd
    if what == "n":
        res = plan_study(a["delta"], n_tasks=10, n_trials=1, var_between=vb,
                         var_within=float("nan"), alpha=alpha, power=a["power"],
                         paired=paired)
        assert res["tasks_needed"] == math.ceil(r_value)
        exact = da.stats.required_n(a["delta"] / sd, alpha=alpha, power=a["power"],
                                    paired=paired).n_exact.iloc[0]
        assert exact == pytest.approx(r_value, rel=1e-6)
    elif what == "power":
        res = plan_study(a["delta"], n_tasks=a["n"], n_trials=1, var_between=vb,
                         var_within=float("nan"), alpha=alpha, paired=paired)
        assert res["power_now"] == pytest.approx(r_value, abs=1e-9)
    else:
        res = plan_study(0.1, n_tasks=a["n"], n_trials=1, var_between=vb,
                         var_within=float("nan"), alpha=alpha, power=a["power"],
                         paired=paired)
        assert res["detectable_diff"] == pytest.approx(r_value, rel=1e-6)


def test_trials_needed_matches_r():
    """R: pw <- function(K) power.t.test(n=60, delta=0.1, sd=sqrt(0.05 + 0.2/K),
    type="paired", strict=TRUE)$power; K <- 1; while (pw(K) < 0.8) K <- K + 1
    gives K = 9 (pw(8) = 0.794504929896954, pw(9) = 0.809249865251951)."""
    res = plan_study(0.1, n_tasks=60, n_trials=1, var_between=0.05, var_within=0.2)
    assert res["trials_needed"] == 9
    # ω² alone too large for 20 tasks: no number of trials suffices
    res = plan_study(0.1, n_tasks=20, n_trials=1, var_between=0.05, var_within=0.2)
    assert res["trials_needed"] == np.inf and "add tasks" in res["note"]


def test_planned_tasks_reach_the_power_in_simulation():
    """Paired studies of n tasks x K trials, per-task difference ~ N(δ, ω²), trial noise
    N(0, σ²): the share of two-sided t tests rejecting at the planned n is the power."""
    delta, omega2, sigma2, k = 0.1, 0.04, 0.3, 3
    res = plan_study(delta, n_tasks=10, n_trials=k, var_between=omega2, var_within=sigma2)
    n = res["tasks_needed"]
    sd = math.sqrt(omega2 + sigma2 / k)
    nc, df = delta / sd * math.sqrt(n), n - 1
    crit = st.t.isf(0.025, df)
    exact = st.nct.sf(crit, df, nc) + st.nct.cdf(-crit, df, nc)  # the power at n
    assert exact >= 0.8 and n == 112
    rng = np.random.default_rng(36)
    reps = 4000
    task = rng.normal(delta, math.sqrt(omega2), (reps, n))
    trials = task[..., None] + rng.normal(0, math.sqrt(sigma2), (reps, n, k))
    d = trials.mean(axis=2)
    t = d.mean(axis=1) / (d.std(axis=1, ddof=1) / math.sqrt(n))
    rejected = np.mean(np.abs(t) > crit)
    assert abs(rejected - exact) < 3 * math.sqrt(exact * (1 - exact) / reps)


def _tau_rates() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rows = json.loads(TAU.read_text())
    by = {}
    for r in rows:
        by.setdefault(r["task_id"], []).append(float(r["reward"]))
    x = [np.array(v) for _, v in sorted(by.items())]
    return (np.array([v.mean() for v in x]), np.array([v.var(ddof=1) for v in x]),
            np.array([len(v) for v in x]))


def test_one_run_with_trials_tau_bench():
    """The guide's worked example (docs/guide/reliability.md, Planning): tau-bench gpt-4o
    airline, 50 tasks x 4 trials, accuracy 0.42."""
    m, v, k = _tau_rates()
    within = v.mean()                               # σ²: mean trial variance
    between = m.var(ddof=1) - within * np.mean(1 / k)  # ω² = Var(x̄_i) − σ²/K
    assert (len(m), set(k)) == (50, {4}) and m.mean() == pytest.approx(0.42)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = da.load_run(TAU)
        p = da.tables.planning(run, delta=0.1).iloc[0]
        p1 = da.tables.planning(run, delta=0.1, n_trials=1).iloc[0]
        p2 = da.tables.planning(run, delta=0.2).iloc[0]
    assert p["design"] == "one-sample" and p["n_tasks"] == 50 and p["trials_per_task"] == 4
    assert p["var_within"] == pytest.approx(within) and within == pytest.approx(0.1467, abs=1e-4)
    assert p["var_between"] == pytest.approx(between) and between == pytest.approx(0.0997,
                                                                                  abs=1e-4)
    sd = math.sqrt(between + within / 4)
    assert p["sd_per_task"] == pytest.approx(sd)
    # detectable difference: the δ at which the noncentral t reaches 0.8 with 50 tasks
    crit = st.t.isf(0.025, 49)

    def power(delta, n, s):
        nc = delta / s * math.sqrt(n)
        return st.nct.sf(crit if n == 50 else st.t.isf(0.025, n - 1), n - 1, nc) + \
            st.nct.cdf(-(crit if n == 50 else st.t.isf(0.025, n - 1)), n - 1, nc)

    assert power(p["detectable_diff"], 50, sd) == pytest.approx(0.8, abs=1e-6)
    assert round(p["detectable_diff"], 3) == 0.149
    assert p["tasks_needed"] == 109 and power(0.1, 109, sd) >= 0.8 > power(0.1, 108, sd)
    sd1 = math.sqrt(between + within)
    assert p1["tasks_needed"] == 196 and power(0.1, 196, sd1) >= 0.8 > power(0.1, 195, sd1)
    assert p["trials_needed"] == np.inf  # even ω² alone: power(0.1, 50, sqrt(ω²)) < 0.8
    assert power(0.1, 50, math.sqrt(between)) < 0.8
    assert p2["trials_needed"] == 2
    assert power(0.2, 50, math.sqrt(between + within / 2)) >= 0.8 > power(
        0.2, 50, math.sqrt(between + within))


def _csv_success(run: str) -> dict[str, float]:
    with (SAMPLE / run / "task_metrics.csv").open(newline="", encoding="utf-8") as fh:
        return {r["task_id"]: float(float(r["final_score"]) >= 0.8) for r in csv.DictReader(fh)}


def test_two_runs_paired_sample_runs():
    """The guide's worked example: baseline_react vs proposed_aat, 80 shared tasks, one trial
    each: the variance of the per-task differences of success."""
    a, b = _csv_success("baseline_react"), _csv_success("proposed_aat")
    d = np.array([a[t] - b[t] for t in sorted(a)])
    sd = d.std(ddof=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runs = da.load_runs([SAMPLE / "baseline_react", SAMPLE / "proposed_aat"],
                            progress=False)
        p = da.tables.planning(runs).iloc[0]
        p10 = da.tables.planning(runs, delta=0.1).iloc[0]
    assert (p["design"], p["n_tasks"], p["mean_a"], p["mean_b"]) == ("paired", 80, 0.7625, 0.9)
    assert p["diff"] == pytest.approx(d.mean()) and p["delta"] == pytest.approx(0.1375)
    assert p["var_between"] == pytest.approx(d.var(ddof=1)) and np.isnan(p["var_within"])
    crit = st.t.isf(0.025, 79)
    nc = 0.1375 / sd * math.sqrt(80)
    assert p["power_now"] == pytest.approx(st.nct.sf(crit, 79, nc) + st.nct.cdf(-crit, 79, nc))
    assert round(p["power_now"], 3) == 0.783 and round(p["detectable_diff"], 3) == 0.140
    assert p["tasks_needed"] == 84 and p10["tasks_needed"] == 156
    z = st.norm.ppf(0.975) + st.norm.ppf(0.8)  # Miller Eq. 9, normal quantiles: fewer tasks
    assert math.ceil(z**2 * d.var(ddof=1) / 0.1**2) == 154
    assert da.stats.miller_required_n(0.1, omega2=p["var_between"]).n.iloc[0] == 154
    assert np.isnan(p["trials_needed"]) and "no task has two trials" in p["note"]


def test_variance_components_paired_with_trials():
    ma, mb = np.array([1.0, 0.5, 0.25, 0.0]), np.array([0.5, 0.5, 0.0, 0.25])
    va, vb = np.array([0.0, 1 / 3, 0.25, 0.0]), np.array([1 / 3, 1 / 3, 0.0, 0.25])
    k = np.full((4, 2), 4)
    vc = variance_components(np.c_[ma, mb], np.c_[va, vb], k)
    noise = va.mean() / 4 + vb.mean() / 4
    assert vc["var_within"] == pytest.approx(va.mean() + vb.mean())
    assert vc["var_between"] == pytest.approx(max(0.0, np.var(ma - mb, ddof=1) - noise))


def test_planning_refuses_bad_input():
    t = pd.DataFrame({"run_id": ["a", "a"], "task_id": ["t1", "t1"], "final_score": [1.0, 0.0]})
    with pytest.raises(ValueError, match="appears twice"):
        da.tables.planning(t)
    with pytest.raises(ValueError, match="baseline 'x' is not one of the runs"):
        da.tables.planning(t.assign(task_id=["t1", "t2"]), baseline="x")


def test_planning_designs_follow_the_shared_tasks():
    rng = np.random.default_rng(5)
    ids = [f"t{i}" for i in range(30)]
    a = pd.DataFrame({"run_id": "a", "task_id": ids, "final_score": rng.random(30)})
    b = a.assign(run_id="b", final_score=rng.random(30)).iloc[:25]      # 25 shared
    c = a.assign(run_id="c", task_id=[f"u{i}" for i in range(30)])      # none shared
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        out = da.tables.planning(pd.concat([a, b, c]), baseline="a", delta=0.2)
    assert out[["run_b", "design", "n_tasks"]].values.tolist() == [["b", "paired", 25],
                                                                  ["c", "two-sample", 30]]
    assert "a vs b: 5 task(s) not in both runs left out" in out["note"].iloc[0]
    assert any("5 task(s) not in both runs" in str(w.message) for w in seen)
    # two-sample: the per-run variances averaged, t with 2n - 2 df (R type = "two.sample")
    sa = (a["final_score"] >= 0.8).to_numpy(float)
    sc = (c["final_score"] >= 0.8).to_numpy(float)
    sd = math.sqrt((sa.var(ddof=1) + sc.var(ddof=1)) / 2)
    nc, crit = 0.2 / sd * math.sqrt(30 / 2), st.t.isf(0.025, 58)
    assert out["power_now"].iloc[1] == pytest.approx(st.nct.sf(crit, 58, nc)
                                                    + st.nct.cdf(-crit, 58, nc))
