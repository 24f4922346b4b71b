# Over 400 lines (<= 500): two runs and many share the per-task reading and, on repeated
# trials, the task means; each table declares its inputs.
"""Trajectories of two runs paired on their shared tasks, and of many runs side by side.

Two runs: steps per task (Wilcoxon signed-rank, mean difference with its t-interval), the
share of tasks with a loop, with every error recovered and following the canonical pattern
(McNemar's exact test on tasks, Newcombe's paired interval), and the variants whose share
changed most. Many runs: one row per run with intervals. On repeated trials (each trial its
own trace) every measure is first averaged over a task's trials, so each task is one value.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from dabench_analysis import schema
from dabench_analysis.load._run import Run
from dabench_analysis.load._sweep import Runs
from dabench_analysis.schema import TRAJECTORY_FILE
from dabench_analysis.schema.needs import in_file, needs
from dabench_analysis.stats._comparison import paired_comparison
from dabench_analysis.stats._descriptive import mean_summary
from dabench_analysis.stats._differences import newcombe_paired
from dabench_analysis.stats._inputs import check_ci, warn
from dabench_analysis.stats._proportions import mcnemar_discordant
from dabench_analysis.trajectory._by import add_level, resolve_by
from dabench_analysis.trajectory._inputs import POOLED, gather, holm, wilson
from dabench_analysis.trajectory.events import _loop_tasks
from dabench_analysis.trajectory.patterns import _task_patterns
from dabench_analysis.trajectory.step_events import error_recovery

_STEPS = ["tool", "action_input", "success"]
#: Read where present: the variants' level (``by="auto"``) and conformance need them.
_LEVEL_STEPS = ("stage", "agent")
_LEVELS_USED = in_file(TRAJECTORY_FILE, *_LEVEL_STEPS)


def _per_task(run: Run, window: int, threshold: float | None, by: str = "stage",
              what: str = "compare", inputs: list | None = None) -> pd.DataFrame:
    """One run's traces with n_steps, pattern (of ``by`` blocks), conforms (NA without
    stages), loop and all_recovered (a ``trial`` column when the run has repeated trials,
    each its own trace); ``inputs``: a list the gathered inputs and their
    :func:`error_recovery` frame are appended to."""
    inp = gather(run, what, steps=_STEPS, calls=["step_id", "tool_name", "success"],
                 task_columns=["replan_count", "execution_attempts"], threshold=threshold,
                 optional=_LEVEL_STEPS)
    inp.steps = add_level(inp.steps, by)
    tp = _task_patterns(inp, by if by in inp.steps else "tool", True)
    if "stage" not in inp.steps:
        tp["conforms"] = pd.array([pd.NA] * len(tp), dtype="boolean")
    elif by != "stage":
        tp["conforms"] = _task_patterns(inp, "stage", True)["conforms"].to_numpy()
    lt = _loop_tasks(inp, window, kinds=False)  # only n_loops is read
    errors = error_recovery(inp.steps, inp.calls)
    err = errors.groupby("task_index")["recovered"].all()
    out = tp[["run_id", "task_id", "difficulty", "pattern", "reading", "n_steps", "conforms",
              "correct", *(["trial"] if inp.clusters is not None else [])]].copy()
    out["loop"] = lt["n_loops"].to_numpy() > 0
    out["all_recovered"] = pd.array(err.reindex(range(len(tp))).to_numpy(), dtype="boolean")
    out = out[out["n_steps"] > 0]
    if inputs is None:
        warn(inp.notes)
    else:
        inputs.extend([inp, errors])
    return out


def _task_means(traces: pd.DataFrame, patterns: list[str] | None = None) -> pd.DataFrame:
    """One row per task: the mean over its traces (trials) of n_steps and of each flag (the
    share of its trials with a loop, all errors recovered, the canonical pattern; with
    ``patterns``, the share taking each pattern, columns ``v0``, ``v1``, ...)."""
    t = traces.assign(**{c: traces[c].astype("Float64") for c in
                         ("loop", "all_recovered", "conforms")})
    if patterns is not None:
        t = t.assign(**{f"v{i}": t["pattern"].eq(p).astype(float)
                        for i, p in enumerate(patterns)})
    cols = ["n_steps", "loop", "all_recovered", "conforms",
            *(f"v{i}" for i in range(len(patterns or [])))]
    g = t.groupby("task_id", sort=False)
    out = g[cols].mean()
    out["difficulty"] = g["difficulty"].first()
    return out.reset_index()


def _paired_means(b: pd.Series, p: pd.Series, task_id: pd.Series, ci: float) -> dict:
    """Task means paired: Wilcoxon signed-rank with the t-interval of the mean difference
    (:func:`dabench_analysis.stats.paired_comparison`)."""
    frames = [pd.DataFrame({"task_id": task_id.to_numpy(), "x": x.astype("Float64").to_numpy(
        dtype="float64", na_value=np.nan)}) for x in (b, p)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a level of a few tasks: its test says so in `note`
        pc = paired_comparison(*frames, metric="x", ci=ci).iloc[0]
    return {"n_pairs": int(pc["n_pairs"]), "baseline": pc["mean_baseline"],
            "proposed": pc["mean_proposed"], "diff": pc["mean_diff"], "ci_low": pc["ci_low"],
            "ci_high": pc["ci_high"], "statistic": pc["statistic"], "p_value": pc["p_value"],
            "method": f"task means over trials; {pc['method']}", "note": pc["note"]}


def _pair(baseline: Run, proposed: Run, window: int, threshold: float | None,
          patterns: bool = False) -> tuple[pd.DataFrame, bool]:
    """The two runs' rows merged on task_id (suffixes _b, _p): one per trace without repeated
    trials; with them in either run, task means (and ``patterns``: the variants' shares, at
    the level ``by="auto"`` picks for the baseline)."""
    by = resolve_by(baseline, "auto") if patterns else "stage"
    b, p = (_per_task(r, window, threshold, by) for r in (baseline, proposed))
    if "trial" not in b and "trial" not in p:
        return b.merge(p, on="task_id", suffixes=("_b", "_p")), False
    names = list(dict.fromkeys([*b["pattern"], *p["pattern"]])) if patterns else None
    m = _task_means(b, names).merge(_task_means(p, names), on="task_id", suffixes=("_b", "_p"))
    m.attrs["patterns"] = names
    m.attrs["readings"] = {**dict(zip(b["pattern"], b["reading"], strict=True)),
                           **dict(zip(p["pattern"], p["reading"], strict=True))}
    return m, True


def _paired_flag(b: pd.Series, p: pd.Series, ci: float) -> dict:
    """McNemar (exact) and Newcombe's paired interval of proposed − baseline."""
    keep = b.notna() & p.notna()
    xb, xp = b[keep].astype(bool).to_numpy(), p[keep].astype(bool).to_numpy()
    both, only_p = int((xb & xp).sum()), int((~xb & xp).sum())
    only_b, neither = int((xb & ~xp).sum()), int((~xb & ~xp).sum())
    n = int(keep.sum())
    diff, lo, hi = newcombe_paired(both, only_p, only_b, neither, ci=ci)
    test = mcnemar_discordant(only_b, only_p, n=n)
    return {"n_pairs": n, "baseline": xb.mean() if n else np.nan,
            "proposed": xp.mean() if n else np.nan, "diff": diff, "ci_low": lo,
            "ci_high": hi, "statistic": test.statistic, "p_value": test.p_value,
            "method": f"{test.method}; Newcombe paired (method 10)", "note": test.note}


