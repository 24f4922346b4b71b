"""Sweeps (issue 17): rank intervals, the leaderboard, all-pairs comparisons, flips, items,
repetitions and run configurations. Every expected value is computed here from its definition
(a plain bootstrap loop, the Holm/BH/Wilson/logit-t/McNemar formulas, Miller's clustered SE),
never by the package."""

from __future__ import annotations

import itertools
import json
import math
import re
import shutil
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import special
from scipy import stats as st

import dabench_analysis as da
from dabench_analysis.load._config import CONFIG_FILE, read_run_config, run_configs
from dabench_analysis.stats import StatisticsWarning
from dabench_analysis.stats.ranking import rank_intervals, rank_ties
from dabench_analysis.stats.repetitions import repetition_variance
from dabench_analysis.tables import sweep

SAMPLE_RUNS = Path(__file__).resolve().parents[1] / "data" / "sample_runs"

Z95 = st.norm.ppf(0.975)


def _sweep(rng, n_runs=4, n_tasks=12, binary=False) -> pd.DataFrame:
    skill = np.linspace(0.6, -0.6, n_runs)
    logit = rng.normal(0, 1, n_tasks)[None, :] + skill[:, None] + rng.normal(0, 1, (n_runs, n_tasks))
    score = 1 / (1 + np.exp(-logit))
    if binary:
        score = (score > 0.5).astype(float)
    return pd.DataFrame({
        "run_id": np.repeat([f"r{i}" for i in range(n_runs)], n_tasks),
        "task_id": np.tile([f"t{j:02d}" for j in range(n_tasks)], n_runs),
        "difficulty": np.tile(["Easy", "Medium", "Hard", "Extreme"] * (n_tasks // 4), n_runs),
        "final_score": score.ravel(),
        "total_tokens": rng.integers(100, 5000, n_runs * n_tasks),
        "execution_time": rng.gamma(2.0, 10.0, n_runs * n_tasks)})


def _wide(t: pd.DataFrame, col: str = "final_score") -> pd.DataFrame:
    return t.pivot(index="task_id", columns="run_id", values=col)


# --- rank intervals: a plain loop bootstrap written from the definition ---------------------

def _loop_rank_intervals(x: np.ndarray, n_boot: int, seed: int, ci: float, higher=True):
    """Replicate b draws rng.integers(0, n, size=(n_boot, n))[b]; rank 1 = best, ties get the
    average rank: rank_i = 1 + #{j: m_j better} + #{j != i: m_j == m_i}/2; the interval is the
    ceil(B·α/2)-th and ceil(B·(1 − α/2))-th smallest bootstrap rank (Hyndman–Fan type 1)."""
    n, k = x.shape
    idx = np.random.default_rng(seed).integers(0, n, size=(n_boot, n))
    boot = np.empty((n_boot, k))
    for b in range(n_boot):
        m = [float(np.mean([x[i, r] for i in idx[b]])) for r in range(k)]
        for r in range(k):
            better = sum(1 for j in range(k) if (m[j] > m[r] if higher else m[j] < m[r]))
            same = sum(1 for j in range(k) if j != r and m[j] == m[r])
            boot[b, r] = 1 + better + same / 2
    srt = np.sort(boot, axis=0)
    a = (1 - ci) / 2
    lo = srt[math.ceil(n_boot * a) - 1]
    hi = srt[math.ceil(n_boot * (1 - a)) - 1]
    return lo, hi


@pytest.mark.parametrize("binary", [False, True])
@pytest.mark.parametrize("higher", [True, False])
def test_rank_intervals_equal_a_loop_bootstrap(rng, binary, higher):
    t = _sweep(rng, binary=binary)
    w = _wide(t)
    lo, hi = _loop_rank_intervals(w.to_numpy(), 301, 11, 0.95, higher)  # B·α/2 = 7.525
    out = rank_intervals(w, n_boot=301, seed=11, higher_is_better=higher)
    assert out["run_id"].tolist() == list(w.columns)
    assert out["rank_low"].tolist() == lo.tolist()
    assert out["rank_high"].tolist() == hi.tolist()
    m = w.mean().to_numpy()
    assert out["estimate"].to_numpy() == pytest.approx(m, abs=1e-12)
    expected = [1 + sum((mj > mi) if higher else (mj < mi) for mj in m)
                + (sum(mj == mi for mj in m) - 1) / 2 for mi in m]
    assert out["rank"].tolist() == expected
    assert (out["rank_low"] <= out["rank"]).all() and (out["rank"] <= out["rank_high"]).all()
    assert set(out[["n_boot", "seed", "n_tasks"]].iloc[0]) == {301, 11, 12}
    assert "tasks resampled jointly" in out["method"].iloc[0]


def test_rank_intervals_identical_runs_are_tied_exactly():
    """Two runs with the same scores have the same mean in every replicate: rank 1.5 each."""
    w = pd.DataFrame({"a": [0.1, 0.7, 0.3, 0.9, 0.35], "b": [0.1, 0.7, 0.3, 0.9, 0.35],
                      "c": [0.0, 0.1, 0.0, 0.2, 0.05]})
    out = rank_intervals(w, n_boot=200)
    assert out["rank"].tolist() == [1.5, 1.5, 3.0]
    assert out["rank_low"].tolist() == [1.5, 1.5, 3.0]
    assert out["rank_high"].tolist() == [1.5, 1.5, 3.0]


def test_rank_ties_by_hand():
    # [1,2] overlaps [2,4]; [5,5] touches nothing; [2,4] overlaps [1,2] and [3,3]
    assert rank_ties([1, 2, 3, 5], [2, 4, 3, 5]).tolist() == [True, True, True, False]


@pytest.mark.parametrize(("bad", "message"), [
    (pd.DataFrame({"a": [0.1, np.nan], "b": [0.2, 0.3]}), "missing or infinite values .*runs a"),
    (pd.DataFrame(), "need at least one"),
    (pd.DataFrame([[0.1, 0.2]], columns=["a", "a"]), "appears twice")])
def test_rank_intervals_bad_input(bad, message):
    with pytest.raises(ValueError, match=message):
        rank_intervals(bad)


def test_rank_intervals_bad_n_boot():
    with pytest.raises(ValueError, match="n_boot"):
        rank_intervals(pd.DataFrame({"a": [0.1, 0.2]}), n_boot=0)


# --- leaderboard -----------------------------------------------------------------------------

def _wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson (1927): (p + z²/2n ± z·sqrt(p(1−p)/n + z²/4n²)) / (1 + z²/n)."""
    p = k / n
    centre, half = p + z**2 / (2 * n), z * math.sqrt(p * (1 - p) / n + z**2 / (4 * n**2))
    return (centre - half) / (1 + z**2 / n), (centre + half) / (1 + z**2 / n)


def test_leaderboard_values_from_closed_forms(rng):
    t = _sweep(rng)
    t = t[~((t["run_id"] == "r3") & (t["task_id"] == "t11"))]  # r3 lacks one task
    with pytest.warns(StatisticsWarning, match="3 row"):
        board = sweep.leaderboard(t, n_boot=301, seed=3)
    shared = t[t["task_id"] != "t11"]
    w = _wide(shared)
    lo, hi = _loop_rank_intervals(w.to_numpy(), 301, 3, 0.95)
    by = board.set_index("run_id")
    for j, run in enumerate(w.columns):
        x = w[run].to_numpy()
        row = by.loc[run]
        assert row["n_shared"] == 11
        assert row["n_own"] == (11 if run == "r3" else 12)
        k = int((x >= 0.8).sum())
        assert row["answer_accuracy"] == pytest.approx(k / 11, abs=1e-12)
        assert (row["answer_accuracy_ci_low"], row["answer_accuracy_ci_high"]) == \
            pytest.approx(_wilson(k, 11), abs=1e-9)
        # logit t: expit(logit(m) ± t_{n-1} · (s/√n) / (m(1 − m)))
        m, se = x.mean(), x.std(ddof=1) / math.sqrt(11)
        half = st.t.ppf(0.975, 10) * se / (m * (1 - m))
        assert (row["mean_score_ci_low"], row["mean_score_ci_high"]) == pytest.approx(
            (special.expit(special.logit(m) - half), special.expit(special.logit(m) + half)),
            abs=1e-9)
        tok = shared.loc[shared["run_id"] == run, "total_tokens"].to_numpy(float)
        half_t = st.t.ppf(0.975, 10) * tok.std(ddof=1) / math.sqrt(11)
        assert (row["mean_tokens_ci_low"], row["mean_tokens_ci_high"]) == pytest.approx(
            (tok.mean() - half_t, tok.mean() + half_t), rel=1e-9)
        assert (row["rank_low"], row["rank_high"]) == (lo[j], hi[j])
    assert board["mean_score"].is_monotonic_decreasing
    overlap = [any(by.loc[r, "rank_low"] <= by.loc[s, "rank_high"]
                   and by.loc[s, "rank_low"] <= by.loc[r, "rank_high"]
                   for s in by.index if s != r) for r in by.index]
    assert by["tied"].tolist() == overlap
    assert set(board["accuracy_method"]) == {"Wilson"} and set(board["score_method"]) == {"logit t"}


def test_leaderboard_without_cost_columns_warns_and_gives_nan(rng):
    t = _sweep(rng).drop(columns=["total_tokens", "execution_time"])
    with pytest.warns(StatisticsWarning, match="total_tokens not in tasks.*execution_time not"):
        board = sweep.leaderboard(t, n_boot=50)
    assert board[["mean_tokens", "mean_runtime_s_ci_high"]].isna().all().all()


def test_leaderboard_refuses_runs_without_shared_tasks():
    t = pd.DataFrame({"run_id": ["a", "b"], "task_id": ["t1", "t2"], "final_score": [0.5, 0.6]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StatisticsWarning)
        with pytest.raises(ValueError, match="share no task"):
            sweep.leaderboard(t)


def test_leaderboard_accepts_a_runs_object():
    runs = da.load_runs(SAMPLE_RUNS)
    board = sweep.leaderboard(runs, n_boot=200)
    assert board["run_id"].tolist() == ["proposed_aat", "baseline_react"]
    assert board["n_shared"].tolist() == [80, 80]
    # the sample runs' accuracies: 72 and 61 of 80 tasks with final_score >= 0.8
    acc = runs.tasks.groupby("run_id")["final_score"].apply(lambda s: int((s >= 0.8).sum()))
    assert board["answer_accuracy"].tolist() == [acc["proposed_aat"] / 80,
                                                 acc["baseline_react"] / 80]


def test_duplicate_task_in_a_run_is_an_error():
    t = pd.DataFrame({"run_id": ["a", "a"], "task_id": ["t1", "t1"], "final_score": [0.5, 0.6]})
    with pytest.raises(ValueError, match="'t1' appears more than once in run 'a'"):
        sweep.leaderboard(t)


# --- pairwise ----------------------------------------------------------------------------------

def _holm(p):
    """Holm (1979): p_(i) -> max_{j <= i} min(1, (m − j + 1) p_(j))."""
    p = np.asarray(p, float)
    m, order = p.size, np.argsort(p, kind="stable")
    adj, run = np.empty(m), 0.0
    for rank, i in enumerate(order):
        run = max(run, min(1.0, (m - rank) * p[i]))
        adj[i] = run
    return adj


def _bh(p):
    """Benjamini–Hochberg (1995): p_(i) -> min_{j >= i} min(1, m p_(j) / j)."""
    p = np.asarray(p, float)
    m, order = p.size, np.argsort(p, kind="stable")
    adj, run = np.empty(m), 1.0
    for rank in range(m - 1, -1, -1):
        i = order[rank]
        run = min(run, m * p[i] / (rank + 1))
        adj[i] = run
    return adj


def _exact_signed_rank_p(d):
    """Two-sided exact p of Wilcoxon's signed-rank test (no ties, no zeros) by enumerating all
    2^n sign patterns: 2·min(P(T+ <= t), P(T+ >= t)), capped at 1 (R wilcox.test, exact)."""
    ranks = st.rankdata(np.abs(d))
    t_obs = ranks[d > 0].sum()
    totals = np.array([sum(r for r, s in zip(ranks, signs, strict=True) if s)
                       for signs in itertools.product([0, 1], repeat=len(d))])
    return min(1.0, 2 * min(np.mean(totals <= t_obs), np.mean(totals >= t_obs)))


def _mcnemar_exact(b, c):
    """2·P(X <= min(b, c)), X ~ Binomial(b + c, 1/2), capped at 1; p = 1 without discordance."""
    if b + c == 0:
        return 1.0
    return min(1.0, 2 * sum(math.comb(b + c, i) for i in range(min(b, c) + 1)) / 2 ** (b + c))


def test_pairwise_tests_and_adjustments_by_hand(rng):
    t = _sweep(rng, n_runs=4, n_tasks=12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StatisticsWarning)
        pairs = sweep.pairwise(t)
    assert len(pairs) == 6
    w = _wide(t)
    for _, row in pairs.iterrows():
        a, b = w[row["run_a"]].to_numpy(), w[row["run_b"]].to_numpy()
        d = a - b
        assert row["n_shared"] == 12
        assert row["mean_diff"] == pytest.approx(d.mean(), abs=1e-12)
        half = st.t.ppf(0.975, 11) * d.std(ddof=1) / math.sqrt(12)
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((d.mean() - half,
                                                                 d.mean() + half), abs=1e-12)
        assert row["p_wilcoxon"] == pytest.approx(_exact_signed_rank_p(d), abs=1e-12)
        pf, fp = int(((a >= 0.8) & (b < 0.8)).sum()), int(((a < 0.8) & (b >= 0.8)).sum())
        assert (row["n_pass_fail"], row["n_fail_pass"]) == (pf, fp)
        assert row["p_mcnemar"] == pytest.approx(_mcnemar_exact(pf, fp), abs=1e-12)
    assert pairs["p_holm"].to_numpy() == pytest.approx(_holm(pairs["p_wilcoxon"]), abs=1e-12)
    assert pairs["p_bh"].to_numpy() == pytest.approx(_bh(pairs["p_wilcoxon"]), abs=1e-12)
    assert pairs["p_mcnemar_holm"].to_numpy() == pytest.approx(_holm(pairs["p_mcnemar"]),
                                                               abs=1e-12)
    assert pairs["p_mcnemar_bh"].to_numpy() == pytest.approx(_bh(pairs["p_mcnemar"]), abs=1e-12)
    # runs ordered by mean score, best first: every run_a is listed before its run_b
    order = w.mean().sort_values(ascending=False).index.tolist()
    assert all(order.index(a) < order.index(b) for a, b in pairs[["run_a", "run_b"]].values)


def test_pairwise_uses_each_pairs_own_intersection():
    t = pd.DataFrame({"run_id": ["a"] * 3 + ["b"] * 2 + ["c"] * 1,
                      "task_id": ["t1", "t2", "t3", "t1", "t2", "t3"],
                      "final_score": [0.9, 0.8, 0.7, 0.1, 0.2, 0.3]})
    with pytest.warns(StatisticsWarning, match="1 pair\\(s\\) share no task"):
        pairs = sweep.pairwise(t)
    n = {frozenset((r.run_a, r.run_b)): r.n_shared for r in pairs.itertuples()}
    assert n == {frozenset("ab"): 2, frozenset("ac"): 1, frozenset("bc"): 0}
    untestable = pairs[pairs["n_shared"] == 0].iloc[0]
    assert np.isnan(untestable["p_wilcoxon"]) and np.isnan(untestable["p_holm"])
    # the two testable pairs: m = 2 in the correction (R: p.adjust(c(p1, p2, NA), "holm"))
    ok = pairs[pairs["n_shared"] > 0]
    assert ok["p_holm"].to_numpy() == pytest.approx(_holm(ok["p_wilcoxon"]), abs=1e-12)


# --- flips and items ------------------------------------------------------------------------

def _small() -> pd.DataFrame:
    return pd.DataFrame({
        "run_id": ["a"] * 4 + ["b"] * 4 + ["c"] * 3,
        "task_id": ["t1", "t2", "t3", "t4"] * 2 + ["t1", "t2", "t3"],
        "difficulty": ["Easy", "Medium", "Hard", "Extreme"] * 2 + ["Easy", "Medium", "Hard"],
        "final_score": [0.9, 0.85, 0.1, 0.0, 0.95, 0.2, 0.8, 0.1, 0.99, 0.3, 0.79]})


def test_flips_and_flip_counts_by_hand():
    t = _small()
    f = sweep.flips(t, "a", "b")
    # a: pass pass fail fail; b: pass fail pass fail -> t2 solved by a only, t3 by b only
    assert f[["task_id", "difficulty", "flip"]].astype(str).values.tolist() == [
        ["t2", "Medium", "solved by a only"], ["t3", "Hard", "solved by b only"]]
    assert f["correct_a"].tolist() == [True, False] and f["correct_b"].tolist() == [False, True]
    counts = sweep.flip_counts(t).set_index(["run_a", "run_b"])
    ab = counts.loc[("a", "b")] if ("a", "b") in counts.index else counts.loc[("b", "a")]
    assert ab[["n_shared", "n_both_pass", "n_both_fail", "n_flips"]].tolist() == [4, 1, 1, 2]
    assert len(counts) == 3
    with pytest.raises(ValueError, match="no run 'zz'"):
        sweep.flips(t, "a", "zz")
    # default: the two best runs by mean final score (c 0.693, a 0.4625, b 0.5125 -> c, b)
    pd.testing.assert_frame_equal(sweep.flips(t), sweep.flips(t, "c", "b"))
    with pytest.warns(StatisticsWarning, match="flips need two runs; tasks has 1"):
        assert sweep.flips(t[t["run_id"] == "a"]).empty


def test_items_by_hand():
    it = sweep.items(_small()).set_index("task_id")
    # t1: a, b, c pass (3/3); t2: a only (1/3); t3: b only (0.8 >= 0.8; c 0.79 fails) 1/3;
    # t4: neither of a, b (0/2)
    assert it.loc[["t1", "t2", "t3", "t4"], "n_runs"].tolist() == [3, 3, 3, 2]
    assert it.loc[["t1", "t2", "t3", "t4"], "n_solved"].tolist() == [3, 1, 1, 0]
    assert it.loc[["t1", "t2", "t3", "t4"], "solved_by"].tolist() == ["all", "some", "some",
                                                                      "none"]
    assert it.loc["t2", "outcome_variance"] == pytest.approx(1 / 3 * 2 / 3, abs=1e-12)
    assert it.loc["t4", "mean_score"] == pytest.approx(0.05, abs=1e-12)
    assert str(it.loc["t4", "difficulty"]) == "Extreme"
    assert sweep.items(_small())["task_id"].tolist()[0] == "t4"  # hardest first


def test_task_ids_sort_naturally_in_items_and_flips():
    """Numbers inside task ids compare as numbers: task_5 < task_10 < task_45 (as text,
    "task_45" < "task_5"); t07 and t7 have the same key and are ordered by their text."""
    ids = ["task_45", "task_5", "task_10", "t7", "t07"]
    t = pd.DataFrame({"run_id": ["a"] * 5 + ["b"] * 5, "task_id": ids * 2,
                      "final_score": [0.9] * 5 + [0.1] * 5})  # every task flips a -> b
    assert sweep.items(t)["task_id"].tolist() == ["t07", "t7", "task_5", "task_10", "task_45"]
    assert sweep.flips(t, "a", "b")["task_id"].tolist() == ["t07", "t7", "task_5", "task_10",
                                                            "task_45"]


def test_leaderboard_names_the_bootstrap_seed_boot_seed(rng):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StatisticsWarning)
        board = sweep.leaderboard(_sweep(rng), n_boot=50, seed=7)
    assert "seed" not in board and board["boot_seed"].tolist() == [7] * 4
    assert board[["threshold", "ci", "n_boot"]].iloc[0].tolist() == [0.8, 0.95, 50]


def _copy_task_file(src: Path, dest: Path) -> Path:
    dest.mkdir(parents=True)
    shutil.copy(src / "task_metrics.csv", dest / "task_metrics.csv")
    return dest


def test_check_sweep_refuses_two_folders_with_one_run_id(tmp_path):
    # both folders carry run_id 'baseline_react' in task_metrics.csv
    old = _copy_task_file(SAMPLE_RUNS / "baseline_react", tmp_path / "runs" / "oldver")
    new = _copy_task_file(SAMPLE_RUNS / "baseline_react", tmp_path / "runs" / "baseline_react")
    prop = _copy_task_file(SAMPLE_RUNS / "proposed_aat", tmp_path / "runs" / "proposed_aat")
    with pytest.warns(UserWarning, match="skipping the later one"):
        runs = da.load_runs([old, new, prop], progress=False)
    assert runs.run_ids == ["baseline_react", "proposed_aat"]  # load_runs alone goes on
    want = (f"run_id 'baseline_react' is in two run folders, {old} and {new}: a sweep ranks "
            "runs by run_id; give each run folder its own run_id")
    with pytest.raises(ValueError) as err:
        sweep.check_sweep(runs)
    assert str(err.value) == want


def test_check_sweep_needs_two_loadable_runs(tmp_path):
    runs = da.load_runs([SAMPLE_RUNS / "baseline_react", SAMPLE_RUNS / "pending_run"],
                        progress=False)
    pending = re.escape(str(SAMPLE_RUNS / "pending_run"))
    with pytest.raises(ValueError, match=r"^a sweep needs at least 2 loadable runs; loaded 1 "
                                         rf"\(baseline_react\); not loaded: {pending} \(not "
                                         "evaluated"):
        sweep.check_sweep(runs)
    assert sweep.check_sweep(da.load_runs(SAMPLE_RUNS, progress=False)) is None  # 2 runs


def test_shared_tasks_and_counts():
    t = _small()
    with pytest.warns(StatisticsWarning, match="2 row"):
        sh = sweep.shared_tasks(t)
    assert sorted(set(sh["task_id"])) == ["t1", "t2", "t3"] and len(sh) == 9
    counts = sh.attrs["task_counts"]
    assert counts[["run_id", "n_own", "n_shared"]].values.tolist() == [
        ["a", 4, 3], ["b", 4, 3], ["c", 3, 3]]


# --- repetitions (Miller 2024) ----------------------------------------------------------------

def _reps(rng, configs=(("x", 3), ("y", 2)), n_tasks=10):
    rows, cfg, r = [], [], 0
    for name, k in configs:
        for s in range(k):
            rid = f"{name}_{s}"
            cfg.append({"run_id": rid, "config": name, "seed": s})
            for j in range(n_tasks):
                rows.append({"run_id": rid, "task_id": f"t{j}",
                             "final_score": float(np.clip(rng.normal(0.3 + 0.05 * j, 0.15),
                                                          0, 1))})
            r += 1
    return pd.DataFrame(rows), pd.DataFrame(cfg)


def test_repetition_variance_matches_millers_formulas(rng):
    t, c = _reps(rng)
    out = repetition_variance(t, c).set_index("config")
    import statsmodels.api as sm

    for name, k in (("x", 3), ("y", 2)):
        x = t[t["run_id"].str.startswith(name)].pivot(index="task_id", columns="run_id",
                                                       values="final_score").to_numpy()
        n = x.shape[0]
        s, g = x.ravel(), np.repeat(np.arange(n), k)
        e = s - s.mean()
        # Miller App. A (CR0): Σ_c (Σ_i e_ic)² / N², times G/(G − 1) (CR1)
        cr0 = sum(e[g == c_].sum() ** 2 for c_ in range(n)) / s.size**2
        se = math.sqrt(cr0 * n / (n - 1))
        row = out.loc[name]
        assert row["se"] == pytest.approx(se, abs=1e-12)
        # statsmodels: OLS on an intercept, cluster-robust by task (default small-sample CR1)
        fit = sm.OLS(s, np.ones_like(s)).fit(cov_type="cluster", cov_kwds={"groups": g})
        assert row["se"] == pytest.approx(float(fit.bse[0]), rel=1e-9)
        # §3: σ̂² = (1/(n(K−1))) Σ_i Σ_k (s_ik − x̂_i)², Var(x̂) = Var(x) + σ²/K
        xhat = x.mean(axis=1)
        sigma2 = ((x - xhat[:, None]) ** 2).sum() / (n * (k - 1))
        assert row["var_between_repetitions"] == pytest.approx(sigma2, abs=1e-12)
        assert row["var_task_means"] == pytest.approx(xhat.var(ddof=1), abs=1e-12)
        assert row["var_between_tasks"] == pytest.approx(max(0, xhat.var(ddof=1) - sigma2 / k),
                                                         abs=1e-12)
        assert row["se_naive"] == pytest.approx(s.std(ddof=1) / math.sqrt(s.size), abs=1e-12)
        m = s.mean()
        half = st.t.ppf(0.975, n - 1) * se / (m * (1 - m))
        assert (row["ci_low"], row["ci_high"]) == pytest.approx(
            (special.expit(special.logit(m) - half), special.expit(special.logit(m) + half)),
            abs=1e-12)
        assert (row["n_runs"], row["n_tasks"]) == (k, n)


def test_repetition_variance_one_repetition_and_undeclared_runs(rng):
    t, c = _reps(rng, configs=(("x", 2), ("y", 1)))
    c.loc[len(c)] = {"run_id": "z_0", "config": None, "seed": None}
    t = pd.concat([t, t[t["run_id"] == "y_0"].assign(run_id="z_0")])
    with pytest.warns(StatisticsWarning, match="1 run\\(s\\) without a configuration.*"
                                               "y: 1 repetition"):
        out = repetition_variance(t, c)
    assert out["config"].tolist() == ["x", "y"]
    assert np.isnan(out.loc[1, "var_between_repetitions"])
    assert np.isnan(out.loc[1, "var_between_tasks"])


def test_leaderboard_by_config_ranks_configuration_means(rng):
    t, c = _reps(rng, configs=(("x", 3), ("y", 2), ("w", 2)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StatisticsWarning)
        board = sweep.leaderboard_by_config(t, c, n_boot=301, seed=5)
    per_cfg = t.assign(config=t["run_id"].str[0]).groupby(["task_id", "config"])["final_score"] \
        .mean().unstack()[["w", "x", "y"]]
    lo, hi = _loop_rank_intervals(per_cfg.to_numpy(), 301, 5, 0.95)
    by = board.set_index("config")
    for j, name in enumerate(["w", "x", "y"]):
        assert (by.loc[name, "rank_low"], by.loc[name, "rank_high"]) == (lo[j], hi[j])
        assert by.loc[name, "mean"] == pytest.approx(per_cfg[name].mean(), abs=1e-12)
        assert by.loc[name, "se"] == pytest.approx(per_cfg[name].std(ddof=1) / math.sqrt(10),
                                                   abs=1e-12)
    assert board["rank"].is_monotonic_increasing


def test_leaderboard_by_config_without_declarations_is_empty_with_a_warning(rng):
    t, c = _reps(rng)
    with pytest.warns(StatisticsWarning, match="no run declares a configuration"):
        out = sweep.leaderboard_by_config(t, c.assign(config=None))
    assert out.empty and "rank_low" in out


# --- run configurations -------------------------------------------------------------------------

@pytest.fixture
def two_runs(tmp_path):
    dirs = []
    for name in ("baseline_react", "proposed_aat"):
        dirs.append(shutil.copytree(SAMPLE_RUNS / name, tmp_path / name))
    return dirs


def test_run_configs_from_file_and_columns(two_runs):
    base, prop = two_runs
    (base / CONFIG_FILE).write_text(json.dumps({"config": "react", "seed": 4, "extra": [1]}))
    tasks = da.load_runs([base, prop]).tasks.copy()
    tasks["config"] = np.where(tasks["run_id"] == "proposed_aat", "aat", "react")
    tasks["seed"] = np.where(tasks["run_id"] == "proposed_aat", "2", "4")
    before = {p: sorted(x.name for x in p.iterdir()) for p in two_runs}
    out = run_configs([base, prop], tasks)
    assert out.astype(object).values.tolist() == [["baseline_react", "react", 4, CONFIG_FILE],
                                                  ["proposed_aat", "aat", 2, "task_metrics"]]
    assert str(out["seed"].dtype) == "Int64"
    assert {p: sorted(x.name for x in p.iterdir()) for p in two_runs} == before  # nothing written
    runs = da.load_runs([base, prop])
    assert run_configs(runs).astype(object).values.tolist() == [
        ["baseline_react", "react", 4, CONFIG_FILE], ["proposed_aat", pd.NA, pd.NA, ""]]


@pytest.mark.parametrize(("text", "message"), [
    ("{not json", "not valid JSON"),
    ('["a", 1]', "expected a JSON object"),
    ('{"config": 3}', "key 'config' must be a string"),
    ('{"config": "a", "seed": true}', "key 'seed' must be a whole number"),
    ('{"config": "a", "seed": ["a"]}', "key 'seed' must be a whole number or a label"),
    ('{"config": "a", "seed": "run\\u0007a"}', "key 'seed' holds a control character"),
    # issue 24 item 6: a float in an integer field, integers beyond int64, NaN / Infinity,
    # each named by file and key (Python's json accepts NaN, Infinity and 1e400 as floats)
    ('{"config": "a", "seed": 2.5}', "key 'seed': 2.5 is a float"),
    ('{"config": "a", "seed": 3.0}', "key 'seed': 3.0 is a float"),
    ('{"config": "a", "seed": 1e20}', "key 'seed': 1e20 is a float"),
    ('{"config": "a", "seed": 9223372036854775808}', "key 'seed': 9223372036854775808 is "
                                                      "outside the 64-bit integer range"),
    ('{"config": "a", "seed": -9223372036854775809}', "key 'seed': -9223372036854775809 is "
                                                       "outside the 64-bit"),
    ('{"config": "a", "seed": ' + "9" * 400 + "}", "key 'seed': an integer of 400 digits is "
                                                   "outside the 64-bit"),
    ('{"config": "a", "seed": NaN}', "key 'seed': NaN, Infinity .* are not JSON numbers"),
    ('{"config": "a", "seed": -Infinity}', "key 'seed': NaN, Infinity"),
    ('{"config": "a", "params": {"temperature": [0.7, Infinity]}}',
     r"key 'params.temperature\[1\]': NaN, Infinity"),
    ('{"config": "a", "params": {"top_p": 1e400}}', "key 'params.top_p': NaN, Infinity")])
def test_bad_run_config_names_the_file(two_runs, text, message):
    path = two_runs[0] / CONFIG_FILE
    path.write_text(text)
    with pytest.raises(ValueError, match=f"{CONFIG_FILE}: {message}"):
        run_configs(two_runs)


def test_run_config_limits_of_a_seed_and_a_bom(two_runs):
    path = two_runs[0] / CONFIG_FILE
    for seed in (2**63 - 1, -(2**63), 0):  # the 64-bit range is closed
        path.write_text(json.dumps({"config": "a", "seed": seed}))
        assert read_run_config(path) == {"config": "a", "seed": seed}
    path.write_bytes(b'\xef\xbb\xbf{"config": "a", "seed": 3}')  # a BOM, as the CSV readers
    assert read_run_config(path) == {"config": "a", "seed": 3}
    out = run_configs(two_runs)
    assert out["seed"].astype(object).tolist() == [3, pd.NA]


def test_a_seed_column_of_floats_or_beyond_int64_is_named(two_runs):
    tasks = da.load_runs(two_runs).tasks.copy()
    for value, message in (("3.0", "whole number written without a decimal point"),
                           (str(2**63), "outside the 64-bit integer range")):
        tasks["seed"] = value
        with pytest.raises(ValueError, match=f"task_metrics of run 'baseline_react': .*{message}"):
            run_configs(two_runs, tasks)


def test_run_config_conflicts_warn(two_runs):
    path = two_runs[0] / CONFIG_FILE
    path.write_text('{"config": "a", "seed": 3}')
    assert read_run_config(path) == {"config": "a", "seed": 3}
    tasks = da.load_runs(two_runs).tasks.assign(config="b")
    with pytest.warns(UserWarning, match="config differ.*the file is used"):
        out = run_configs(two_runs, tasks)
    assert out["config"].tolist() == ["a", "b"]


def test_config_column_that_varies_within_a_run_is_an_error(two_runs):
    tasks = da.load_runs(two_runs).tasks.copy()
    tasks["config"] = ["a", "b"] * (len(tasks) // 2)
    with pytest.raises(ValueError, match="run 'baseline_react': column 'config' must hold one"):
        run_configs(two_runs, tasks)


def _csv_column(run: Path, column: str) -> dict[str, float]:
    """task_id -> a number column of a run's task_metrics.csv, read with the csv module."""
    import csv

    with (run / "task_metrics.csv").open(newline="", encoding="utf-8") as fh:
        return {r["task_id"]: float(r[column]) for r in csv.DictReader(fh) if r[column]}


def test_a_seed_that_is_a_label_is_kept_as_a_label(two_runs, tmp_path):
    """Issue 33, item 6: a text seed ("baseline-a", as some harnesses write) failed the whole
    sweep; it is a label: kept, with one warning, and the repetitions are told apart by it."""
    base, prop = two_runs
    for run, seed in ((base, "baseline-a"), (prop, " baseline-b ")):
        (run / CONFIG_FILE).write_text(json.dumps({"config": "react", "seed": seed}))
    assert read_run_config(prop / CONFIG_FILE) == {"config": "react", "seed": "baseline-b"}
    runs = da.load_runs([base, prop])
    with pytest.warns(UserWarning, match=r"2 run\(s\) declare a seed that is a label, not a "
                                         r"number \('baseline-a', 'baseline-b'\)"):
        configs = run_configs(runs)
    assert configs["seed"].tolist() == ["baseline-a", "baseline-b"]
    assert str(configs["seed"].dtype) == "string"
    out = repetition_variance(runs.tasks, configs).iloc[0]
    a, b = _csv_column(base, "final_score"), _csv_column(prop, "final_score")
    shared = sorted(set(a) & set(b))
    assert (out["n_runs"], out["n_seeds"], out["n_tasks"]) == (2, 2, len(shared))
    assert out["mean"] == pytest.approx(np.mean([(a[t] + b[t]) / 2 for t in shared]), abs=1e-12)
    assert "share a seed" not in out["note"]
    table = sweep.repetition_table(runs, configs)  # the sweep report's tables
    assert table[["config", "n_runs", "n_seeds"]].values.tolist() == [["react", 2, 2]]
    board = sweep.leaderboard_by_config(runs, configs, n_boot=50)
    assert board["mean"].iloc[0] == pytest.approx(out["mean"], abs=1e-12)
    (prop / CONFIG_FILE).write_text(json.dumps({"config": "react", "seed": "baseline-a"}))
    with pytest.warns(UserWarning):
        configs = run_configs(runs)
    with pytest.warns(StatisticsWarning, match="two repetitions share a seed"):
        assert repetition_variance(runs.tasks, configs)["n_seeds"].tolist() == [1]
    (prop / CONFIG_FILE).write_text(json.dumps({"config": "react", "seed": 3}))  # mixed
    with pytest.warns(UserWarning, match=r"1 run\(s\) declare a seed that is a label"):
        assert run_configs(runs)["seed"].tolist() == ["baseline-a", "3"]
    from dabench_analysis.report._context import sweep_context

    with pytest.warns(UserWarning, match="is a label"):  # the sweep report starts
        ctx = sweep_context(runs, {"threshold": 0.8, "n_boot": 50, "seed": 0},
                            out=tmp_path / "sweep", quiet=True)
    assert ctx.subject.startswith("2 runs")


def test_a_seed_column_of_labels_is_kept(two_runs):
    tasks = da.load_runs(two_runs).tasks.copy()
    tasks["seed"] = np.where(tasks["run_id"] == "proposed_aat", "7", "baseline-a")
    with pytest.warns(UserWarning, match=r"1 run\(s\) declare a seed that is a label"):
        out = run_configs(two_runs, tasks)
    assert out["seed"].tolist() == ["baseline-a", "7"]  # "7" in a text column is the number
    tasks["seed"] = "7"
    assert run_configs(two_runs, tasks)["seed"].astype(object).tolist() == [7, 7]
