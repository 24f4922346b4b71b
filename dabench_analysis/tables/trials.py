"""Repeated trials of a task: pass@k and pass^k per run (or configuration), flakiness, and the
pairing checks a sweep shows before any paired statistic.

Trials come from the harness (Inspect epochs, tau-bench trials: the ``trial`` column, one row per
task and trial) or from eval-v2 runs that declare a configuration and seed (``run_config.json``;
:func:`dabench_analysis.load.run_configs`): the runs of one configuration are its trials.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dabench_analysis import schema
from dabench_analysis.load._config import run_configs
from dabench_analysis.load._sweep import Runs
from dabench_analysis.schema import require_columns
from dabench_analysis.schema.needs import needs
from dabench_analysis.stats._inputs import check_ci, warn
from dabench_analysis.stats._proportions import proportion_ci
from dabench_analysis.stats._trials import pass_k_summary
from dabench_analysis.tables._common import correct_mask, takes_run

__all__ = ["flakiness", "pairing_checks", "pass_k", "trial_outcomes"]


def _configs(runs, configs: pd.DataFrame | None) -> pd.DataFrame | None:
    """The runs' declared configurations (a Runs without ``configs=``: read from it)."""
    if configs is None and isinstance(runs, Runs) and len(runs):
        configs = run_configs(runs.runs, runs.tasks)
    if configs is None or configs["config"].isna().all():
        return None
    require_columns(configs, ["run_id", "config"], what="configs")
    return configs


@takes_run(pools=False)
def trial_outcomes(tasks, *, configs: pd.DataFrame | None = None,
                   threshold: float = schema.SUCCESS_THRESHOLD) -> pd.DataFrame:
    """Trials and successes of each task of each run (or configuration).

    Parameters
    ----------
    tasks : DataFrame, Run or Runs
        Task rows with ``task_id`` and ``final_score`` ([0, 1]); ``run_id`` (one run without
        it) and ``trial`` (one trial per task and run without it) when present.
    configs : DataFrame, optional
        ``run_id`` -> ``config`` (:func:`dabench_analysis.load.run_configs`): the runs of a
        configuration are its trials. Runs without a configuration stay runs.
    threshold : float
        A trial succeeds when ``final_score >= threshold`` (:func:`schema.correct`); default 0.8.

    Returns
    -------
    DataFrame
        One row per unit and task: ``unit`` (the run, or the configuration), ``unit_kind``
        (``"run"`` or ``"configuration"``), ``task_id``, ``n`` (trials with a score), ``c``
        (successful trials).

    Examples
    --------
    >>> t = pd.DataFrame({"task_id": ["a", "a", "b", "b"], "trial": [1, 2, 1, 2],
    ...                   "final_score": [1.0, 0.0, 1.0, 1.0]})
    >>> trial_outcomes(t)[["task_id", "n", "c"]].values.tolist()
    [['a', 2, 1], ['b', 2, 2]]
    """
    ok = correct_mask(tasks, threshold=threshold)
    run = tasks["run_id"].astype("string") if "run_id" in tasks else \
        pd.Series("run", index=tasks.index, dtype="string")
    unit, kind = run.copy(), pd.Series("run", index=tasks.index)
    if configs is not None:
        cfg = configs.assign(run_id=configs["run_id"].astype(str)).set_index("run_id")["config"]
        mapped = pd.Series(cfg.reindex(run.astype(str)).to_numpy(), index=tasks.index)
        has = mapped.notna()
        unit[has] = mapped[has].astype(str)
        kind[has] = "configuration"
    frame = pd.DataFrame({"unit": unit.astype(str), "unit_kind": kind,
                          "task_id": tasks["task_id"].astype(str),
                          "success": ok.astype("Float64").to_numpy(float, na_value=np.nan)})
    frame = frame[~np.isnan(frame["success"].to_numpy())]
    out = frame.groupby(["unit", "unit_kind", "task_id"], sort=False).agg(
        n=("success", "size"), c=("success", "sum")).reset_index()
    return out.astype({"n": "int64", "c": "int64"})