def _groups(frame: pd.DataFrame, column: str = "difficulty"):
    """("all", frame), then (level, its rows) for each difficulty present, in order."""
    yield POOLED, frame
    values = frame[column].astype("string")
    present = set(values.dropna())
    for level in [*(d for d in schema.DIFFICULTY_ORDER if d in present),
                  *sorted(present - set(schema.DIFFICULTY_ORDER))]:
        yield level, frame[values.eq(level).fillna(False).to_numpy()]


def _compare_rows(m: pd.DataFrame, ci: float, trials: bool = False) -> list[dict]:
    """The four measures on merged task rows (suffixes _b, _p); with ``trials``, on task
    means (Wilcoxon on each)."""
    if trials:
        return [{"measure": measure} | (_paired_means(m[f"{col}_b"], m[f"{col}_p"],
                                                      m["task_id"], ci)
                                        if _both(m, col) else _none(col))
                for measure, col in (("steps_per_task", "n_steps"), ("loop_rate", "loop"),
                                     ("recovery_rate", "all_recovered"),
                                     ("canonical_share", "conforms"))]
    frames = [pd.DataFrame({"task_id": m["task_id"], "n_steps": m[f"n_steps{s}"]})
              for s in ("_b", "_p")]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a level of a few tasks: its test says so in `note`
        pc = paired_comparison(*frames, metric="n_steps", ci=ci).iloc[0]
    rows = [{"measure": "steps_per_task", "n_pairs": int(pc["n_pairs"]),
             "baseline": pc["mean_baseline"], "proposed": pc["mean_proposed"],
             "diff": pc["mean_diff"], "ci_low": pc["ci_low"], "ci_high": pc["ci_high"],
             "statistic": pc["statistic"], "p_value": pc["p_value"], "method": pc["method"],
             "note": pc["note"]}]
    for measure, col in (("loop_rate", "loop"), ("recovery_rate", "all_recovered"),
                         ("canonical_share", "conforms")):
        rows.append({"measure": measure} | (_paired_flag(
            m[f"{col}_b"].astype("boolean"), m[f"{col}_p"].astype("boolean"), ci)
            if _both(m, col) else _none(col)))
    return rows


