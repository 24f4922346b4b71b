"""Repeated runs of one configuration (different random seeds): the variance between repetitions
beside the variance between tasks, and the mean with a standard error clustered by task
(Miller 2024, "Adding Error Bars to Evals", §2.2, §3 and Appendix A).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats as st

from dabench_analysis.schema import require_columns
from dabench_analysis.stats._clustered import _se
from dabench_analysis.stats._descriptive import LOGIT_T, WILSON, bounded_interval, interval_method
from dabench_analysis.stats._inputs import as_float, check_ci, check_frame, warn
from dabench_analysis.stats._results import Interval

_COLUMNS = ["config", "n_runs", "n_seeds", "n_tasks", "n_tasks_dropped", "mean", "se",
            "se_naive", "design_effect", "ci_low", "ci_high", "var_between_repetitions",
            "var_between_tasks", "var_task_means", "repetition_share", "method", "note"]


def _interval(mean: float, se: float, n: int, ci: float, how: str) -> Interval:
    """The package's interval rule with the clustered SE and G − 1 = n_tasks − 1 df; NaN
    with a note when not estimable (n < 2, no SE, zero SE)."""
    if how in (LOGIT_T, WILSON) and 0 <= mean <= 1:
        return bounded_interval(mean, se, n=n, ci=ci, df=n - 1)
    if n < 2 or not np.isfinite(se) or se <= 0:
        return Interval(np.nan, np.nan, "t", "n < 2 or zero standard error: not estimable")
    half = st.t.ppf(0.5 + ci / 2, n - 1) * se
    return Interval(mean - half, mean + half, "t")


def _one_config(x: np.ndarray, ci: float, how: str) -> dict:
    """x: (n_tasks, K) complete scores of one configuration."""
    n, k = x.shape
    task_means = x.mean(axis=1)
    mean = float(task_means.mean()) if n else np.nan
    v_means = float(task_means.var(ddof=1)) if n >= 2 else np.nan
    v_rep = float(x.var(axis=1, ddof=1).mean()) if k >= 2 and n else np.nan
    ok = np.isfinite(v_means) and np.isfinite(v_rep)
    v_task = max(0.0, v_means - v_rep / k) if ok else np.nan
    share = min(1.0, (v_rep / k) / v_means) if ok and v_means > 0 else np.nan
    clusters = np.repeat(np.arange(n), k)
    se = _se(x.ravel(), clusters, "cr1")
    se_naive = _se(x.ravel(), None, "clt")
    lo, hi, method, note = _interval(mean, se, n, ci, how)
    deff = (se / se_naive) ** 2 if np.isfinite(se) and np.isfinite(se_naive) and se_naive > 0 \
        else np.nan
    return {"n_runs": k, "n_tasks": n, "mean": mean, "se": se, "se_naive": se_naive,
            "design_effect": deff, "ci_low": lo, "ci_high": hi,
            "var_between_repetitions": v_rep, "var_between_tasks": v_task,
            "var_task_means": v_means, "repetition_share": share,
            "method": f"clustered by task (CR1); {method} interval, df = n_tasks − 1",
            "interval_note": note if n >= 2 else ""}


def _merge(tasks: pd.DataFrame, configs: pd.DataFrame, metric: str) -> tuple[pd.DataFrame, list]:
    require_columns(tasks, ["run_id", "task_id", metric])
    require_columns(configs, ["run_id", "config", "seed"], what="configs")
    dup = configs["run_id"][configs["run_id"].duplicated()]
    if len(dup):
        raise ValueError(f"configs lists run {dup.iloc[0]!r} more than once")
    notes = []
    declared = configs[configs["config"].notna()]
    undeclared = sorted(set(tasks["run_id"].dropna().astype(str))
                        - set(declared["run_id"].astype(str)))
    if undeclared:
        notes.append(f"{len(undeclared)} run(s) without a configuration left out: "
                     f"{', '.join(undeclared[:5])}{' ...' if len(undeclared) > 5 else ''}")
    cfg = declared.assign(run_id=declared["run_id"].astype(str))[["run_id", "config", "seed"]]
    long = pd.DataFrame({"run_id": tasks["run_id"].astype(str).to_numpy(),
                         "task_id": tasks["task_id"].astype(str).to_numpy(),
                         "value": as_float(tasks[metric], metric).to_numpy()})
    key = long[["run_id", "task_id"]]
    if key.duplicated().any():
        r, t = key[key.duplicated()].iloc[0]
        raise ValueError(f"task {t!r} appears twice in run {r!r}")
    return long.merge(cfg, on="run_id", how="inner"), notes


def repetition_variance(tasks: pd.DataFrame, configs: pd.DataFrame, *,
                        metric: str = "final_score", ci: float = 0.95,
                        bounded: bool | None = None) -> pd.DataFrame:
    """Per configuration: variance between repetitions and between tasks, and the mean with a
    standard error clustered by task.

    Parameters
    ----------
    tasks : DataFrame
        Long: one row per run and task with ``run_id``, ``task_id`` and ``metric`` (a [0, 1]
        score, a flag, seconds or tokens).
    configs : DataFrame
        One row per run: ``run_id``, ``config`` (str; missing = the run declares none and is
        left out with a warning), ``seed`` (the repetition: a number or a label, only told
        apart; may be missing), as
        :func:`dabench_analysis.load.run_configs` gives it.
    metric : str
        Column to summarise.
    ci : float
        Level of the interval of the mean.
    bounded : bool or None
        Whether ``metric`` is a [0, 1] quantity (None: the catalogue decides, see
        :func:`dabench_analysis.stats._descriptive.interval_method`).

    Returns
    -------
    DataFrame
        One row per configuration (sorted by name): ``config``, ``n_runs`` (K repetitions),
        ``n_seeds`` (distinct declared seeds), ``n_tasks`` (n: tasks every repetition has, with a
        value), ``n_tasks_dropped``, ``mean`` (of the per-task means x̂_i), ``se`` (clustered by
        task), ``se_naive`` (the n·K scores as if independent, Miller Eq. 1),
        ``design_effect`` ((se/se_naive)²), ``ci_low``, ``ci_high``,
        ``var_between_repetitions`` (σ̂², the mean over tasks of the variance across
        repetitions), ``var_between_tasks`` (Var(x) = Var(x̂_i) − σ̂²/K, at least 0),
        ``var_task_means`` (Var(x̂_i), ddof = 1), ``repetition_share`` ((σ̂²/K)/Var(x̂_i), the
        share of the mean's variance due to repetition noise), ``method``, ``note``.

    Raises
    ------
    ValueError
        Missing columns, a run listed twice in ``configs``, a task twice in one run, ``ci``
        outside (0, 1).

    Notes
    -----
    With scores s_ik of task i in repetition k (K repetitions, n tasks), x̂_i = (1/K) Σ_k s_ik.
    Miller (2024, §3): Var(x̂_i) = Var(x) + σ²/K, where Var(x) is the variance of the tasks'
    true means and σ² = E[σ_i²] the variance between repetitions; σ̂² = (1/(n(K − 1)))
    Σ_i Σ_k (s_ik − x̂_i)² (App. C without clusters) and Var(x) is estimated by the method of
    moments, floored at 0. The standard error treats each task as a cluster of its K scores
    (Miller §2.2 and App. A): SE² = G/(G − 1) · Σ_i (Σ_k e_ik)²/(nK)² with e_ik = s_ik − mean
    and G = n clusters (CR1, :func:`dabench_analysis.stats.clustered_se`), which for complete
    data equals Var(x̂_i)/n. The interval follows the package's rule for the metric
    (:func:`dabench_analysis.stats.mean_summary`): logit t for [0, 1] scores and flags (inside
    [0, 1]; the Clopper–Pearson bound with n tasks when every score is 0 or 1), t otherwise,
    with the clustered SE and n − 1 degrees of freedom (G − 1, Cameron & Miller 2015). One
    repetition: σ̂² is not estimable (NaN, with a note) and SE is the CLT SE of the tasks.
    Tasks that some repetition lacks or leaves missing are dropped for that configuration.

    References
    ----------
    Miller, E. (2024). Adding Error Bars to Evals: A Statistical Approach to Language Model
    Evaluations. arXiv:2411.00640, §2.2, §3, Appendix A and C.
    Cameron, A. C., Miller, D. L. (2015). A practitioner's guide to cluster-robust inference.
    Journal of Human Resources 50(2), 317–372.

    Examples
    --------
    >>> t = pd.DataFrame({"run_id": ["r1"] * 3 + ["r2"] * 3, "task_id": ["a", "b", "c"] * 2,
    ...                   "final_score": [0.9, 0.5, 0.1, 0.7, 0.5, 0.3]})
    >>> c = pd.DataFrame({"run_id": ["r1", "r2"], "config": ["x", "x"], "seed": [1, 2]})
    >>> out = repetition_variance(t, c).iloc[0]
    >>> round(float(out["var_between_repetitions"]), 4), round(float(out["var_task_means"]), 4)
    (0.0133, 0.09)
    >>> round(float(out["se"]), 4)  # sqrt(0.09 / 3)
    0.1732
    """
    check_ci(ci)
    tasks = check_frame(tasks)
    long, notes = _merge(tasks, configs, metric)
    how = interval_method(tasks, metric, bounded=bounded)
    rows = []
    for name, sub in long.groupby("config", sort=True):
        wide = sub.pivot(index="task_id", columns="run_id", values="value")
        complete = wide.notna().all(axis=1)
        x = wide[complete].to_numpy(dtype=float)
        row = {"config": name, **_one_config(x, ci, how),
               "n_seeds": int(sub.drop_duplicates("run_id")["seed"].nunique()),
               "n_tasks_dropped": int((~complete).sum())}
        seeds = sub.drop_duplicates("run_id")["seed"].dropna()
        own = [f"{row['n_tasks_dropped']} task(s) dropped: not complete in every repetition"
               if row["n_tasks_dropped"] else "",
               "1 repetition: between-repetition variance not estimable" if x.shape[1] < 2 else "",
               "two repetitions share a seed" if seeds.duplicated().any() else "",
               "fewer than 2 tasks: standard error undefined" if x.shape[0] < 2 else "",
               row.pop("interval_note")]
        row["note"] = "; ".join(n for n in own if n)
        notes += [f"{name}: {n}" for n in own if n]
        rows.append(row)
    warn(notes)
    return pd.DataFrame(rows, columns=_COLUMNS).astype(
        {"n_runs": "int64", "n_seeds": "int64", "n_tasks": "int64", "n_tasks_dropped": "int64"})