@needs("task_id", "final_score", uses=("trial",), trials="several")
def pass_k(tasks, *, configs: pd.DataFrame | None = None, ks=None,
           threshold: float | None = None, n_boot: int = 2000, seed: int = 0,
           ci: float = 0.95) -> pd.DataFrame:
    """pass@k and pass^k for k = 1 ... n per run (or configuration), with bootstrap intervals
    over tasks.

    Parameters
    ----------
    tasks : Run, Runs or DataFrame
        Runs with repeated trials (``trial``: Inspect epochs, tau-bench trials), or eval-v2
        runs declaring a configuration (a Runs: read with
        :func:`dabench_analysis.load.run_configs`; a frame: pass ``configs``).
    configs : DataFrame, optional
        ``run_id`` -> ``config``: the runs of a configuration are its trials.
    ks : sequence of int, optional
        The k to report; default 1 ... the most trials a task has.
    threshold : float, optional
        A trial succeeds when ``final_score >= threshold``; default 0.8.
    n_boot, seed : int
        Bootstrap resamples and seed (tasks resampled; BCa).
    ci : float
        Level of the intervals.

    Returns
    -------
    DataFrame
        One row per run (or configuration) and k: ``run_id`` (the run, or the configuration's
        name), ``unit`` (``run`` or ``configuration``), ``k``, ``pass_at_k`` with
        ``pass_at_k_ci_low``/``_ci_high``, ``pass_hat_k`` with ``pass_hat_k_ci_low``/
        ``_ci_high``, ``n_tasks`` (tasks with at least k trials), ``n_trials`` (fewest trials
        among them), ``threshold``, ``method``, ``note``.

    Raises
    ------
    ValueError
        No ``task_id`` or ``final_score``; a threshold outside (0, 1].

    Notes
    -----
    Per task with n trials and c successes, pass@k = 1 - C(n - c, k) / C(n, k) (Chen et al.
    2021) and pass^k = C(c, k) / C(n, k) (Yao et al. 2024), unbiased; the run's value is the
    mean over tasks (:func:`dabench_analysis.stats._trials.pass_k_summary`). A task with fewer
    than k trials is left out of k's mean, and the ``note`` says how many.

    References
    ----------
    Chen, M. et al. (2021). Evaluating Large Language Models Trained on Code. arXiv:2107.03374.
    Yao, S. et al. (2024). tau-bench. arXiv:2406.12045.

    Examples
    --------
    >>> t = pd.DataFrame({"task_id": ["a", "a", "b", "b"], "trial": [1, 2, 1, 2],
    ...                   "final_score": [1.0, 0.0, 1.0, 1.0]})
    >>> pass_k(t, n_boot=200)[["k", "pass_at_k", "pass_hat_k", "n_tasks"]].values.tolist()
    [[1.0, 0.75, 0.75, 2.0], [2.0, 1.0, 0.5, 2.0]]
    """
    check_ci(ci)
    configs = _configs(tasks, configs)
    kw = {} if threshold is None else {"threshold": threshold}
    counts = trial_outcomes(tasks, configs=configs, **kw)
    used = kw.get("threshold", _threshold(tasks))
    parts = []
    for (unit, kind), g in counts.groupby(["unit", "unit_kind"], sort=False):
        out = pass_k_summary(g["n"].to_numpy(), g["c"].to_numpy(), ks=ks, n_boot=n_boot,
                             seed=seed, ci=ci)
        out.insert(0, "unit", kind)
        out.insert(0, "run_id", unit)
        parts.append(out.assign(threshold=used))
    cols = ["run_id", "unit", "k", "pass_at_k", "pass_at_k_ci_low", "pass_at_k_ci_high",
            "pass_hat_k", "pass_hat_k_ci_low", "pass_hat_k_ci_high", "n_tasks", "n_trials",
            "threshold", "method", "note"]
    return pd.concat(parts, ignore_index=True)[cols] if parts else pd.DataFrame(columns=cols)


def _threshold(runs) -> float:
    """The threshold used when none is given: 0.8 (a Run carries none)."""
    return schema.SUCCESS_THRESHOLD


