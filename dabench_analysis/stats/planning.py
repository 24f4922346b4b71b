"""Planning a study from a pilot run: the variance between tasks and within tasks (between
repeated trials) estimated from the run (Miller 2024, "Adding Error Bars to Evals", §3), and
from them the detectable difference, the tasks and the trials per task a difference needs at a
power (noncentral t, as R ``power.t.test``; :mod:`._power` solves).
"""

from __future__ import annotations

import math

import numpy as np

from dabench_analysis.stats._power import _t_power, min_detectable_effect, required_n

__all__ = ["plan_study", "variance_components"]

_MAX_TRIALS = 10**6


def variance_components(task_means, trial_vars, n_trials) -> dict:
    """Between-task and within-task (trial) variance of one run, or of the difference of two
    runs on the tasks they share (Miller 2024, §3).

    Parameters
    ----------
    task_means : array-like, shape (n_tasks,) or (n_tasks, 2)
        Each task's mean outcome over its trials (e.g. the success rate), one column per run;
        two columns: the paired difference, column 0 − column 1.
    trial_vars : array-like, same shape
        Each task's variance across its trials (ddof = 1; NaN with one trial).
    n_trials : array-like, same shape
        Trials per task (K_i >= 1).

    Returns
    -------
    dict
        ``var_task_means`` (Var(x̄_i) or Var(d_i), ddof = 1), ``var_within`` (σ²: the mean
        trial variance, summed over the runs; NaN when no task has two trials), ``var_between``
        (ω² = Var(x̄_i) − σ² mean(1/K_i), at least 0; with no σ², Var(x̄_i) itself),
        ``n_trials`` (harmonic mean of K_i), ``n_tasks``.

    Notes
    -----
    Miller (2024) §3: with K trials of each task, Var(x̄_i) = Var(x_i) + E[σ_i²]/K, so the
    between-task variance is the variance of the task means less the trial noise; the mean of
    the unbiased per-task trial variances estimates E[σ_i²]. For two runs sharing tasks
    (§4, paired), the same holds for d_i = x̄_Ai − x̄_Bi with σ² = σ_A² + σ_B².

    Examples
    --------
    >>> vc = variance_components([1.0, 0.5, 0.0, 0.5], [0.0, 0.5, 0.0, 0.5], [2, 2, 2, 2])
    >>> [round(vc[k], 4) for k in ("var_task_means", "var_within", "var_between")]
    [0.1667, 0.25, 0.0417]
    """
    m = np.asarray(task_means, dtype=float)
    v = np.asarray(trial_vars, dtype=float)
    k = np.asarray(n_trials, dtype=float)
    if m.ndim == 1:
        m, v, k = m[:, None], v[:, None], k[:, None]
    d = m[:, 0] - m[:, 1] if m.shape[1] == 2 else m[:, 0]
    n = d.size
    var_means = float(np.var(d, ddof=1)) if n >= 2 else np.nan
    has = np.isfinite(v).any(axis=0)
    within = float(sum(np.nanmean(v[:, r]) for r in range(v.shape[1]))) if has.all() \
        else np.nan
    noise = float(sum(np.nanmean(v[:, r]) * np.mean(1 / k[:, r]) for r in range(v.shape[1]))) \
        if has.all() else 0.0
    return {"var_task_means": var_means, "var_within": within,
            "var_between": max(0.0, var_means - noise) if np.isfinite(var_means) else np.nan,
            "n_trials": float(k.size / np.sum(1 / k)), "n_tasks": n}


def _trials_needed(delta: float, n: int, vb: float, vw: float, alpha: float, power: float,
                   paired: bool) -> tuple[float, str]:
    """Smallest K (trials per task) at which n tasks reach the power, by bisection (power
    grows with K towards its value at var_between alone)."""
    if not np.isfinite(vw):
        return np.nan, "trials needed: no task has two trials, the within-task variance is " \
                       "not estimable"

    def pw(k):
        return _t_power(delta / math.sqrt(vb + vw / k), n, alpha, "two-sided", paired)

    if vw == 0 or pw(1) >= power:
        return 1.0, ""
    if vb == 0 and pw(_MAX_TRIALS) < power or vb > 0 and \
            _t_power(delta / math.sqrt(vb), n, alpha, "two-sided", paired) < power:
        return np.inf, (f"trials needed: no number of trials reaches power {power:g} with "
                        f"{n} tasks (the between-task variance alone is too large): add tasks")
    lo, hi = 1, 2
    while pw(hi) < power:
        lo, hi = hi, 2 * hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if pw(mid) >= power else (mid, hi)
    return float(hi), ""


