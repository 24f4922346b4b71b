# Over 400 lines (under 500): one concept, the reliability profile and its risk-coverage
# curve, which share the one reading of trials (_trials); most of the length is docstrings.
"""The reliability profile of a run with repeated trials (Rabanser et al. 2026; HAL's
``reliability_eval/``): consistency of outcomes, trajectories and resources across a task's
trials, confidence discrimination and selective prediction, and robustness under the conditions
the harness recorded; one tidy row per metric with a bootstrap interval over tasks.

The formulas are in :mod:`dabench_analysis.stats.consistency`; this module turns a Run (or a
frame) into trials, groups them by task and resamples tasks.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dabench_analysis import schema
from dabench_analysis.load._run import Run
from dabench_analysis.load._sweep import Runs
from dabench_analysis.schema.needs import REPEATED, Skipped, needs
from dabench_analysis.stats import consistency as cs
from dabench_analysis.stats._inputs import check_ci
from dabench_analysis.stats.recorded import cost_recorded
from dabench_analysis.tables._common import as_frame
from dabench_analysis.tables._resample import bounds, counts, draws, interval, ratio
from dabench_analysis.tables.trials import _configs

__all__ = ["COLUMNS", "RESOURCES", "reliability", "risk_coverage"]

#: The table's columns.
COLUMNS = ["run_id", "dimension", "metric", "value", "ci_low", "ci_high", "n_tasks", "n_trials",
           "method", "note"]
#: Resource columns whose spread among successful trials is reported: metric suffix -> column.
#: ``steps``: ``trajectory_length`` when the run records it, else the trajectory's rows.
RESOURCES = {"cost": "cost", "tokens": "total_tokens", "steps": "trajectory_length",
             "time": "execution_time"}
#: Confidence columns, first found used (eval-v2 ``confidence_score``; another harness's).
CONFIDENCE = ("confidence_score", "confidence")
_NEEDS_TRIALS = ("needs repeated trials of a task (a trial column, or runs of one configuration "
                 "with seeds): every task has one scored trial")
_BOOT = "percentile bootstrap over tasks (each task with all its trials)"


def _actions(tool_calls: pd.DataFrame | None, trajectory: pd.DataFrame | None) -> pd.Series:
    """Each trial's action sequence: tool calls' ``tool_name`` in step order, else the
    trajectory's ``tool`` (steps without a tool left out); indexed by (run_id, task_id, trial)."""
    for frame, col in ((tool_calls, "tool_name"), (trajectory, "tool")):
        if frame is None or frame.empty or col not in frame or "task_id" not in frame:
            continue
        f = frame[frame[col].notna()]
        if f.empty:
            continue
        f = f.assign(run_id=_text(f, "run_id", "run"), task_id=f["task_id"].astype(str),
                     trial=_text(f, "trial", "0"))
        order = [c for c in ("step_id", "call_id") if c in f]
        f = f.sort_values(["run_id", "task_id", "trial", *order], kind="stable")
        seqs: dict[tuple, list[str]] = {}  # plain lists (a groupby of text gives Arrow lists)
        for k, name in zip(zip(f["run_id"], f["task_id"], f["trial"], strict=True),
                           f[col].astype(str), strict=True):
            seqs.setdefault(k, []).append(name)
        return pd.Series(seqs, dtype=object)
    return pd.Series(dtype=object)


def _text(frame: pd.DataFrame, col: str, default: str) -> pd.Series:
    if col in frame:
        return frame[col].astype("string").fillna("<NA>").astype(str)
    return pd.Series(default, index=frame.index, dtype=object)