def _both(m: pd.DataFrame, col: str) -> bool:
    """Some task has a value of ``col`` in both runs."""
    return bool((m[f"{col}_b"].notna() & m[f"{col}_p"].notna()).any())


def _none(col: str) -> dict:
    """A measure without a pair of values (no stages, no errors in both runs)."""
    why = "no stage column" if col == "conforms" else "no task with a value in both runs"
    return {"n_pairs": 0, "baseline": np.nan, "proposed": np.nan, "diff": np.nan,
            "ci_low": np.nan, "ci_high": np.nan, "statistic": np.nan, "p_value": np.nan,
            "method": "", "note": why}


@needs(files=(TRAJECTORY_FILE,), file_needs=in_file(TRAJECTORY_FILE, "task_id", "step_id",
       "tool", "action_input", "success"), uses=("difficulty", *_LEVELS_USED), inputs=2,
       trials="any")
def compare(baseline: Run, proposed: Run, *, window: int = 3, threshold: float | None = None,
            ci: float = 0.95) -> pd.DataFrame:
    """The trajectories of two runs, paired on the tasks both have steps for.

    Parameters
    ----------
    baseline, proposed : Run
        Each reads trajectory.csv ``task_id``, ``step_id``, ``tool``, ``action_input``,
        ``success`` (``stage`` and ``agent`` where present) and tool_calls.csv when present.
        Repeated trials (another harness's ``trial``) are allowed: see Notes.
    window : int
        The loop window (:func:`~dabench_analysis.trajectory.loops`).
    threshold : float, optional
        Success threshold; default the runs'.
    ci : float
        Level of the intervals.

    Returns
    -------
    DataFrame
        Per ``difficulty`` ("all", then each level of the baseline's tasks), one row per
        measure: ``steps_per_task`` (mean), ``loop_rate`` (share of tasks with a loop),
        ``recovery_rate`` (share of tasks, among those with an error in both runs,
        whose every error was recovered), ``canonical_share`` (share following the canonical
        pattern; ``n_pairs`` 0 and NaN with the note "no stage column" without stages):
        ``measure``, ``n_pairs``, ``baseline``, ``proposed``, ``diff`` (proposed − baseline)
        with ``ci_low``, ``ci_high``, ``statistic``, ``p_value``, ``method``, ``note``.

    Raises
    ------
    ValueError
        A run without trajectory.csv or one of the columns.

    Notes
    -----
    Steps per task: :func:`dabench_analysis.stats.paired_comparison` (Wilcoxon signed-rank,
    t-interval of the mean difference). Shares: McNemar's exact test on the discordant tasks
    and Newcombe's (1998b) square-and-add interval for paired proportions
    (:func:`dabench_analysis.stats._proportions.newcombe_paired`). With repeated trials in
    either run, each measure is the task's mean over its trials (steps; the share of its trials
    with a loop, recovered, canonical) and every measure is compared as steps are: Wilcoxon
    signed-rank on the paired task means, t-interval of their mean difference (``method``
    starts "task means over trials"): trials of a task are not independent, so the task is
    the unit (Miller 2024, arXiv:2411.00640, §2).

    References
    ----------
    McNemar, Q. (1947). Psychometrika 12, 153–157. Newcombe, R. G. (1998b). Statistics in
    Medicine 17, 2635–2650.

    Examples
    --------
    >>> import dabench_analysis as da
    >>> c = compare(da.load_run("data/sample_runs/baseline_react"),
    ...             da.load_run("data/sample_runs/proposed_aat"))
    >>> c.loc[c["difficulty"] == "all", "measure"].tolist()
    ['steps_per_task', 'loop_rate', 'recovery_rate', 'canonical_share']
    """
    check_ci(ci)
    m, trials = _pair(baseline, proposed, window, threshold)
    rows = [{"difficulty": level, **row} for level, sub in _groups(m, "difficulty_b")
            for row in _compare_rows(sub, ci, trials)]
    return pd.DataFrame(rows)


