"""Two runs' trajectories and a sweep's per-run rows on repeated trials (issue 35 item 2): each
task one value, the mean over its trials, paired on tasks (Wilcoxon signed-rank, t-interval of
the mean difference), instead of one row per trace (which paired every trial of a task with
every trial of the other run's). The real tau-bench run (gpt-4o airline, trimmed: 4 traces of
3 tasks keep their messages) against a copy with two traces cut short; expected values from the
raw JSON and scipy.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

import dabench_analysis as da
from dabench_analysis import trajectory as tr

TAU = Path(__file__).parent / "data" / "harness" / "tau-bench" / "gpt-4o-airline.json"
CUT = {(0, 0): 20, (3, 2): 30}  # (task_id, trial) -> messages kept in the copy


def _quiet(func, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return func(*args, **kwargs)


def _task_means(records: list[dict]) -> dict[int, float]:
    """Each task's mean number of messages over its trials that have messages."""
    per: dict[int, list[int]] = {}
    for r in records:
        if r.get("traj"):
            per.setdefault(r["task_id"], []).append(len(r["traj"]))
    return {t: float(np.mean(v)) for t, v in per.items()}


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    raw = json.loads(TAU.read_text())
    cut = [dict(r, traj=r["traj"][:CUT[(r["task_id"], r["trial"])]])
           if (r["task_id"], r["trial"]) in CUT and r.get("traj") else r for r in raw]
    path = tmp_path_factory.mktemp("tau") / "gpt-4o-airline-cut.json"
    path.write_text(json.dumps(cut))
    return raw, cut, _quiet(da.load_run, TAU), _quiet(da.load_run, path)


def test_compare_pairs_task_means(pair):
    raw, cut, base, prop = pair
    mb, mp = _task_means(raw), _task_means(cut)
    tasks = sorted(mb)
    d = np.array([mp[t] - mb[t] for t in tasks])  # [-6, -6, 0]: tasks 0, 3, 6
    row = _quiet(tr.compare, base, prop).set_index("measure").loc["steps_per_task"]
    assert row["n_pairs"] == len(tasks) == 3
    assert row["baseline"] == pytest.approx(np.mean([mb[t] for t in tasks]))
    assert row["diff"] == pytest.approx(d.mean())
    lo, hi = stats.t.interval(0.95, len(d) - 1, loc=d.mean(), scale=stats.sem(d))
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((lo, hi), rel=1e-9)
    # the zero dropped, two tied differences of -6: as R's wilcox.test with ties, the normal
    # approximation with continuity correction (scipy: method="approx", correction=True)
    assert row["p_value"] == pytest.approx(stats.wilcoxon(
        d, zero_method="wilcox", correction=True, method="approx").pvalue)
    assert row["method"].startswith("task means over trials; Wilcoxon")
    canonical = _quiet(tr.compare, base, prop).set_index("measure").loc["canonical_share"]
    assert canonical["n_pairs"] == 0 and canonical["note"] == "no stage column"


def test_per_run_on_trials_is_task_means(pair):
    raw, _, base, _ = pair
    means = np.array(list(_task_means(raw).values()))  # 29, 24, 36
    runs = _quiet(da.load_runs, [TAU])
    row = _quiet(tr.per_run, runs).iloc[0]
    assert row["n_tasks"] == 3
    assert row["mean_steps"] == pytest.approx(means.mean())
    lo, hi = stats.t.interval(0.95, len(means) - 1, loc=means.mean(), scale=stats.sem(means))
    assert (row["mean_steps_ci_low"], row["mean_steps_ci_high"]) == pytest.approx((lo, hi))
    assert "task means over trials" in row["note"]


def test_variant_changes_on_trials_pair_tasks(pair):
    raw, cut, base, prop = pair
    v = _quiet(tr.variant_changes, base, prop)
    assert (v["n_pairs"] == 3).all()
    assert v["method"].str.startswith("task means over trials").all()
    # each variant's share: the mean over tasks of the share of the task's trials taking it
    assert v.loc[v["difficulty"] == "all", "share_baseline"].sum() == pytest.approx(1.0)


def _cr1_p(y: np.ndarray, x: np.ndarray, clusters: np.ndarray) -> float:
    """The slope's two-sided p of y ~ 1 + x with the CR1 covariance written out (Cameron &
    Miller 2015, eq. 11 with c = G/(G-1) (n-1)/(n-k)), t with G - 1 df."""
    X = np.column_stack([np.ones(len(y)), x.astype(float)])
    b = np.linalg.lstsq(X, y, rcond=None)[0]
    e = y - X @ b
    bread = np.linalg.inv(X.T @ X)
    groups = np.unique(clusters)
    meat = sum(np.outer(X[clusters == g].T @ e[clusters == g], X[clusters == g].T @ e[clusters == g])
               for g in groups)
    n, k, G = len(y), X.shape[1], len(groups)
    v = G / (G - 1) * (n - 1) / (n - k) * bread @ meat @ bread
    return float(2 * stats.t.sf(abs(b[1] / np.sqrt(v[1, 1])), G - 1))


def test_variant_p_values_on_trials_are_task_clustered(pair):
    """tau-bench (50 tasks x 4 trials): the "(no steps)" variant (records without messages in
    the trimmed copy) against the 4 traces with messages; each other variant is one trace of
    one task, so untestable (NaN)."""
    raw, _, base, _ = pair
    y = np.array([float(r["reward"] >= 0.5) for r in raw])
    x = np.array([not r.get("traj") for r in raw])
    clusters = np.array([r["task_id"] for r in raw])
    v = _quiet(tr.variants, base, by="tool").set_index("pattern")
    assert v.loc["(no steps)", "n_tasks"] == x.sum()
    assert v.loc["(no steps)", "p_value"] == pytest.approx(_cr1_p(y, x, clusters), rel=1e-9)
    assert v.drop(index="(no steps)")["p_value"].isna().all()
    assert "task-clustered Wald t (CR1, G−1 df)" in v["method"].iloc[0]


def test_no_wald_p_where_one_side_has_no_variation():
    """A variant whose traces all failed (4 traces in 2 tasks) against others with successes:
    the Wald SE would take the variant's side as exact (statsmodels gives p ~ 1e-17 here);
    Fisher over traces gives 0.3 (scipy below). No p is given."""
    from dabench_analysis.trajectory._trials import clustered_wald

    clusters = np.repeat(np.arange(50), 4)
    y = (np.arange(200) % 5 < 2).astype(float)  # 40 % successes
    x = np.zeros(200, dtype=bool)
    x[[0, 1, 4, 5]] = True
    y[x] = 0.0
    k = int(y[~x].sum())
    assert stats.fisher_exact([[0, 4], [k, 196 - k]]).pvalue > 0.1
    assert np.isnan(clustered_wald(y, x, clusters))
    y[0] = 1.0  # one success among them: a p is given, equal to the formula's
    assert clustered_wald(y, x, clusters) == pytest.approx(_cr1_p(y, x, clusters), rel=1e-9)
