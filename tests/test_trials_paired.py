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
from dabench_analysis.tables import trajectory as tr

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
