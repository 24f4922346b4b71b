"""Trajectory tables on the hand-built run of tests/trajectory_fixture.py: every expected value
is counted by hand from the fixture's docstring (closed form); intervals are recomputed here
with statsmodels' ``proportion_confint(method="wilson")`` and
``confint_proportions_2indep(method="newcomb")``, p-values with scipy."""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as st
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint
from trajectory_fixture import LONG_MESSAGE, write_run

import dabench_analysis as da
from dabench_analysis import trajectory as tr
from dabench_analysis.stats._inputs import StatisticsWarning

U, P, E, V, S = "UNDERSTAND", "PLAN", "EXECUTE", "VERIFY", "SUMMARIZE"


def arrow(*parts: str) -> str:
    return "→".join(parts)


def wilson(k: int, n: int) -> tuple[float, float]:
    # statsmodels, R prop.test(k, n, correct = FALSE)$conf.int; 0 and 1 exact at k = 0, n
    lo, hi = proportion_confint(k, n, method="wilson")
    return (0.0 if k == 0 else lo), (1.0 if k == n else hi)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    return da.load_run(write_run(tmp_path_factory.mktemp("hand")))


def pooled(table: pd.DataFrame) -> pd.DataFrame:
    return table[table["difficulty"].astype(str) == "all"].reset_index(drop=True)


def test_variants_count_each_sequence_of_blocks(run):
    v = pooled(tr.variants(run))
    # t1, t2 canonical; t3 a retry; t4 a replan without VERIFY; t5 no steps
    assert v["pattern"].tolist() == [arrow(U, P, E, V, S), "(no steps)",
                                     arrow(U, P, E, V, E, V, S), arrow(U, P, U, P, E, S)]
    assert v["reading"].tolist()[2:] == [arrow(U, P, E, V, "RETRY", V, S),
                                         arrow(U, P, U, "REPLAN", E, S)]
    assert v["n_tasks"].tolist() == [2, 1, 1, 1]
    assert v["share"].tolist() == pytest.approx([0.4, 0.2, 0.2, 0.2])
    assert (v.loc[0, "share_ci_low"], v.loc[0, "share_ci_high"]) == pytest.approx(wilson(2, 5))
    assert v["accuracy"].tolist() == [1.0, 1.0, 0.0, 0.0]
    assert v["mean_steps"].tolist() == [6.0, 0.0, 7.0, 6.0]
    assert v["mean_runtime_s"].tolist() == [15.0, 5.0, 30.0, 40.0]  # execution_time
    assert v["mean_final_score"].tolist() == pytest.approx([0.95, 0.85, 0.2, 0.5])
    # canonical 2/2 correct against the other tasks 1/3: scipy fisher_exact
    assert v.loc[0, "p_value"] == pytest.approx(st.fisher_exact([[2, 0], [1, 2]]).pvalue)
    assert v["conforms"].tolist() == [True, False, False, False]
    p = v["p_value"].to_numpy()  # Holm over the 4 variants: min(1, (m - rank + 1) p) cumulative
    order = np.argsort(p)
    holm = np.maximum.accumulate(np.minimum(1, (4 - np.arange(4)) * p[order]))
    assert v["p_adjusted"].to_numpy()[order] == pytest.approx(holm)


def test_variants_by_difficulty_and_rest_pooled(run):
    v = tr.variants(run, top=1)
    assert v["difficulty"].astype(str).unique().tolist() == ["all", "Easy", "Medium", "Hard"]
    rest = v[(v["difficulty"] == "all")].iloc[-1]
    assert rest["pattern"] == "other (3 variants)" and rest["n_tasks"] == 3
    assert rest["accuracy"] == pytest.approx(1 / 3) and np.isnan(rest["p_value"])
    hard = v[v["difficulty"] == "Hard"]
    assert hard["n_tasks"].sum() == 2


def test_variants_by_tool_without_collapsing(run):
    v = pooled(tr.variants(run, by="tool", collapse_repeats=False))
    # tool sequences: t1 read_csv→sql, t2 read_csv→sql→sql, t3 py→py, t4 read_csv→sql
    got = dict(zip(v["pattern"], v["n_tasks"], strict=True))
    assert got == {"read_csv→sql": 2, "read_csv→sql→sql": 1, "py→py": 1, "(no steps)": 1}
    assert "conforms" not in v