@needs(files=(TRAJECTORY_FILE,), file_needs=in_file(TRAJECTORY_FILE, "task_id", "step_id",
       "tool", "action_input", "success"), uses=("difficulty", *_LEVELS_USED), inputs=2,
       trials="any")
def variant_changes(baseline: Run, proposed: Run, *, top: int = 10, window: int = 3,
                    threshold: float | None = None, ci: float = 0.95) -> pd.DataFrame:
    """The stage variants whose share changed most between two runs, paired on shared tasks.

    Parameters
    ----------
    baseline, proposed : Run
        As :func:`compare` (repeated trials allowed).
    top : int
        Variants listed (by the size of the change).
    window, threshold, ci
        As :func:`compare`.

    Returns
    -------
    DataFrame
        Per ``difficulty`` ("all", then each level), one row per variant, largest abs(change)
        first: ``pattern``, ``reading``, ``n_pairs``,
        ``share_baseline``, ``share_proposed``, ``diff`` (proposed − baseline) with
        ``ci_low``, ``ci_high`` (Newcombe paired), ``p_value`` (McNemar exact: tasks that
        take the variant in one run only), ``p_adjusted`` (Holm over every variant of either
        run in the group), ``method``.

    Raises
    ------
    ValueError
        A run without trajectory.csv or one of the columns.

    Notes
    -----
    Variants at the level ``by="auto"`` picks for the baseline (stage, else two or more
    agents, else action class, else tool). For each variant, every shared task either follows
    it or not in each run: McNemar's exact test and Newcombe's paired interval, as
    :func:`compare`; Holm over the variants. With repeated trials, each task's share of its
    trials taking the variant, paired on tasks (Wilcoxon, t-interval; ``method`` starts "task
    means over trials").

    References
    ----------
    Holm, S. (1979). A simple sequentially rejective multiple test procedure. Scand. J.
    Statist. 6, 65–70.

    Examples
    --------
    >>> import dabench_analysis as da
    >>> v = variant_changes(da.load_run("data/sample_runs/baseline_react"),
    ...                     da.load_run("data/sample_runs/proposed_aat"), top=3)
    >>> len(v[v["difficulty"] == "all"]) <= 3, v.columns[1]
    (True, 'pattern')
    """
    check_ci(ci)
    m, trials = _pair(baseline, proposed, window, threshold, patterns=True)
    readings = m.attrs["readings"] if trials else {
        **dict(zip(m["pattern_b"], m["reading_b"], strict=True)),
        **dict(zip(m["pattern_p"], m["reading_p"], strict=True))}
    parts = []
    for level, sub in _groups(m, "difficulty_b"):
        rows = []
        pats = enumerate(m.attrs["patterns"]) if trials else enumerate(
            dict.fromkeys([*sub["pattern_b"], *sub["pattern_p"]]))
        for i, pat in pats:
            r = (_paired_means(sub[f"v{i}_b"], sub[f"v{i}_p"], sub["task_id"], ci)
                 if trials else
                 _paired_flag(sub["pattern_b"].eq(pat), sub["pattern_p"].eq(pat), ci))
            if trials and not (sub[f"v{i}_b"].gt(0) | sub[f"v{i}_p"].gt(0)).any():
                continue
            rows.append({"difficulty": level, "pattern": pat, "reading": readings[pat],
                         "n_pairs": r["n_pairs"], "share_baseline": r["baseline"],
                         "share_proposed": r["proposed"], "diff": r["diff"],
                         "ci_low": r["ci_low"], "ci_high": r["ci_high"],
                         "p_value": r["p_value"], "method": r["method"] + "; Holm"})
        if not rows:  # no shared task with steps
            continue
        out = pd.DataFrame(rows)
        out["p_adjusted"] = holm(out, ["difficulty"])
        out = out.assign(_a=out["diff"].abs()).sort_values(
            ["_a", "pattern"], ascending=[False, True], kind="stable")
        parts.append(out.head(top))
    cols = ["difficulty", "pattern", "reading", "n_pairs", "share_baseline", "share_proposed",
            "diff", "ci_low", "ci_high", "p_value", "p_adjusted", "method"]
    return pd.concat(parts, ignore_index=True)[cols] if parts else pd.DataFrame(columns=cols)