def _steps(tasks: pd.DataFrame, trajectory: pd.DataFrame | None, key: pd.MultiIndex):
    """Steps per trial: ``trajectory_length`` if recorded, else trajectory rows (NaN: none)."""
    if cost_recorded(tasks, "trajectory_length", by=None).any():
        return pd.to_numeric(tasks["trajectory_length"], errors="coerce").to_numpy(float)
    if trajectory is None or trajectory.empty or "task_id" not in trajectory:
        return np.full(len(tasks), np.nan)
    t = pd.DataFrame({"run_id": _text(trajectory, "run_id", "run"),
                      "task_id": trajectory["task_id"].astype(str),
                      "trial": _text(trajectory, "trial", "0")})
    counts = t.groupby(["run_id", "task_id", "trial"]).size()
    return counts.reindex(key).to_numpy(float)


def _trials(tasks: pd.DataFrame, configs, threshold: float, trajectory, tool_calls,
            condition: pd.Series | None) -> pd.DataFrame:
    """One row per scored trial: unit, task, ok (0/1), confidence, condition, resources, actions."""
    schema.require_columns(tasks, ["task_id", "final_score"])
    run, trial = _text(tasks, "run_id", "run"), _text(tasks, "trial", "0")
    unit = run.copy()
    if configs is not None:
        cfg = configs.assign(run_id=configs["run_id"].astype(str)).set_index("run_id")["config"]
        mapped = pd.Series(cfg.reindex(run).to_numpy(), index=tasks.index)
        unit[mapped.notna()] = mapped[mapped.notna()].astype(str)
    key = pd.MultiIndex.from_arrays([run, tasks["task_id"].astype(str), trial])
    conf_col = next((c for c in CONFIDENCE if c in tasks), None)
    out = pd.DataFrame({
        "unit": unit.to_numpy(), "task_id": tasks["task_id"].astype(str).to_numpy(),
        "ok": schema.correct(tasks["final_score"], threshold).to_numpy(float, na_value=np.nan),
        "confidence": (pd.to_numeric(tasks[conf_col], errors="coerce").to_numpy(float)
                       if conf_col else np.nan),
        "condition": condition.to_numpy() if condition is not None else "",
        "actions": _actions(tool_calls, trajectory).reindex(key).to_numpy()})
    for name, col in RESOURCES.items():
        if name == "steps":
            out[name] = _steps(tasks, trajectory, key)
        elif cost_recorded(tasks, col, by=None).any():
            out[name] = pd.to_numeric(tasks[col], errors="coerce").to_numpy(float)
        else:
            out[name] = np.nan
    return out[~np.isnan(out["ok"].to_numpy(float))]


def _row(dimension: str, metric: str, value=np.nan, ci=(np.nan, np.nan, ""), n_tasks=0,
         n_trials=0, method: str = "", note: str = "") -> dict:
    notes = "; ".join(x for x in (note, ci[2]) if x)
    return {"dimension": dimension, "metric": metric, "value": value, "ci_low": ci[0],
            "ci_high": ci[1], "n_tasks": int(n_tasks), "n_trials": int(n_trials),
            "method": method, "note": notes}


def _task_mean(dimension: str, metric: str, per_task: pd.Series, trials: pd.Series,
               method: str, empty: str, boot: dict) -> dict:
    """A metric that is the mean over tasks of a per-task value (NaN tasks left out)."""
    v = per_task.to_numpy(float)
    keep = np.isfinite(v)
    if not keep.any():
        return _row(dimension, metric, method=method, note=empty)
    x = v[keep]
    ci = interval(lambda i: x[i].mean(axis=1), len(x), **boot)
    return _row(dimension, metric, float(x.mean()), ci, keep.sum(),
                trials.to_numpy()[keep].sum(), method, "")