def test_conformance_and_its_deviations(run):
    c = pooled(tr.conformance(run)).iloc[0]
    assert (c["n_tasks"], c["n_conform"]) == (5, 2)
    assert (c["conform_share_ci_low"], c["conform_share_ci_high"]) == pytest.approx(
        wilson(2, 5))
    # skipped: t4 (VERIFY), t5 (all); repeated: t3 (EXECUTE, VERIFY), t4 (UNDERSTAND, PLAN)
    assert (c["n_skipped"], c["n_repeated"], c["n_replan"], c["n_retry"],
            c["n_out_of_order"]) == (2, 2, 1, 1, 0)
    # conform 2/2 correct, deviate 1/3 (t5 correct, t3 and t4 not)
    assert (c["accuracy_conform"], c["accuracy_deviate"]) == pytest.approx((1.0, 1 / 3))
    lo, hi = confint_proportions_2indep(2, 2, 1, 3, method="newcomb", compare="diff")
    assert (c["diff"], c["ci_low"], c["ci_high"]) == pytest.approx((2 / 3, lo, hi))
    per_task = tr.task_patterns(run).set_index("task_id")
    assert per_task.loc["t4", "deviation"] == "skipped VERIFY; repeated UNDERSTAND ×2, PLAN ×2 (replan)"
    assert per_task.loc["t3", "deviation"] == "repeated EXECUTE ×2 (retry), VERIFY ×2"


def test_transitions_between_blocks(run):
    t = pooled(tr.transitions(run)).set_index(["source", "target"])
    counts = {("start", U): 4, (U, P): 5, (P, U): 1, (P, E): 4, (E, V): 4, (E, S): 1,
              (V, E): 1, (V, S): 3, (S, "end"): 4}
    assert t["count"].to_dict() == counts
    assert list(t.index) == list(counts)  # node order: start, the stages in order, end
    assert t.loc[(P, E), "exit_share"] == pytest.approx(0.8)
    assert t.loc[(V, S), "exit_share"] == pytest.approx(0.75)
    # U→P: tasks t1..t4, t1 and t2 correct
    assert (t.loc[(U, P), "n_tasks"], t.loc[(U, P), "accuracy"]) == (4, 0.5)
    # E blocks before VERIFY: t1 step 4 (4 s), t2 steps 3+4 (7 s), t3 steps 3 and 5: median 4.5
    assert t.loc[(E, V), "median_source_s"] == pytest.approx(np.median([4, 7, 3, 5]))
    assert np.isnan(t.loc[("start", U), "median_source_s"])


def test_transitions_between_steps_show_repeats_as_self_loops(run):
    t = pooled(tr.transitions(run, collapse_repeats=False)).set_index(["source", "target"])
    assert t.loc[(E, E), "count"] == 1 and t.loc[(U, U), "count"] == 1  # t2; t1


def test_loops_and_unexplained_reentries(run):
    per_task = tr.loop_tasks(run).set_index("task_id")
    assert per_task["n_loops"].tolist() == [0, 1, 0, 0, 0]  # t2 step 4 repeats step 3
    # t4: 2 PLAN blocks, replan_count 0 -> 1 unexplained; t3: 2 EXECUTE, attempts 2 -> 0
    assert per_task.loc["t4", "plan_reentries"] == 1 and per_task.loc["t3",
                                                                      "execute_reentries"] == 0
    lp = pooled(tr.loops(run)).iloc[0]
    assert (lp["n_tasks"], lp["n_with_loop"], lp["n_loop_steps"], lp["n_reentry"]) == (4, 1, 1,
                                                                                       1)
    assert (lp["loop_share_ci_low"], lp["loop_share_ci_high"]) == pytest.approx(wilson(1, 4))
    # with a loop 1/1 correct (t2); without 1/3 (t1; t3, t4 wrong)
    assert (lp["accuracy_loop"], lp["accuracy_no_loop"]) == pytest.approx((1.0, 1 / 3))
    lo, hi = confint_proportions_2indep(1, 1, 1, 3, method="newcomb", compare="diff")
    assert (lp["diff"], lp["ci_low"], lp["ci_high"]) == pytest.approx((2 / 3, lo, hi))
    assert lp["p_value"] == pytest.approx(st.fisher_exact([[1, 0], [1, 2]]).pvalue)


