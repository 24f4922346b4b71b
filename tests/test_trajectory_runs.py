"""Trajectories of two runs and of many runs, and the statistics underneath, with expected
values counted by hand or recomputed here from the formula (Newcombe 1998b with statsmodels'
Wilson bounds; scipy for the tests) or a published example."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as st
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint
from trajectory_fixture import STEPS, write_run

import dabench_analysis as da
from dabench_analysis import trajectory as tr
from dabench_analysis.stats._differences import newcombe_paired
from dabench_analysis.trajectory import _step_stats, step_events, steps

U, P, E, V, S = "UNDERSTAND", "PLAN", "EXECUTE", "VERIFY", "SUMMARIZE"
#: The proposed run: t2 without its loop (one EXECUTE step), t4 canonical (U P E V S).
PROPOSED = [s for s in STEPS if s[0] not in ("t2", "t4")] + [
    ("t2", 1, U, "SchemaAgent", "read_csv", "a", 1), ("t2", 2, P, "Planner", "", "", 1),
    ("t2", 3, E, "Executor", "sql", "q1", 1), ("t2", 4, V, "Verifier", "", "", 1),
    ("t2", 5, S, "Summarizer", "", "", 1),
    ("t4", 1, U, "SchemaAgent", "read_csv", "b", 1), ("t4", 2, P, "Planner", "", "", 1),
    ("t4", 3, E, "Executor", "sql", "q", 1), ("t4", 4, V, "Verifier", "", "", 1),
    ("t4", 5, S, "Summarizer", "", "", 1)]


def newcombe_reference(a: int, b: int, c: int, d: int) -> tuple[float, float, float]:
    """Newcombe (1998b) method 10 written here from the paper's formula (statsmodels' Wilson
    bounds of the two marginal proportions, phi from the 2x2 table)."""
    n = a + b + c + d
    p1, p2 = (a + b) / n, (a + c) / n
    l1, u1 = proportion_confint(a + b, n, method="wilson")
    l2, u2 = proportion_confint(a + c, n, method="wilson")
    l1, u1 = (0.0 if a + b == 0 else l1), (1.0 if a + b == n else u1)
    l2, u2 = (0.0 if a + c == 0 else l2), (1.0 if a + c == n else u2)
    den = (a + b) * (c + d) * (a + c) * (b + d)
    x = a * d - b * c
    cc = x - n / 2 if x > n / 2 else (0 if x >= 0 else x)
    phi = cc / np.sqrt(den) if den else 0.0
    lo = p1 - p2 - np.sqrt((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2)
    hi = p1 - p2 + np.sqrt((p2 - l2) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1) + (u1 - p1) ** 2)
    return p1 - p2, lo, hi


def test_newcombe_paired_matches_the_published_example():
    # Fagerland, Lydersen & Laake (2014), Cavo et al. (2012) data, printed by the
    # contingencytables R package: estimate -0.0621 (95% CI -0.1186 to -0.0046)
    assert newcombe_paired(59, 6, 16, 80) == pytest.approx((-0.0621, -0.1186, -0.0046),
                                                           abs=5e-5)
    for table in [(3, 0, 1, 0), (0, 2, 0, 5), (10, 3, 7, 2), (1, 0, 0, 0)]:
        assert newcombe_paired(*table) == pytest.approx(newcombe_reference(*table))


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    root = tmp_path_factory.mktemp("pair")
    return (da.load_run(write_run(root, run_id="base")),
            da.load_run(write_run(root, run_id="prop", steps=PROPOSED)))


def test_compare_pairs_tasks(pair):
    full = tr.compare(*pair)
    c = full[full["difficulty"] == "all"].set_index("measure")
    # steps of t1..t4 (t5 has none): base 6 6 7 6, proposed 6 5 7 5
    b, p = np.array([6, 6, 7, 6.0]), np.array([6, 5, 7, 5.0])
    d = p - b
    row = c.loc["steps_per_task"]
    assert (row["n_pairs"], row["diff"]) == (4, d.mean())
    half = st.t.ppf(0.975, 3) * d.std(ddof=1) / 2  # t-interval, sd / sqrt(4)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((d.mean() - half, d.mean() + half))
    # as R wilcox.test(p, b, paired = TRUE): zeros dropped, ties -> normal approximation with
    # tie and continuity correction: z = (0 - 1.5 + 0.5) / sqrt(1.125), p = 0.3458
    assert row["p_value"] == pytest.approx(st.wilcoxon(p, b, correction=True,
                                                       method="approx").pvalue)
    # loops: base t2 only, proposed none -> b = 1 discordant, exact McNemar p = 1
    loop = c.loc["loop_rate"]
    assert (loop["baseline"], loop["proposed"], loop["p_value"]) == (0.25, 0.0, 1.0)
    # first = proposed: both 0, proposed only 0, baseline only 1, neither 3
    assert (loop["diff"], loop["ci_low"], loop["ci_high"]) == pytest.approx(
        newcombe_reference(0, 0, 1, 3))
    canon = c.loc["canonical_share"]  # base t1 t2; proposed t1 t2 t4
    assert (canon["baseline"], canon["proposed"]) == (0.5, 0.75)
    assert canon["p_value"] == pytest.approx(st.binomtest(0, 1).pvalue)
    rec = c.loc["recovery_rate"]  # tasks with an error in both runs: t3 only (unrecovered)
    assert (rec["n_pairs"], rec["baseline"], rec["proposed"]) == (1, 0.0, 0.0)
    # per difficulty: Easy t1, t2; Hard t3, t4 (t5, Medium, has no steps)
    assert full["difficulty"].unique().tolist() == ["all", "Easy", "Hard"]
    hard = full[full["difficulty"] == "Hard"].set_index("measure")
    assert (hard.loc["canonical_share", "baseline"], hard.loc["canonical_share", "proposed"]) \
        == (0.0, 0.5)  # t4 canonical in the proposed run only


def test_variant_changes_largest_first(pair):
    v = tr.variant_changes(*pair)
    v = v[v["difficulty"] == "all"]
    first = v.iloc[0]  # canonical: 2 of 4 tasks -> 3 of 4
    assert first["pattern"] == "→".join((U, P, E, V, S))
    assert (first["share_baseline"], first["share_proposed"], first["diff"]) == (0.5, 0.75,
                                                                                 0.25)
    assert v["diff"].abs().is_monotonic_decreasing
    assert v["p_adjusted"].ge(v["p_value"]).all()


def test_per_run_rows_with_intervals(pair, tmp_path):
    runs = da.load_runs([pair[0].path, pair[1].path])
    every = tr.per_run(runs)
    assert every["difficulty"].tolist() == ["all", "Easy", "Hard"] * 2
    out = every[every["difficulty"] == "all"].set_index("run_id")
    # base: 4 tasks with steps, loops 1/4, errors 4 (2 recovered), canonical 2/4
    assert out.loc["base", ["n_tasks", "mean_steps", "loop_rate", "recovery_rate",
                            "conformance"]].tolist() == pytest.approx([4, 6.25, 0.25, 0.5,
                                                                       0.5])
    lo, hi = proportion_confint(1, 4, method="wilson")
    assert (out.loc["base", "loop_rate_ci_low"], out.loc["base", "loop_rate_ci_high"]) == \
        pytest.approx((lo, hi))
    # proposed: errors t3#3, t3#5 (py, never recovered)
    assert out.loc["prop", ["loop_rate", "recovery_rate", "conformance"]].tolist() == [0, 0,
                                                                                       0.75]


def test_order_steps_blocks_and_out_of_order():
    s = pd.DataFrame({"task_id": ["a"] * 4 + ["b"] * 2, "step_id": [3, 1, 2, 4, 2, 1],
                      "stage": [V, U, E, S, P, U]})
    ordered, notes = steps.order_steps(s)
    assert ordered["stage"].tolist() == [U, E, V, S, U, P] and notes == []
    conf = steps.conformance(steps.blocks(ordered), n_tasks=2)
    # a: U E V S (PLAN skipped, in order); b: U P (E, V, S skipped)
    assert conf["deviation"].tolist() == ["skipped PLAN", "skipped EXECUTE; VERIFY; SUMMARIZE"]
    odd = pd.DataFrame({"task_index": [0] * 5, "value": [U, E, P, V, S]})
    assert steps.conformance(odd)["out_of_order"].tolist() == [True]
    extra = pd.DataFrame({"task_index": [0] * 6, "value": [U, P, E, V, "AGGREGATE", S]})
    assert steps.conformance(extra)["deviation"].tolist() == ["out of order"]


def test_grouped_quantiles_match_scipy_per_group():
    rng = np.random.default_rng(3)
    values = rng.gamma(2.0, 1.0, size=400)
    groups = rng.integers(0, 4, size=400)
    groups[:3] = 3
    out = _step_stats.grouped_quantiles(values, groups)
    for g in range(4):
        x = values[groups == g]
        for p in (0.5, 0.9, 0.99):
            ci = st.quantile_test(x, q=1.0, p=p).confidence_interval(0.95)
            name = f"p{p * 100:g}"
            assert out.loc[g, [name, f"{name}_ci_low", f"{name}_ci_high"]].tolist() == \
                pytest.approx([np.quantile(x, p), ci.low, ci.high], nan_ok=True)


def test_error_recovery_uses_tool_calls_too():
    st_ = pd.DataFrame({"task_index": [0, 0], "step_id": [1, 2], "tool": ["sql", "sql"],
                        "stage": [E, E], "success": [True, True]})
    calls = pd.DataFrame({"task_index": [0, 0], "step_id": [1, 2], "tool_name": ["sql", "sql"],
                          "success": [False, True]})
    out = step_events.error_recovery(st_, calls)
    assert out[["step_id", "source", "recovered"]].values.tolist() == [[1, "tool call", True]]



def test_trajectory_stats_refuse_a_run(pair):
    with pytest.raises(TypeError, match="pass run.trajectory"):
        steps.order_steps(pair[0])


def test_fisher_exact_for_many_tables_equals_scipy():
    # every 2x2 table of up to 14 observations, against scipy.stats.fisher_exact (R fisher.test)
    from dabench_analysis.stats._differences import compare_proportions, fisher_exact

    tables = [(a, b, c, d) for a in range(8) for b in range(8) for c in range(8) for d in range(8)
              if 0 < a + b + c + d <= 14]
    got = fisher_exact(*np.array(tables).T)
    want = [st.fisher_exact([[a, b], [c, d]]).pvalue for a, b, c, d in tables]
    assert got == pytest.approx(want, rel=1e-9, abs=1e-12)
    assert np.isnan(fisher_exact([0], [0], [0], [0])[0])
    out = compare_proportions([2, 1, 0], [3, 1, 0], [1, 0, 3], [2, 4, 3])
    lo, hi = confint_proportions_2indep(2, 3, 1, 2, method="newcomb", compare="diff")
    assert (out.loc[0, "ci_low"], out.loc[0, "ci_high"]) == pytest.approx((lo, hi))
    assert out.loc[2, ["diff", "ci_low", "p_value"]].isna().all()  # an empty group