def _consistency(base: pd.DataFrame, boot: dict) -> list[dict]:
    """Outcome, trajectory and resource consistency of one unit's (baseline) trials."""
    g = base.groupby("task_id", sort=False)
    n, c = g["ok"].size(), g["ok"].sum()
    names = ["outcome_consistency", "trajectory_action_consistency",
             "trajectory_order_consistency", *[f"resource_cv_{r}" for r in RESOURCES]]
    if n.max() < 2:
        return [_row("consistency", m, note=_NEEDS_TRIALS) for m in names]
    rows = [_task_mean("consistency", names[0], pd.Series(cs.outcome_consistency(n, c)), n,
                       "(2 p - 1)^2 per task (p: its share of successful trials; HAL's code), "
                       "mean over tasks with >= 2 trials; " + _BOOT, "", boot)]
    won = base[base["ok"] == 1].groupby("task_id", sort=False)
    acts = won["actions"].agg(list)
    recorded = acts.map(lambda a: [x for x in a if isinstance(x, list) and x])
    k_traj = recorded.map(len)
    none = ("no trajectory or tool calls recorded" if base["actions"].isna().all() else
            "no task has two successful trials with a recorded trajectory")
    for metric, fn, what in ((names[1], cs.action_consistency,
                              "1 - mean pairwise Jensen-Shannon divergence (bits) of the "
                              "action distributions"),
                             (names[2], cs.order_consistency,
                              "mean pairwise 1 - Levenshtein / longer length of the action "
                              "sequences")):
        rows.append(_task_mean("consistency", metric, recorded.map(fn), k_traj,
                               what + " among a task's successful trials, mean over tasks; "
                               + _BOOT, none, boot))
    for r in RESOURCES:
        vals = won[r].agg(lambda s: s.to_numpy(float))
        k = vals.map(lambda a: int(np.isfinite(a).sum()))
        empty = (f"{RESOURCES[r]} not recorded (absent, all missing or all 0)"
                 if base[r].isna().all()
                 else f"no task has two successful trials with {r} recorded")
        rows.append(_task_mean("consistency", f"resource_cv_{r}",
                               vals.map(cs.coefficient_of_variation), k,
                               f"coefficient of variation (sd, ddof = 1, / mean) of {r} among "
                               "a task's successful trials, mean over tasks; " + _BOOT,
                               empty, boot))
    return rows


def _pooled(codes: np.ndarray, conf: np.ndarray, ok: np.ndarray, boot: dict) -> dict:
    """AUROC, AuRC and excess AuRC of the trials pooled over each resample of tasks
    (``codes``: each trial's task, 0..n-1): each task's trials counted by confidence level
    once, a resample's counts the sum of its drawn tasks' (:func:`counts`), the statistics
    from them by :func:`dabench_analysis.stats.consistency._by_level`, equal to the last bit
    to those of the drawn trials themselves."""
    n = int(codes.max()) + 1
    won, lost = cs._level_counts(conf, ok, codes)
    out: dict[str, list] = {"confidence_auroc": [], "aurc": [], "excess_aurc": []}
    for idx in draws(n, boot["n_boot"], boot["seed"], width=len(codes)):
        drawn = counts(idx, n)
        stats = cs._by_level(drawn @ won, drawn @ lost)
        for m, k in (("confidence_auroc", "auroc"), ("aurc", "aurc"),
                     ("excess_aurc", "excess_aurc")):
            out[m].append(stats[k])
    return {m: np.concatenate(v) for m, v in out.items()}


def _predictability(base: pd.DataFrame, boot: dict) -> list[dict]:
    """AUROC of confidence for correctness, AuRC and excess AuRC over one unit's trials."""
    names = ["confidence_auroc", "aurc", "excess_aurc"]
    f = base[np.isfinite(base["confidence"].to_numpy(float))]
    if f.empty:
        return [_row("predictability", m, note="no confidence recorded (a confidence_score "
                     "or confidence column)") for m in names]
    codes = pd.factorize(f["task_id"], sort=False)[0]  # the order of groupby(sort=False)
    n_tasks = int(codes.max()) + 1
    conf, ok = f["confidence"].to_numpy(float), f["ok"].to_numpy(float)
    pooled_note = "trials pooled over tasks; " + _BOOT
    curve = cs.aurc(conf, ok)
    values = {"confidence_auroc": cs.auroc(conf, ok), "aurc": curve["aurc"],
              "excess_aurc": curve["excess_aurc"]}
    what = {"confidence_auroc": "AUROC (Mann-Whitney) of confidence for correctness",
            "aurc": "area under the risk-coverage curve (Geifman et al. 2019)",
            "excess_aurc": "AuRC minus the optimal AuRC (Geifman et al. 2019)"}
    reps = _pooled(codes, conf, ok, boot) if n_tasks >= 2 else {}
    rows = []
    for m in names:
        value = values[m]
        note = ("undefined: every trial is correct, or every trial is wrong"
                if m == "confidence_auroc" and not np.isfinite(value) else "")
        ci = ((np.nan, np.nan, "") if not np.isfinite(value) else
              bounds(reps[m], boot["n_boot"], boot["ci"]) if reps else
              (np.nan, np.nan, "interval not estimable: fewer than 2 tasks"))
        rows.append(_row("predictability", m, value, ci, n_tasks, len(f),
                         f"{what[m]}; {pooled_note}", note))
    return rows