def test_loop_window_counts_steps_of_any_kind(tmp_path):
    # sql q at steps 1 and 4: three steps apart, so a loop with window 3 but not window 2
    steps = [("t1", 1, E, "Executor", "sql", "q", 1), ("t1", 2, V, "Verifier", "", "", 1),
             ("t1", 3, V, "Verifier", "", "", 1), ("t1", 4, E, "Executor", "sql", "q", 1)]
    run = da.load_run(write_run(tmp_path, steps=steps, tasks=[("t1", "Easy", "agg", 1.0, 0, 1,
                                                               4.0)]))
    assert tr.loop_tasks(run, window=3)["n_loops"].tolist() == [1]
    assert tr.loop_tasks(run, window=2)["n_loops"].tolist() == [0]


def test_recovery_by_tool_and_stage_with_reference(run):
    r = pooled(tr.recovery(run)).set_index(["level", "group"])
    # errors: t2#3 sql (recovered by #4), t3#3 py and t3#5 py (never), t4#2 PLAN (by #4)
    assert (r.loc[("all", "all errors"), "n_errors"],
            r.loc[("all", "all errors"), "n_recovered"]) == (4, 2)
    lo, hi = wilson(2, 4)
    assert (r.loc[("all", "all errors"), "recovery_rate_ci_low"],
            r.loc[("all", "all errors"), "recovery_rate_ci_high"]) == pytest.approx((lo, hi))
    assert r.loc[("tool", "sql"), ["n_errors", "n_recovered"]].tolist() == [1, 1]
    assert r.loc[("tool", "py"), ["n_errors", "n_recovered"]].tolist() == [2, 0]
    assert r.loc[("stage", E), ["n_errors", "n_recovered"]].tolist() == [3, 1]
    assert r.loc[("stage", P), ["n_errors", "n_recovered"]].tolist() == [1, 1]
    # tasks with an error: t2 (all recovered, correct), t3 (not, wrong), t4 (all, wrong)
    row = r.loc[("all", "all errors")]
    assert (row["n_tasks"], row["accuracy"], row["accuracy_recovered"],
            row["accuracy_unrecovered"]) == pytest.approx((3, 1 / 3, 0.5, 0.0))
    ref = r.loc[("reference", "no error")]
    assert (ref["n_tasks"], ref["accuracy"]) == (1, 1.0)  # t1; t5 has no steps


def test_first_failures_with_error_and_replay_evidence(run):
    ff = tr.first_failures(run).set_index("task_id")
    assert ff.index.tolist() == ["t3", "t4"]  # below 0.8
    assert ff.loc["t3", ["step_id", "stage", "agent", "tool", "error_type"]].tolist() == [
        3, E, "Executor", "py", "KeyError"]
    msg = ff.loc["t3", "error_message"]
    assert len(msg) == 80 and msg == LONG_MESSAGE[:79] + "…"
    assert ff.loc["t4", ["step_id", "stage", "tool"]].tolist()[:2] == [2, P]
    assert pd.isna(ff.loc["t4", "tool"])
    # evidence: t3 [5] (first failure 3: not in it), t4 [2, 4] (2: in it)
    assert ff["in_evidence"].tolist() == [False, True]
    agree = pooled(tr.first_failure_agreement(tr.first_failures(run))).iloc[0]
    assert (agree["n_failed"], agree["n_compared"], agree["n_agree"]) == (2, 2, 1)
    counts = pooled(tr.first_failure_counts(tr.first_failures(run)))
    assert counts[["stage", "agent", "n"]].values.tolist() == [[E, "Executor", 1],
                                                               [P, "Planner", 1]]


def test_failed_task_without_failing_step_is_listed(tmp_path):
    steps = [("t1", 1, P, "Planner", "", "", 1)]
    run = da.load_run(write_run(tmp_path, steps=steps, tasks=[("t1", "Easy", "agg", 0.1, 0, 1,
                                                               1.0)]))
    ff = tr.first_failures(run)
    assert ff["stage"].tolist() == ["(no failing step)"] and pd.isna(ff.loc[0, "step_id"])