@needs(files=(TRAJECTORY_FILE,), uses=("difficulty",), trials="any")
def per_run(runs: Runs, *, window: int = 3, threshold: float | None = None,
            ci: float = 0.95) -> pd.DataFrame:
    """Each run of a sweep: steps, loops, recovery and conformance, with intervals.

    Parameters
    ----------
    runs : Runs
        Every run's trajectory.csv (``task_id``, ``step_id``, ``tool``, ``action_input``,
        ``success``; ``stage`` where present) and tool_calls.csv when present; a run without
        trajectory.csv has a row of NaN with a note. Repeated trials allowed: see Notes.
    window, threshold, ci
        As :func:`compare`.

    Returns
    -------
    DataFrame
        Per run, in the order of ``runs``, and ``difficulty`` ("all", then each level the run
        has): ``run_id``, ``difficulty``, ``n_tasks`` (with steps),
        ``mean_steps`` with ``mean_steps_ci_low``, ``mean_steps_ci_high`` (t-interval),
        ``loop_rate``, ``recovery_rate`` (errors recovered, over errors), ``conformance``
        (share following the canonical pattern), each with a Wilson interval, ``note``.

    Raises
    ------
    ValueError
        A run's trajectory.csv without one of the columns.

    Notes
    -----
    Mean steps: the t-interval (:func:`dabench_analysis.stats.mean_summary`); shares: Wilson
    (``conformance`` NaN without stages). A run with repeated trials: each task's mean over its
    trials (steps, the share of trials with a loop or canonical, of its errors recovered),
    then the mean over tasks with its t-interval, and ``note`` says so.

    References
    ----------
    Wilson, E. B. (1927). JASA 22, 209–212.

    Examples
    --------
    >>> import dabench_analysis as da
    >>> runs = da.load_runs(["data/sample_runs/baseline_react", "data/sample_runs/proposed_aat"])
    >>> per_run(runs).query("difficulty == 'all'")["run_id"].tolist()
    ['baseline_react', 'proposed_aat']
    """
    check_ci(ci)
    rows = []
    for run in runs:
        missing = [c for c in ("task_id", "step_id", *_STEPS) if c not in run.columns_of("trajectory")]
        if missing:  # no steps, or steps without stages (another harness's)
            rows.append({"run_id": run.run_id, "difficulty": POOLED, "n_tasks": 0,
                         "note": f"no {TRAJECTORY_FILE}" if not
                         run.has_file(TRAJECTORY_FILE) else f"{TRAJECTORY_FILE} without {', '.join(missing)}"})
            continue
        got: list = []
        t = _per_task(run, window, threshold, "stage" if "stage" in run.columns_of(
            "trajectory") else "tool", "per_run", got)
        inp, err = got  # the run's errors as _per_task found them
        err["difficulty"] = inp.tasks["difficulty"].to_numpy(dtype=object)[err["task_index"]]
        trials = inp.clusters is not None
        if trials:  # task means over trials: each task one value
            err["task_id"] = inp.tasks["task_id"].to_numpy(dtype=object)[err["task_index"]]
            inp.notes.append("repeated trials: task means over trials, t-intervals")
        for level, sub in _groups(t):
            e = err if level == POOLED else err[err["difficulty"] == level]
            row = _trials_row(sub, e, ci) if trials else _run_row(sub, e, ci)
            rows.append({"run_id": run.run_id, "difficulty": level}
                        | row | {"note": "; ".join(inp.notes)})
    return pd.DataFrame(rows)