def _robustness(trials: pd.DataFrame, baseline: str, boot: dict) -> list[dict]:
    """Accuracy under each condition over the baseline's, on the tasks run under both."""
    rates = trials.pivot_table(index="task_id", columns="condition", values="ok",
                               aggfunc="mean", sort=False)
    counts = trials.groupby(["task_id", "condition"]).size().unstack(fill_value=0)
    rows = []
    for cond in [c for c in rates.columns if c != baseline]:
        both = rates[[baseline, cond]].dropna()
        metric = f"robustness_ratio:{cond}"
        method = (f"accuracy under {cond} / accuracy under {baseline} (each the mean over the "
                  "tasks run under both of a task's share of successful trials; not clipped "
                  "at 1); " + _BOOT)
        b, p = both[baseline].to_numpy(float), both[cond].to_numpy(float)
        n_trials = int(counts.loc[both.index, [baseline, cond]].to_numpy().sum())
        if both.empty or b.mean() == 0:
            note = (f"no task run under both {baseline} and {cond}" if both.empty else
                    f"undefined: no success under {baseline}")
            rows.append(_row("robustness", metric, n_tasks=len(both), n_trials=n_trials,
                             method=method, note=note))
            continue
        ci = interval(lambda i, p=p, b=b: ratio(p[i].mean(axis=1), b[i].mean(axis=1)),
                       len(b), **boot)
        rows.append(_row("robustness", metric, float(p.mean() / b.mean()), ci, len(both),
                         n_trials, method))
    return rows


def _read(run, configs, threshold, baseline: str, trajectory=None, tool_calls=None):
    """The trials of ``run`` and its condition column (None without one), checked."""
    tasks = as_frame(run)
    if threshold is None:
        threshold = schema.SUCCESS_THRESHOLD
    threshold = schema.check_threshold(threshold)
    condition = None
    if "condition" in tasks:
        condition = tasks["condition"].astype("string").fillna(baseline).astype(str)
        if not (condition == baseline).any():
            raise ValueError(f"condition has no {baseline!r} rows; known: "
                             f"{', '.join(sorted(set(condition)))}; pass baseline=")
    trials = _trials(tasks, _configs(run, configs), threshold, trajectory, tool_calls,
                     condition)
    return trials, condition