def test_step_latency_quantiles_and_shares(run):
    lat = pooled(tr.step_latency(run)).set_index("stage")
    # each step lasts step_id seconds; EXECUTE steps: t1 4, t2 3 4, t3 3 5, t4 5
    x = np.array([4, 3, 4, 3, 5, 5], dtype=float)
    ci = st.quantile_test(x, q=4, p=0.5).confidence_interval(0.95)
    assert lat.loc[E, ["n", "p50_s", "p90_s"]].tolist() == pytest.approx(
        [6, np.median(x), np.quantile(x, 0.9)])
    assert [lat.loc[E, "p50_s_ci_low"], lat.loc[E, "p50_s_ci_high"]] == pytest.approx(
        [ci.low, ci.high], nan_ok=True)
    total = sum(s for t in ((1, 2, 3, 4, 5, 6), (1, 2, 3, 4, 5, 6), (1, 2, 3, 4, 5, 6, 7),
                            (1, 2, 3, 4, 5, 6)) for s in t)
    assert lat.loc[E, "share_of_time"] == pytest.approx(x.sum() / total)
    assert lat.loc[E, "tokens_sum"] == pytest.approx(10 * x.sum())


def test_step_latency_by_tool_adds_call_latency(run):
    lat = pooled(tr.step_latency(run, by="tool")).set_index("tool")
    assert lat.loc["sql", ["n", "n_calls", "call_p50_s"]].tolist() == pytest.approx(
        [4, 4, np.median([4, 3, 4, 5])])
    assert lat.loc["(none)", "n"] == 25 - 9  # 25 steps, 9 of them call a tool


def test_solve_curve_counts_failed_tasks_as_never_solved(run):
    c = pooled(tr.solve_curve(run))
    # t1, t2 correct at 6 steps; t3 (7) and t4 (6) wrong; t5 has no steps
    assert c["steps"].tolist() == list(range(1, 8))
    assert c["n"].unique().tolist() == [4]
    assert c["share"].tolist() == [0, 0, 0, 0, 0, 0.5, 0.5]
    assert (c.loc[5, "ci_low"], c.loc[5, "ci_high"]) == pytest.approx(wilson(2, 4))
    assert "not a survival estimate" in c.loc[0, "method"]
    s = pooled(tr.solve_curve(run, axis="seconds"))
    # execution_time: correct t5 5 s, t1 10 s, t2 20 s; last end 40 s; all 5 tasks count
    assert s["seconds"].tolist() == [5.0, 10.0, 20.0, 40.0]
    assert s["share"].tolist() == pytest.approx([0.2, 0.4, 0.6, 0.6])
    for i, k in enumerate([1, 2, 3, 3]):  # one counting rule for both axes, one interval
        assert (s.loc[i, "ci_low"], s.loc[i, "ci_high"]) == pytest.approx(wilson(k, 5))
    for k in range(1, 8):
        assert (c.loc[k - 1, "ci_low"], c.loc[k - 1, "ci_high"]) == pytest.approx(
            wilson(2 if k >= 6 else 0, 4))


def test_tool_fit_by_task_type_and_pooled(run):
    fit = tr.tool_fit(run).set_index(["group_by", "group", "tool"])
    sql = fit.loc[("all", "all", "sql")]
    # sql in t1, t2, t4 (2 of 3 correct) vs t3, t5 (1 of 2); calls: 4, one failed (t2)
    assert (sql["n_using"], sql["accuracy_using"], sql["n_not_using"],
            sql["accuracy_not_using"]) == pytest.approx((3, 2 / 3, 2, 0.5))
    assert (sql["n_calls"], sql["failure_rate"]) == pytest.approx((4, 0.25))
    lo, hi = confint_proportions_2indep(2, 3, 1, 2, method="newcomb", compare="diff")
    assert (sql["diff"], sql["ci_low"], sql["ci_high"]) == pytest.approx((1 / 6, lo, hi))
    assert bool(sql["small"])  # 2 tasks without sql
    agg = fit.loc[("task_type", "agg", "sql")]  # t1, t2 use it (2/2); t3 does not (0/1)
    assert (agg["n_using"], agg["accuracy_using"], agg["accuracy_not_using"]) == (2, 1.0, 0.0)
    assert set(fit.index.get_level_values("group_by")) == {"all", "task_type", "difficulty"}


def test_without_difficulty_every_table_is_pooled_only(run, tmp_path):
    bare = da.load_run(run.path)
    bare.tasks = bare.tasks.drop(columns="difficulty")
    for table in (tr.variants(bare), tr.transitions(bare), tr.loops(bare), tr.recovery(bare),
                  tr.step_latency(bare), tr.solve_curve(bare), tr.conformance(bare)):
        assert table["difficulty"].astype(str).unique().tolist() == ["all"]
    assert set(tr.tool_fit(bare)["group_by"]) == {"all", "task_type"}