def plan_study(delta: float, *, n_tasks: int, n_trials: float, var_between: float,
               var_within: float, plan_trials: float | None = None, alpha: float = 0.05,
               power: float = 0.8, paired: bool = True) -> dict:
    """Detectable difference now, and the tasks or trials a difference needs.

    Parameters
    ----------
    delta : float
        The difference to detect (outcome units: a share of tasks for success); NaN gives
        NaN needs.
    n_tasks : int
        Tasks of the pilot (paired: shared tasks; two-sample: per run).
    n_trials : float
        Trials per task of the pilot (K).
    var_between, var_within : float
        ω² and σ² of :func:`variance_components` (σ² NaN: not estimable, taken as 0 for the
        current design, whose per-task variance is then ω² itself).
    plan_trials : float, optional
        Trials per task for ``tasks_needed`` (default ``n_trials``).
    alpha, power : float
        Two-sided level and power.
    paired : bool
        One-sample t on the per-task values or differences (R ``type = "paired"`` or
        ``"one.sample"``); False: two independent samples of ``n_tasks`` each
        (``"two.sample"``), the variances per run.

    Returns
    -------
    dict
        ``sd_per_task`` (sqrt(ω² + σ²/K)), ``detectable_diff`` (at ``n_tasks`` and K),
        ``power_now`` (to detect ``delta`` at ``n_tasks`` and K), ``tasks_needed`` (at
        ``plan_trials``), ``trials_needed`` (at ``n_tasks``; inf when no K suffices),
        ``note``.

    Notes
    -----
    The per-task variance with K trials is ω² + σ²/K (Miller 2024, §3 and §5, Eq. 9, which
    uses normal quantiles); here the power is the noncentral t's (R ``power.t.test(...,
    strict = TRUE)``: both tails), through :func:`._power.required_n` and
    :func:`._power.min_detectable_effect`.

    Examples
    --------
    >>> p = plan_study(0.1, n_tasks=50, n_trials=1, var_between=0.09, var_within=float("nan"))
    >>> p["tasks_needed"]  # R: power.t.test(delta=.1, sd=.3, power=.8, type="paired",
    ... #                       strict=TRUE)$n = 72.58
    73
    """
    vw = 0.0 if not np.isfinite(var_within) else var_within
    sd = math.sqrt(var_between + vw / n_trials)
    k_plan = n_trials if plan_trials is None else plan_trials
    sd_plan = math.sqrt(var_between + vw / k_plan)
    notes = []
    mde = float(min_detectable_effect(n_tasks, alpha=alpha, power=power, paired=paired)
                .effect_size.iloc[0]) * sd if n_tasks >= 2 else np.nan
    ok = np.isfinite(delta) and delta != 0 and sd_plan > 0
    need = required_n(abs(delta) / sd_plan, alpha=alpha, power=power, paired=paired) \
        if ok else None
    now = _t_power(abs(delta) / sd, n_tasks, alpha, "two-sided", paired) \
        if ok and sd > 0 and n_tasks >= 2 else np.nan
    trials, note = _trials_needed(abs(delta), n_tasks, var_between, var_within, alpha, power,
                                  paired) if ok and n_tasks >= 2 else (np.nan, "")
    notes.append(note)
    return {"sd_per_task": sd, "detectable_diff": mde, "power_now": now,
            "tasks_needed": int(need.n.iloc[0]) if need is not None and
            np.isfinite(need.n.iloc[0]) else np.nan,
            "trials_needed": trials, "plan_trials": k_plan,
            "note": "; ".join(n for n in notes if n)}