def _trials_row(t: pd.DataFrame, err: pd.DataFrame, ci: float) -> dict:
    """:func:`_run_row` on repeated trials: each measure the mean over tasks of the task's
    mean over its trials, with the t-interval of those task means."""
    g = _task_means(t)
    rec = err.assign(recovered=err["recovered"].astype(float)).groupby(
        "task_id", sort=False)["recovered"].mean()
    out = {"n_tasks": len(g)}
    for name, x in (("mean_steps", g["n_steps"]), ("loop_rate", g["loop"]),
                    ("recovery_rate", rec), ("conformance", g["conforms"])):
        v = x.astype("Float64").to_numpy(dtype="float64", na_value=np.nan)
        m = mean_summary(v[~np.isnan(v)], ci) if (~np.isnan(v)).any() else \
            {"mean": np.nan, "ci_low": np.nan, "ci_high": np.nan}
        out |= {name: float(m["mean"]), f"{name}_ci_low": float(m["ci_low"]),
                f"{name}_ci_high": float(m["ci_high"])}
    return out


def _run_row(t: pd.DataFrame, err: pd.DataFrame, ci: float) -> dict:
    steps = mean_summary(t["n_steps"].to_numpy(float), ci)
    one = lambda d: {k: float(np.asarray(v).ravel()[0]) for k, v in d.items()}  # noqa: E731
    return {"n_tasks": len(t), "mean_steps": steps["mean"],
            "mean_steps_ci_low": steps["ci_low"], "mean_steps_ci_high": steps["ci_high"],
            **one(wilson(t["loop"].sum(), len(t), ci, "loop_rate")),
            **one(wilson(err["recovered"].sum(), len(err), ci, "recovery_rate")),
            **one(wilson(t["conforms"].sum(), len(t), ci, "conformance")
                  if t["conforms"].notna().any() else wilson(0, 0, ci, "conformance"))}