def test_bad_steps_are_left_out_with_a_note(tmp_path):
    steps = [("t1", 1, U, "A", "", "", 1), ("t1", 1, P, "A", "", "", 1),  # repeated step_id
             ("t1", 2, E, "A", "sql", "q", 1), ("t9", 1, E, "A", "", "", 1)]  # unknown task
    run = da.load_run(write_run(tmp_path, steps=steps, tasks=[("t1", "Easy", "agg", 1.0, 0, 1,
                                                               1.0)]))
    with pytest.warns(StatisticsWarning) as caught:
        v = pooled(tr.variants(run))
    text = " ".join(str(w.message) for w in caught)
    assert "1 step(s) repeating a step_id" in text and "1 step(s) of tasks absent" in text
    assert v["pattern"].tolist() == [arrow(U, E)]  # the first row of step 1 kept


def test_several_runs_give_one_table_per_run(run, tmp_path):
    other = da.load_run(write_run(tmp_path, run_id="other"))
    runs = da.load_runs([run.path, other.path])
    with warnings.catch_warnings():
        warnings.simplefilter("error", category=da.tables.PooledRunsWarning)
        lp = tr.loops(runs)
    assert lp.columns[0] == "run_id"
    assert lp[lp["difficulty"] == "all"][["run_id", "n_with_loop"]].values.tolist() == [
        ["hand", 1], ["other", 1]]


def test_a_run_without_trajectory_is_refused_by_name(tmp_path):
    path = write_run(tmp_path)
    (path / "trajectory.csv").unlink()
    with pytest.raises(ValueError, match="needs `trajectory.csv`"):
        tr.variants(da.load_run(path))


SAMPLE_RUNS = Path(__file__).resolve().parents[1] / "data" / "sample_runs"


def test_solve_curve_by_seconds_times_each_run_by_what_it_has(tmp_path):
    """Runs loaded together, one without execution_time: that run is timed by the sum of its
    steps' duration_seconds, as when loaded alone (it was left out)."""
    for name in ("baseline_react", "proposed_aat"):
        shutil.copytree(SAMPLE_RUNS / name, tmp_path / name)
    tasks = pd.read_csv(tmp_path / "baseline_react" / "task_metrics.csv")
    tasks.drop(columns="execution_time").to_csv(tmp_path / "baseline_react" / "task_metrics.csv",
                                                index=False)
    both = tr.solve_curve(da.load_runs([tmp_path / "baseline_react", tmp_path / "proposed_aat"],
                                       progress=False), axis="seconds")
    assert sorted(both["run_id"].unique()) == ["baseline_react", "proposed_aat"]
    base = both[(both["run_id"] == "baseline_react") & (both["difficulty"] == "all")]
    # from the raw files: each task ends at the sum of its steps' durations
    steps = pd.read_csv(tmp_path / "baseline_react" / "trajectory.csv")
    ends = steps.groupby("task_id")["duration_seconds"].sum()
    correct = tasks.set_index("task_id")["final_score"] >= 0.8
    solved_ends = ends[correct.reindex(ends.index).fillna(False).astype(bool)]
    assert base["seconds"].iloc[-1] == pytest.approx(ends.max())
    assert base["n"].iloc[0] == len(ends)
    at = base["seconds"].to_numpy()
    assert base["n_solved"].tolist() == [int((solved_ends <= x + 1e-9).sum()) for x in at]
    alone = tr.solve_curve(da.load_run(tmp_path / "baseline_react"), axis="seconds")
    pd.testing.assert_frame_equal(
        base.drop(columns="run_id").reset_index(drop=True),
        alone[alone["difficulty"] == "all"].reset_index(drop=True)[base.columns.drop("run_id")])


def test_solve_curve_by_seconds_reads_minus_zero_as_zero(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(SAMPLE_RUNS / "proposed_aat", run)
    tasks = pd.read_csv(run / "task_metrics.csv", dtype=str, keep_default_na=False)
    correct = tasks.index[tasks["final_score"].astype(float) >= 0.8][:4]
    tasks.loc[correct, "execution_time"] = ["-0.0", "0.0", "-0.0", "0"]
    tasks.to_csv(run / "task_metrics.csv", index=False)
    c = tr.solve_curve(da.load_run(run), axis="seconds")
    assert not np.signbit(c["seconds"].to_numpy()).any()
    assert c.loc[c["difficulty"] == "all", "seconds"].iloc[0] == 0.0