@needs("task_id", "final_score", trials="any")
def reliability(run, *, trajectory: pd.DataFrame | None = None,
                tool_calls: pd.DataFrame | None = None, configs: pd.DataFrame | None = None,
                threshold: float | None = None, baseline: str = "baseline",
                n_boot: int = 2000, seed: int = 0, ci: float = 0.95) -> pd.DataFrame:
    """The reliability profile of each run (or configuration): consistency, predictability and
    robustness, one row per metric with a bootstrap interval over tasks.

    Parameters
    ----------
    run : Run, Runs or DataFrame
        Task rows with ``task_id`` and ``final_score`` ([0, 1]); ``run_id`` (one run without it)
        and ``trial`` (Inspect epochs, tau-bench trials) when present; optionally ``cost`` (US
        dollars), ``total_tokens`` (tokens), ``trajectory_length`` (steps), ``execution_time``
        (seconds), ``confidence_score`` or ``confidence`` (the agent's stated confidence) and
        ``condition`` (``baseline``, ``fault:timeout``, ``prompt:paraphrase``, ...). A Run or
        Runs also gives its trajectory and tool calls, its success threshold and (a Runs) the
        configurations its runs declare.
    trajectory, tool_calls : DataFrame, optional
        Steps and tool calls (``run_id``, ``task_id``, ``trial`` when present, ``step_id``;
        ``tool`` or ``tool_name``): each trial's actions. Default: the Run's.
    configs : DataFrame, optional
        ``run_id`` -> ``config`` (:func:`dabench_analysis.load.run_configs`): the runs of a
        configuration (its seeds) are its trials. Default: what a Runs declares.
    threshold : float, optional
        A trial succeeds when ``final_score >= threshold`` (:func:`schema.correct`); default 0.8.
    baseline : str
        The ``condition`` of the unperturbed trials.
    n_boot, seed : int
        Bootstrap resamples and seed (tasks resampled with all their trials).
    ci : float
        Level of the intervals.

    Returns
    -------
    DataFrame
        One row per run (or configuration) and metric: ``run_id``, ``dimension``
        (consistency, predictability, robustness), ``metric``, ``value``, ``ci_low``,
        ``ci_high``, ``n_tasks`` and ``n_trials`` (the tasks and trials the value uses),
        ``method``, ``note`` (why a value or interval is missing). Metrics:
        ``outcome_consistency``, ``trajectory_action_consistency``,
        ``trajectory_order_consistency``, ``resource_cv_cost`` / ``_tokens`` / ``_steps`` /
        ``_time``, ``confidence_auroc``, ``aurc``, ``excess_aurc`` and
        ``robustness_ratio:<condition>`` per condition other than the baseline (one row
        ``robustness_ratio`` without a ``condition`` column). A metric the data cannot give is
        a row with NaN and the reason, never left out.

    Raises
    ------
    ValueError
        No ``task_id`` or ``final_score``; a ``condition`` column without ``baseline`` rows; a
        threshold outside (0, 1] or ``ci`` outside (0, 1).
    Skipped
        Not one metric can be computed (one trial per task, no confidence, no condition).

    Notes
    -----
    Consistency and predictability use the baseline trials (all trials without ``condition``).
    Outcome consistency per task is ``(2 p - 1)^2``, p the task's share of successful trials
    (HAL's code; the paper's ratio of the sample variance to ``p (1 - p)`` is degenerate:
    :func:`~dabench_analysis.stats.consistency.outcome_consistency`); a task where every trial
    succeeds, or every one fails, has consistency 1. Trajectory consistency compares the
    successful trials' action distributions (1 - Jensen–Shannon divergence) and orders
    (normalised Levenshtein similarity); resource consistency is the coefficient of variation
    among successful trials of a resource the run records (absent, all missing or all 0 = not
    recorded: :func:`~dabench_analysis.stats.recorded.cost_recorded`). Each is a mean over the
    tasks where it is defined. AUROC, AuRC and excess AuRC pool the trials (Geifman et al.
    2019). Robustness ratios divide the accuracy under a condition by the baseline accuracy on
    the tasks run under both. Intervals: percentile bootstrap resampling tasks (with all their
    trials), seeded; NaN with a note when every resample agrees or fewer than 2 tasks count.

    References
    ----------
    Rabanser, S. et al. (2026). Towards a Science of AI Agent Reliability. arXiv:2602.16666.
    Geifman, Y., Uziel, G., El-Yaniv, R. (2019). Bias-reduced uncertainty estimation for deep
    neural classifiers. ICLR 2019.

    Examples
    --------
    >>> t = pd.DataFrame({"task_id": list("aaabbbccc"), "trial": [1, 2, 3] * 3,
    ...                   "final_score": [1, 1, 1, 1, 0, 0, 0, 0, 0.0]})
    >>> r = reliability(t, n_boot=200).set_index("metric")
    >>> round(float(r.loc["outcome_consistency", "value"]), 4)  # (1 + 1/9 + 1) / 3
    0.7037
    >>> r.loc["resource_cv_cost", "note"]
    'cost not recorded (absent, all missing or all 0)'
    """
    check_ci(ci)
    if isinstance(run, Run | Runs):
        trajectory = run.trajectory if trajectory is None else trajectory
        tool_calls = run.tool_calls if tool_calls is None else tool_calls
    trials, condition = _read(run, configs, threshold, baseline, trajectory, tool_calls)
    boot = {"n_boot": n_boot, "seed": seed, "ci": ci}
    parts = []
    for unit, u in trials.groupby("unit", sort=False):
        base = u[u["condition"] == baseline] if condition is not None else u
        rows = _consistency(base, boot) + _predictability(base, boot)
        rows += (_robustness(u, baseline, boot) if condition is not None else
                 [_row("robustness", "robustness_ratio", note="no condition column: needs "
                       "trials under a baseline and perturbed or fault conditions")])
        parts.append(pd.DataFrame(rows).assign(run_id=unit))
    if not parts:
        return pd.DataFrame(columns=COLUMNS)
    out = pd.concat(parts, ignore_index=True)[COLUMNS]
    if out["value"].isna().all():
        raise Skipped("no reliability metric can be computed: consistency needs repeated trials "
                      "of a task (a trial column, or runs of one configuration with seeds), "
                      "predictability a `confidence_score`, robustness a `condition` column",
                      missing=[REPEATED, "confidence_score", "condition"])
    return out


