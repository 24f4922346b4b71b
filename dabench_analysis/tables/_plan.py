"""Planning from a pilot: what difference the run(s) at hand can detect, and how many tasks or
trials per task a stated difference needs (:func:`planning`, exposed as
``dabench_analysis.tables.planning``).
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from dabench_analysis import schema
from dabench_analysis.schema import require_columns
from dabench_analysis.schema.needs import needs
from dabench_analysis.stats._inputs import warn
from dabench_analysis.stats.planning import plan_study, variance_components
from dabench_analysis.tables._common import correct_mask, takes_run

__all__ = ["planning"]

_COLUMNS = ["run_a", "run_b", "design", "n_tasks", "trials_per_task", "mean_a", "mean_b", "diff",
            "delta", "var_between", "var_within", "sd_per_task", "detectable_diff",
            "power_now", "plan_trials", "tasks_needed", "trials_needed", "alpha", "power",
            "threshold", "method", "note"]


def _per_task(tasks: pd.DataFrame, threshold: float) -> pd.DataFrame:
    """run_id, task_id -> mean success, trial variance (ddof 1) and trials."""
    require_columns(tasks, ["run_id", "task_id", "final_score"])
    key = ["run_id", "task_id"] + (["trial"] if "trial" in tasks else [])
    dup = tasks[key].astype(str).duplicated()
    if dup.any():
        row = tasks[key].astype(str)[dup].iloc[0].tolist()
        raise ValueError(f"{'/'.join(key)} {row} appears twice: one row per "
                         + ("trial" if "trial" in tasks else "task (no trial column)"))
    ok = correct_mask(tasks, threshold=threshold).astype("Float64").to_numpy(float,
                                                                             na_value=np.nan)
    long = pd.DataFrame({"run_id": tasks["run_id"].astype(str).to_numpy(),
                         "task_id": tasks["task_id"].astype(str).to_numpy(), "ok": ok}).dropna()
    g = long.groupby(["run_id", "task_id"], sort=False)["ok"]
    return pd.DataFrame({"mean": g.mean(), "var": g.var(ddof=1), "k": g.size()})


def _row(a: str, b: str | None, per: pd.DataFrame, delta, plan_trials, alpha, power) -> dict:
    ta = per.loc[a]
    if b is None:
        design, comp = "one-sample", variance_components(ta["mean"], ta["var"], ta["k"])
        n, mean_b = len(ta), np.nan
    else:
        tb = per.loc[b]
        shared = ta.index.intersection(tb.index)
        design = "paired" if len(shared) else "two-sample"
        if len(shared):
            x, y = ta.loc[shared], tb.loc[shared]
            comp = variance_components(np.c_[x["mean"], y["mean"]], np.c_[x["var"], y["var"]],
                                       np.c_[x["k"], y["k"]])
            n = len(shared)
        else:  # independent task sets: per-run variances, averaged
            ca, cb = (variance_components(t["mean"], t["var"], t["k"]) for t in (ta, tb))
            comp = {key: (ca[key] + cb[key]) / 2 for key in ("var_between", "var_within",
                                                              "n_trials")}
            n = min(len(ta), len(tb))
        mean_b = float(tb.loc[shared, "mean"].mean() if len(shared) else tb["mean"].mean())
    mean_a = float(ta.loc[shared, "mean"].mean() if b is not None and len(shared)
                   else ta["mean"].mean())
    diff = mean_a - mean_b
    want = float(delta) if delta is not None else (abs(diff) if b is not None else np.nan)
    res = plan_study(want, n_tasks=n, n_trials=comp["n_trials"],
                     var_between=comp["var_between"], var_within=comp["var_within"],
                     plan_trials=plan_trials, alpha=alpha, power=power,
                     paired=design != "two-sample")
    if b is not None and design == "paired" and len(shared) < len(ta.index.union(tb.index)):
        left = len(ta.index.union(tb.index)) - len(shared)
        res["note"] = "; ".join(x for x in (f"{a} vs {b}: {left} task(s) not in both runs left "
                                            "out", res["note"]) if x)
    return {"run_a": a, "run_b": b, "design": design, "n_tasks": n,
            "trials_per_task": comp["n_trials"], "mean_a": mean_a, "mean_b": mean_b, "diff": diff,
            "delta": want, "var_between": comp["var_between"],
            "var_within": comp["var_within"], **res}


@takes_run(pools=False, trials=True)
@needs("task_id", "final_score", trials="any")
def planning(tasks, *, delta: float | None = None, n_trials: float | None = None,
             power: float = 0.8, alpha: float = 0.05, baseline: str | None = None,
             threshold: float = schema.SUCCESS_THRESHOLD) -> pd.DataFrame:
    """Plan a study from a pilot: the detectable difference at the current numbers of tasks
    and trials, and the tasks or trials per task needed to detect ``delta``.

    Parameters
    ----------
    tasks : DataFrame, Run or Runs
        Task rows with ``run_id``, ``task_id``, ``final_score`` ([0, 1]) and, for repeated
        trials, ``trial`` (Inspect epochs, tau-bench trials; one row per task and trial).
    delta : float, optional
        The difference in accuracy (share of tasks, e.g. 0.05) to detect. Default: for two
        runs their observed difference; for one run none (NaN needs).
    n_trials : float, optional
        Trials per task of the planned study, for ``tasks_needed`` (default: the pilot's).
    power, alpha : float
        Power and two-sided level.
    baseline : str, optional
        Compare each other run with this one; default every pair (one run: one-sample).
    threshold : float
        A trial succeeds when ``final_score >= threshold``; default 0.8.

    Returns
    -------
    DataFrame
        One row per run (one run) or pair: ``run_a``, ``run_b`` (None for one run),
        ``design`` ("one-sample": a run against a fixed accuracy; "paired": runs sharing
        tasks, on the shared ones; "two-sample": no shared task), ``n_tasks`` (shared; per
        run for two-sample),
        ``trials_per_task`` (the pilot's K, harmonic mean over tasks), ``mean_a``, ``mean_b``, ``diff`` (a − b), ``delta``,
        ``var_between`` (ω²), ``var_within`` (σ², per trial; NaN without repeated trials),
        ``sd_per_task`` (sqrt(ω² + σ²/K)), ``detectable_diff`` (the smallest difference
        detected with ``power`` at the pilot's tasks and trials), ``power_now`` (to detect
        ``delta`` now), ``plan_trials``, ``tasks_needed`` (at ``plan_trials`` trials per
        task), ``trials_needed`` (at the pilot's tasks; inf when no number suffices), ``alpha``,
        ``power``, ``threshold``, ``method``, ``note``.

    Raises
    ------
    ValueError
        Missing columns, a row twice, an unknown ``baseline``, alpha or power outside (0, 1).

    Notes
    -----
    Variance components: :func:`dabench_analysis.stats.planning.variance_components`
    (Miller 2024, arXiv:2411.00640, §3; paired: of the per-task differences); power:
    :func:`dabench_analysis.stats.planning.plan_study` (noncentral t, R ``power.t.test``).
    A "one-sample" plan is the precision of one run (detecting a shift from a fixed value).

    Examples
    --------
    >>> t = pd.DataFrame({"run_id": ["a"] * 6 + ["b"] * 6,
    ...                   "task_id": ["t1", "t1", "t2", "t2", "t3", "t3"] * 2,
    ...                   "trial": [1, 2] * 6,
    ...                   "final_score": [1, 1, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0.0]})
    >>> p = planning(t, delta=0.2).iloc[0]
    >>> p["design"], int(p["n_tasks"]), float(p["trials_per_task"]), round(float(p["var_within"]), 4)
    ('paired', 3, 2.0, 0.3333)
    """
    if not 0 < alpha < 1 or not 0 < power < 1:
        raise ValueError(f"alpha and power must be in (0, 1); got {alpha!r}, {power!r}")
    per = _per_task(tasks, threshold)
    runs = list(dict.fromkeys(per.index.get_level_values("run_id")))
    if baseline is not None and str(baseline) not in runs:
        raise ValueError(f"baseline {baseline!r} is not one of the runs: {', '.join(runs)}")
    pairs = [(r, None) for r in runs] if len(runs) == 1 else \
        [(str(baseline), r) for r in runs if r != str(baseline)] if baseline is not None \
        else list(itertools.combinations(runs, 2))
    out = pd.DataFrame([_row(a, b, per, delta, n_trials, alpha, power) for a, b in pairs])
    out["alpha"], out["power"], out["threshold"] = alpha, power, threshold
    out["method"] = ("variance components (Miller 2024 §3); noncentral t, two-sided "
                     "(R power.t.test strict = TRUE)")
    warn(list(dict.fromkeys(n for n in out["note"] if n)))
    return out[_COLUMNS]