@needs("task_id", "final_score", uses=("trial",), trials="several")
def flakiness(tasks, *, configs: pd.DataFrame | None = None, threshold: float | None = None,
              ci: float = 0.95) -> pd.DataFrame:
    """Per run (or configuration): the share of tasks whose trials disagree (some succeed,
    some fail), with a Wilson interval.

    Parameters
    ----------
    tasks : Run, Runs or DataFrame
        As :func:`pass_k`.
    configs, threshold
        As :func:`pass_k`.
    ci : float
        Level of the Wilson interval.

    Returns
    -------
    DataFrame
        One row per run (or configuration): ``run_id``, ``unit``, ``n_tasks`` (tasks with at
        least two trials), ``n_flaky`` (0 < successes < trials), ``flaky_share``, ``ci_low``,
        ``ci_high``, ``n_always`` (every trial succeeds), ``n_never`` (none does),
        ``n_single`` (tasks with one trial: left out), ``threshold``, ``method``.

    Notes
    -----
    A flaky task is one the agent solves on some trials and not on others (the gap between
    pass^1 and pass^k comes from such tasks). The interval is Wilson's for a proportion of
    tasks (:func:`dabench_analysis.stats.proportion_ci`).

    Examples
    --------
    >>> t = pd.DataFrame({"task_id": ["a", "a", "b", "b", "c", "c"], "trial": [1, 2] * 3,
    ...                   "final_score": [1.0, 0.0, 1.0, 1.0, 0.0, 0.0]})
    >>> flakiness(t)[["n_tasks", "n_flaky", "n_always", "n_never"]].values.tolist()
    [[3, 1, 1, 1]]
    """
    check_ci(ci)
    configs = _configs(tasks, configs)
    kw = {} if threshold is None else {"threshold": threshold}
    counts = trial_outcomes(tasks, configs=configs, **kw)
    rows = []
    for (unit, kind), g in counts.groupby(["unit", "unit_kind"], sort=False):
        multi = g[g["n"] >= 2]
        flaky = int(((multi["c"] > 0) & (multi["c"] < multi["n"])).sum())
        p = proportion_ci([flaky], [len(multi)], ci=ci).iloc[0] if len(multi) else None
        rows.append({"run_id": unit, "unit": kind, "n_tasks": len(multi), "n_flaky": flaky,
                     "flaky_share": p["proportion"] if p is not None else np.nan,
                     "ci_low": p["ci_low"] if p is not None else np.nan,
                     "ci_high": p["ci_high"] if p is not None else np.nan,
                     "n_always": int((multi["c"] == multi["n"]).sum()),
                     "n_never": int((multi["c"] == 0).sum()),
                     "n_single": int((g["n"] < 2).sum()),
                     "threshold": kw.get("threshold", _threshold(tasks)), "method": "Wilson"})
    warn([f"{r['run_id']}: no task with two or more trials: flakiness undefined"
          for r in rows if r["n_tasks"] == 0])
    return pd.DataFrame(rows)


@takes_run(pools=False)
def pairing_checks(tasks) -> pd.DataFrame:
    """Before any paired statistic: per run, what pairing tasks across runs would hide.

    Parameters
    ----------
    tasks : DataFrame or Runs
        Stacked task rows with ``run_id`` and ``task_id`` (``trial`` when present).

    Returns
    -------
    DataFrame
        One row per run (first appearance order): ``run_id``, ``n_rows``, ``n_tasks``
        (distinct task ids), ``n_duplicates`` (rows repeating a task id, or a task id and
        trial, already in the run), ``n_only_here`` (tasks no other run has), ``trials_min``
        and ``trials_max`` (trials per task), ``n_uneven`` (tasks with fewer trials than the
        run's most), ``mixed`` (True when some runs have repeated trials and others one: their
        tasks would pair a mean over trials with a single outcome).

    Examples
    --------
    >>> t = pd.DataFrame({"run_id": ["a", "a", "a", "b"], "task_id": ["t1", "t1", "t2", "t1"],
    ...                   "trial": [1, 2, 1, 1]})
    >>> pairing_checks(t)[["run_id", "n_tasks", "n_only_here", "trials_max", "n_uneven"]]
      run_id  n_tasks  n_only_here  trials_max  n_uneven
    0      a        2            1           2         1
    1      b        1            0           1         0
    """
    require_columns(tasks, ["run_id", "task_id"])
    key = ["run_id", "task_id"] + (["trial"] if "trial" in tasks else [])
    t = tasks[key].astype("string")
    dup = t.duplicated()
    per_task = t[~dup].groupby(["run_id", "task_id"], sort=False).size().rename("n")
    runs_of = per_task.reset_index().groupby("task_id")["run_id"].nunique()
    rows = []
    for rid in pd.unique(t["run_id"].dropna()):
        mine = per_task.loc[rid]
        rows.append({"run_id": str(rid), "n_rows": int((t["run_id"] == rid).sum()),
                     "n_tasks": len(mine),
                     "n_duplicates": int(dup[t["run_id"] == rid].sum()),
                     "n_only_here": int((runs_of.reindex(mine.index) == 1).sum())
                     if t["run_id"].nunique() > 1 else 0,
                     "trials_min": int(mine.min()), "trials_max": int(mine.max()),
                     "n_uneven": int((mine < mine.max()).sum())})
    out = pd.DataFrame(rows)
    if not out.empty:
        out["mixed"] = (out["trials_max"] > 1).any() & (out["trials_max"] == 1).any()
    return out