@needs("task_id", "final_score", trials="any")
def risk_coverage(run, *, configs: pd.DataFrame | None = None, threshold: float | None = None,
                  baseline: str = "baseline") -> pd.DataFrame:
    """The risk–coverage curve of each run (or configuration): answering only the most confident
    share of trials, how many of those answers are wrong.

    Parameters
    ----------
    run : Run, Runs or DataFrame
        As :func:`reliability`: ``task_id``, ``final_score`` and ``confidence_score`` (or
        ``confidence``); ``run_id``, ``trial``, ``condition`` when present.
    configs, threshold, baseline
        As :func:`reliability`.

    Returns
    -------
    DataFrame
        One row per run and coverage level: ``run_id``, ``coverage`` (i / n of the run's n
        trials with a confidence), ``risk`` (expected share wrong among the i most confident;
        tied confidences in random order), ``optimal_risk`` (the same, correct trials first).
        No rows for a run without a confidence.

    Raises
    ------
    ValueError
        As :func:`reliability`.
    Skipped
        No run has a confidence (``confidence_score`` or ``confidence``), or the input has no row.

    Notes
    -----
    :func:`dabench_analysis.stats.consistency.risk_coverage` per run, over its baseline trials;
    the mean of ``risk`` is the AuRC of :func:`reliability`, the mean of ``risk -
    optimal_risk`` its excess AuRC (Geifman et al. 2019).

    Examples
    --------
    >>> t = pd.DataFrame({"task_id": list("abc"), "final_score": [1.0, 0.0, 0.0],
    ...                   "confidence_score": [0.5, 0.9, 0.7]})
    >>> risk_coverage(t)["risk"].round(3).tolist()
    [1.0, 1.0, 0.667]
    """
    trials, condition = _read(run, configs, threshold, baseline)
    parts = []
    for unit, u in trials.groupby("unit", sort=False):
        base = u[u["condition"] == baseline] if condition is not None else u
        base = base[np.isfinite(base["confidence"].to_numpy(float))]
        if len(base):
            curve = cs.risk_coverage(base["confidence"].to_numpy(float),
                                     base["ok"].to_numpy(float))
            parts.append(curve.assign(run_id=unit))
    if not parts:
        raise Skipped("needs the agent's stated confidence (`confidence_score`), absent or "
                      "all missing in this run", missing=["confidence_score"])
    return pd.concat(parts, ignore_index=True)[["run_id", "coverage", "risk", "optimal_risk"]]
