# Over 400 lines (<= 500): variants, transitions and conformance share the block reading;
# each declares its inputs.
"""Process mining of a run's trajectories: the variants (distinct sequences of stages, agents or
tools), their conformance to the guide's canonical pattern, and the directly-follows relation.

Seed 000 §Data Model Schema 2 (trajectory.csv: "process mining, find common execution
patterns") and §Trajectory Metrics (the patterns). Each table is given pooled (difficulty
"all") and per difficulty, where the run has ``difficulty``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dabench_analysis.load._run import Run
from dabench_analysis.load._sweep import Runs
from dabench_analysis.schema import TRAJECTORY_FILE
from dabench_analysis.schema.needs import in_file, needs
from dabench_analysis.stats._differences import TWO_PROPORTIONS, compare_proportions
from dabench_analysis.stats._inputs import check_ci, warn
from dabench_analysis.trajectory import steps as sq
from dabench_analysis.trajectory._by import (
    AUTO,
    NO_STEPS,
    SHAPES,
    SINGLETONS,
    add_level,
    auto_shape,
    reshape,
    resolve_by,
    step_columns,
)
from dabench_analysis.trajectory._clustered import variant_intervals
from dabench_analysis.trajectory._inputs import (
    difference,
    finish,
    gather,
    holm,
    shares,
    stratify,
    wilson,
)
from dabench_analysis.trajectory._trials import CLUSTERED_WALD, variant_p_values

#: The ``by`` columns a pattern may follow (trajectory.csv, seed 000 §Data Model Schema 2).
BY = ("stage", "phase", "agent", "tool", "legacy_stage", "trajectory_agent", "agent_type",
      "action", "program", "action_class", "auto")
_FILE_NEEDS = in_file(TRAJECTORY_FILE, "task_id", "step_id")
_LEVELS = in_file(TRAJECTORY_FILE, *AUTO)


def _check_by(run, by: str, shape: str = "full", prefix: int | None = None) -> str:
    if by not in BY:
        raise ValueError(f"by must be one of {', '.join(BY)}; got {by!r}")
    if shape not in SHAPES:
        raise ValueError(f"shape must be one of {', '.join(SHAPES)}; got {shape!r}")
    if prefix is not None and (not isinstance(prefix, int | np.integer) or prefix < 1):
        raise ValueError(f"prefix must be an integer >= 1 or None, got {prefix!r}")
    return resolve_by(run, by)


def _gather_by(run, name: str, by: str, **kw):
    inp = gather(run, name, steps=step_columns(by), **kw)
    inp.steps = add_level(inp.steps, by)
    return inp


def task_patterns(run: Run | Runs, *, by: str = "auto", collapse_repeats: bool = True,
                  collapse_cycles: bool | str = False, shape: str = "full",
                  prefix: int | None = None, threshold: float | None = None) -> pd.DataFrame:
    """Each task's sequence of ``by`` values, its conformance and outcome (the rows behind
    :func:`variants` and :func:`conformance`).

    Parameters
    ----------
    run : Run or Runs
        A loaded run (several: one row per run and task); reads trajectory.csv columns
        ``task_id``, ``step_id`` and ``by`` (and ``duration_seconds`` when present).
    by : {"stage", "phase", "agent", "tool", "program", "action_class", "auto", ...}
        The trajectory.csv column whose sequence is the pattern (:data:`BY`). Steps without a
        value are not part of it (with ``tool``: the steps that call none). ``"program"``: the
        first word of a shell command
        (:func:`~dabench_analysis.trajectory._by.programs`); ``"action_class"``: the
        command classed localize, patch, validate or submit
        (:func:`~dabench_analysis.trajectory._by.action_classes`, after Liu et al.
        2025); ``"auto"``: stage, else agent (two or more), else action class (steps with
        ``tool`` and ``action_input``), else tool; the default.
    collapse_repeats : bool
        Consecutive steps with one value are one block (default); False keeps every step.
    collapse_cycles : bool or "shape"
        True: a repeated cycle of any length (2 blocks or more) is written once with its count
        (A→B→A→B is (A→B)×2); ``"shape"``: with ``×n`` whatever the count, so tasks that
        differ only in how often they went round share a variant
        (:func:`~dabench_analysis.trajectory._by.collapse_cycles`).
    shape : {"full", "cycles", "first", "auto"}
        ``"full"`` (default): every block (with ``collapse_cycles`` as given); ``"cycles"``:
        as ``collapse_cycles="shape"``; ``"first"``: each value at its first occurrence only
        (A→B→A→C is A→B→C); ``"auto"``: the first of full (cycles with counts), cycles,
        first that gives fewer than 0.9 variants per task (:data:`SINGLETONS`) in every run,
        else first (:func:`~dabench_analysis.trajectory._by.shape_of`).
    prefix : int, optional
        Only the first ``prefix`` blocks of each task (the horizon of van der Aalst et al.
        2010); default all.
    threshold : float, optional
        Success threshold; default 0.8.

    Returns
    -------
    DataFrame
        One row per task of task_metrics.csv, in its order: ``run_id`` (several runs only),
        ``task_id``, ``difficulty``, ``pattern`` ("→"-joined; :data:`NO_STEPS` for a task
        without steps), ``reading`` (the pattern with a second PLAN block read as REPLAN and
        a second EXECUTE block as RETRY; ``by="stage"`` only), ``n_steps``, ``n_blocks``,
        ``correct``, ``final_score``, ``shape`` (the shape used), and for ``by="stage"``:
        ``conforms``, ``deviation`` (:func:`dabench_analysis.trajectory.steps.conformance` of the
        stage blocks).

    Raises
    ------
    ValueError
        An unknown ``by`` or ``shape``, ``prefix`` < 1, no trajectory.csv, the column absent
        from it.

    Notes
    -----
    The blocks and patterns of :mod:`dabench_analysis.trajectory.steps`; steps left out (no
    ``step_id``, a repeated one, an unknown task) are warned with their number.

    References
    ----------
    van der Aalst, W. M. P. (2016). Process Mining: Data Science in Action, 2nd ed.
    Springer, §2.1 (traces). van der Aalst, W. M. P., Rubin, V., Verbeek, H. M. W., van Dongen,
    B. F., Kindler, E., Günther, C. W. (2010). Process mining: a two-step approach to balance
    between underfitting and overfitting. Software and Systems Modeling 9(1), 87–111.
    Liu, S., Chen, Y., Krishna, R., Sinha, S., Ganhotra, J., Jabbarvand, R. (2025).
    Process-Centric Analysis of Agentic Software Systems. arXiv:2512.02393.

    Examples
    --------
    >>> import dabench_analysis as da
    >>> tp = task_patterns(da.load_run("data/sample_runs/proposed_aat"))
    >>> len(tp), tp.columns[0]
    (80, 'task_id')
    """
    by = _check_by(run, by, shape, prefix)
    inp = _gather_by(run, "task_patterns", by, task_columns=["execution_time"],
                     threshold=threshold)
    out = _task_patterns(inp, by, collapse_repeats, collapse_cycles, shape, prefix)
    warn(inp.notes)
    return out if inp.several else out.drop(columns="run_id")


def _task_patterns(inp, by: str, collapse: bool, cycles: bool | str = False,
                   shape: str = "full", prefix: int | None = None) -> pd.DataFrame:
    n = len(inp.tasks)
    b = sq.blocks(inp.steps, by=by, collapse_repeats=collapse)
    pat = sq.patterns(b, n_tasks=n)
    out = inp.tasks.copy()
    if shape == "auto":
        shape, cycles = auto_shape(inp.tasks, pat["pattern"], prefix), True
    for col in ("pattern", "reading"):
        if shape == "full" and not cycles and prefix is None:
            out[col] = pat[col].replace("", NO_STEPS).to_numpy()
        else:
            out[col] = [reshape(p, shape, prefix, cycles) for p in pat[col]]
    out["shape"] = shape
    out["n_steps"] = np.bincount(inp.steps["task_index"], minlength=n)
    out["n_blocks"] = pat["n_blocks"].to_numpy()
    if by == "stage":
        whole = b if collapse else sq.blocks(inp.steps, by="stage")
        conf = sq.conformance(whole, n_tasks=n)
        out["conforms"] = conf["conforms"].to_numpy()
        out["deviation"] = conf["deviation"].to_numpy()
    return out


def _pool_rest(g: pd.DataFrame, top: int) -> pd.DataFrame:
    """The ``top`` variants of each group (most tasks first), the rest of a group summed into one
    row "other (k variants)" (a single remaining variant is kept as it is)."""
    g = g.sort_values(["run_id", "difficulty", "n_tasks", "pattern"],
                      ascending=[True, True, False, True], kind="stable")
    keys = ["run_id", "difficulty"]
    rank = g.groupby(keys, sort=False, observed=True).cumcount().to_numpy()
    rest = rank >= top
    n_rest = pd.Series(rest).groupby([g[k].to_numpy() for k in keys],
                                     observed=True).transform("sum")
    pooled = rest & (n_rest.to_numpy() > 1)
    sums = ["n_tasks", "n_correct", "n_scored", "score_sum", "steps_sum", "runtime_sum",
            "runtime_n"]
    firsts = ["group_tasks", "group_correct", "group_scored", "untested"]
    other = g[pooled].groupby(keys, sort=False, observed=True).agg(
        **{c: (c, "sum") for c in sums}, **{c: (c, "first") for c in firsts},
        k=("pattern", "size")).reset_index()
    other["pattern"] = other["reading"] = [f"other ({k} variants)" for k in other.pop("k")]
    return pd.concat([g[~pooled].assign(is_other=False), other.assign(is_other=True)],
                     ignore_index=True)


@needs(files=(TRAJECTORY_FILE,), file_needs=_FILE_NEEDS,
       uses=("difficulty", "execution_time", *_LEVELS), trials="any")
def variants(run: Run | Runs, *, by: str = "auto", collapse_repeats: bool = True,
             collapse_cycles: bool | str = False, shape: str = "full", prefix: int | None = None,
             top: int = 10, threshold: float | None = None, ci: float = 0.95) -> pd.DataFrame:
    """The variants of a run: one row per distinct sequence of ``by`` values, most frequent
    first, the rest pooled.

    Parameters
    ----------
    run : Run or Runs
        As :func:`task_patterns` (several runs: one table per run, never pooled).
    by, collapse_repeats, collapse_cycles, shape, prefix, threshold
        As :func:`task_patterns`; ``collapse_repeats=False`` keeps every step (useful with
        ``by="tool"``); ``shape="auto"`` takes the finest shape that groups tasks.
    top : int
        Variants listed per group; the others are one row "other (k variants)".
    ci : float
        Level of the Wilson intervals (on repeated trials: of the bootstrap over tasks).

    Returns
    -------
    DataFrame
        Per ``run_id`` (several runs only) and ``difficulty`` ("all", then each level the run
        has), one row per variant: ``pattern``, ``reading``, ``n_tasks``, ``share`` (of the
        group's tasks) with ``share_ci_low``, ``share_ci_high``, ``n_correct``, ``accuracy``
        (share with ``final_score >= threshold`` among the variant's scored tasks) with
        ``accuracy_ci_low``, ``accuracy_ci_high``, ``mean_final_score``, ``mean_steps``,
        ``mean_runtime_s`` (task_metrics ``execution_time``, seconds; NaN without it),
        ``p_value`` (Fisher's exact test: the variant's accuracy against the group's other
        tasks; NaN for the pooled rest; on repeated trials the task-clustered Wald t-test of
        :func:`~dabench_analysis.trajectory._trials.clustered_wald`, NaN for a variant
        seen in fewer than two tasks), ``p_adjusted`` (Holm over the variants of the group),
        ``conforms`` (the variant is the canonical pattern; ``by="stage"`` only), ``method``
        (with ``by=`` the level and ``shape=`` the shape used). Where a group has nearly one
        variant per task (variants >= 0.9 × tasks, :data:`SINGLETONS`), no variant is tested
        (``p_value`` NaN) and ``method`` says "one variant per task": a variant table says
        nothing there; use a coarser ``by`` (``"action_class"``) or ``shape``.

    Raises
    ------
    ValueError
        As :func:`task_patterns`; ``top`` < 1.

    Notes
    -----
    Variants and their frequencies are the first view of process mining (van der Aalst 2016,
    §2.1). On repeated trials each trial is its own trace; the trials of a task are not
    independent, so the p-values cluster by task (Cameron & Miller 2015, J. Human Resources
    50, 317–372) where Fisher's test would treat every trace as its own observation, and the
    intervals of ``share`` and ``accuracy`` are a percentile bootstrap over tasks, every trial
    of a drawn task with it (Field & Welsh 2007; 2000 draws, seed 0; ``note`` says so).
    Tasks without steps are one variant, "(no steps)". The p-values screen many
    variants at once; Holm controls the family-wise error within a group.

    References
    ----------
    van der Aalst, W. M. P. (2016). Process Mining: Data Science in Action, 2nd ed. Springer.
    van der Aalst, W. M. P., Rubin, V., Verbeek, H. M. W., van Dongen, B. F., Kindler, E.,
    Günther, C. W. (2010). Software and Systems Modeling 9(1), 87–111 (shapes).
    Field, C. A., Welsh, A. H. (2007). Bootstrapping clustered data. JRSS B 69(3), 369–390.

    Examples
    --------
    >>> import dabench_analysis as da
    >>> v = variants(da.load_run("data/sample_runs/proposed_aat"))
    >>> v.columns[:3].tolist(), v.loc[0, "difficulty"]
    (['difficulty', 'pattern', 'reading'], 'all')
    """
    if top < 1:
        raise ValueError(f"top must be >= 1, got {top!r}")
    check_ci(ci)
    by = _check_by(run, by, shape, prefix)
    inp = _gather_by(run, "variants", by, task_columns=["execution_time"], threshold=threshold)
    tp = _task_patterns(inp, by, collapse_repeats, collapse_cycles, shape, prefix)
    level = f"by={by}; shape={tp['shape'].iloc[0] if len(tp) else shape}"
    tp["task_index"] = np.arange(len(tp))
    tp["runtime"] = tp["execution_time"].astype("float64") if "execution_time" in tp \
        else np.nan
    s = stratify(tp.drop(columns=["run_id", "difficulty"]), inp.tasks)
    s["ok"] = s["correct"].fillna(False).astype(bool)
    s["scored"] = s["correct"].notna()
    g = s.groupby(["run_id", "difficulty", "pattern"], sort=False, observed=True).agg(
        reading=("reading", "first"), n_tasks=("task_index", "size"), n_correct=("ok", "sum"),
        n_scored=("scored", "sum"), score_sum=("final_score", "sum"),
        steps_sum=("n_steps", "sum"), runtime_sum=("runtime", "sum"),
        runtime_n=("runtime", "count")).reset_index()
    tot = g.groupby(["run_id", "difficulty"], observed=True)[["n_tasks", "n_correct", "n_scored"]]
    g[["group_tasks", "group_correct", "group_scored"]] = tot.transform("sum").to_numpy()
    kinds = g.groupby(["run_id", "difficulty"], observed=True)["pattern"].transform("size")
    g["untested"] = (kinds >= SINGLETONS * g["group_tasks"]) & (g["group_tasks"] > 1)
    g = _pool_rest(g, top)
    boot = None
    if inp.clusters is not None:  # repeated trials: the task is the unit of test and interval
        g["p_trials"] = variant_p_values(s, g, inp.clusters)
        boot = variant_intervals(s, g, inp, ci)
    return _variant_columns(g, by, collapse_repeats, ci, inp, level, boot)


def _variant_columns(g: pd.DataFrame, by: str, collapse: bool, ci: float, inp,
                     level: str, boot: dict | None = None) -> pd.DataFrame:
    k, n = g["n_correct"].to_numpy(float), g["n_scored"].to_numpy(float)
    rest_k, rest_n = g["group_correct"] - k, g["group_scored"] - n
    p = g["p_trials"].to_numpy() if "p_trials" in g else np.where(
        g["is_other"] | g["untested"].fillna(True).astype(bool), np.nan,
        compare_proportions(k, n, rest_k, rest_n, ci=ci)["p_value"].to_numpy())
    test = CLUSTERED_WALD if "p_trials" in g else "Fisher exact"
    with np.errstate(invalid="ignore", divide="ignore"):
        out = pd.DataFrame({
            "run_id": g["run_id"], "difficulty": g["difficulty"], "pattern": g["pattern"],
            "reading": g["reading"], "n_tasks": g["n_tasks"].astype("int64"),
            **wilson(g["n_tasks"], g["group_tasks"], ci, "share"),
            "n_correct": g["n_correct"].astype("int64"), **wilson(k, n, ci, "accuracy"),
            "mean_final_score": g["score_sum"] / g["n_scored"].where(g["n_scored"] > 0),
            "mean_steps": g["steps_sum"] / g["n_tasks"],
            "mean_runtime_s": g["runtime_sum"] / g["runtime_n"].where(g["runtime_n"] > 0),
            "p_value": p})
    for name, bound in (boot or {}).items():  # repeated trials: bootstrap over tasks
        out[name] = bound
    out["p_adjusted"] = holm(out, ["run_id", "difficulty"])
    if by == "stage" and collapse:
        out["conforms"] = out["pattern"] == sq.ARROW.join(sq.CANONICAL)
    out["method"] = np.where(
        g["untested"].fillna(True).astype(bool), f"{level}; nearly one variant per task: not "
        f"tested{'; Wilson' if boot else ''}", f"{level}; Wilson; {test} (variant vs the "
        "group's other tasks), Holm")
    out["_o"] = g["is_other"].to_numpy()
    out = finish(out, inp, sort=["_o", "n_tasks", "pattern"], ascending=[True, False, True],
                 clustered=True, p_clustered=True)
    return out.drop(columns="_o")


@needs(files=(TRAJECTORY_FILE,), file_needs=in_file(TRAJECTORY_FILE, "task_id", "step_id", "stage"),
       uses=("difficulty", "execution_time",), trials="any")
def conformance(run: Run | Runs, *, threshold: float | None = None,
                ci: float = 0.95) -> pd.DataFrame:
    """Conformance to the guide's canonical pattern UNDERSTAND→PLAN→EXECUTE→VERIFY→SUMMARIZE:
    the share of tasks following it and how the others deviate.

    Parameters
    ----------
    run : Run or Runs
        Reads trajectory.csv ``task_id``, ``step_id``, ``stage``.
    threshold : float, optional
        Success threshold; default the run's.
    ci : float
        Level of the intervals.

    Returns
    -------
    DataFrame
        Per ``run_id`` (several runs only) and ``difficulty``: ``n_tasks``, ``n_conform``,
        ``conform_share`` with ``conform_share_ci_low``, ``conform_share_ci_high`` (Wilson),
        ``n_skipped`` (a canonical stage without a block), ``n_repeated`` (a stage with
        several blocks), ``n_replan`` (PLAN repeated), ``n_retry`` (EXECUTE repeated),
        ``n_out_of_order``, ``accuracy_conform``, ``accuracy_deviate`` (Wilson intervals),
        ``diff`` (conform − deviate) with ``ci_low``, ``ci_high`` (Newcombe), ``p_value``
        (Fisher exact), ``method``. Per task: :func:`task_patterns` (``conforms``,
        ``deviation``).

    Raises
    ------
    ValueError
        No trajectory.csv or no ``stage`` column in it.

    Notes
    -----
    A task conforms when its stage blocks are exactly UNDERSTAND, PLAN, EXECUTE, VERIFY,
    SUMMARIZE (:func:`dabench_analysis.trajectory.steps.conformance`); the accuracy difference is
    the package's two-proportion rule (Newcombe's hybrid interval, Fisher's exact test).

    References
    ----------
    van der Aalst, W. M. P. (2016). Process Mining: Data Science in Action, 2nd ed.
    Springer, §8 (conformance checking).

    Examples
    --------
    >>> import dabench_analysis as da
    >>> c = conformance(da.load_run("data/sample_runs/proposed_aat"))
    >>> int(c.loc[0, "n_tasks"])
    80
    """
    check_ci(ci)
    inp = gather(run, "conformance", steps=["stage"], threshold=threshold)
    tp = _task_patterns(inp, "stage", True).assign(task_index=np.arange(len(inp.tasks)))
    for col, word in (("skip", "skipped"), ("rep", "repeated"), ("replan", "(replan)"),
                      ("retry", "(retry)"), ("order", "out of order")):
        tp[col] = tp["deviation"].str.contains(word, regex=False)
    s = stratify(tp.drop(columns=["run_id", "difficulty"]), inp.tasks)
    ok, scored = s["correct"].fillna(False).astype(bool), s["correct"].notna()
    c = s["conforms"].astype(bool)
    s = s.assign(k1=ok & c, n1=scored & c, k2=ok & ~c, n2=scored & ~c, conform=c)
    flags = {"skip": "skipped", "rep": "repeated", "replan": "replan", "retry": "retry",
             "order": "out_of_order"}
    g = s.groupby(["run_id", "difficulty"], sort=False, observed=True).agg(
        n_tasks=("task_index", "size"), n_conform=("conform", "sum"),
        **{f"n_{w}": (col, "sum") for col, w in flags.items()},
        k1=("k1", "sum"), n1=("n1", "sum"), k2=("k2", "sum"), n2=("n2", "sum")).reset_index()
    d = difference(s, ["run_id", "difficulty"], ("k1", "n1"), ("k2", "n2"), inp, ci,
                   compare_proportions(g["k1"], g["n1"], g["k2"], g["n2"], ci=ci))
    sh = shares(s, ["run_id", "difficulty"], {"conform_share": ("conform", None),
                "accuracy_conform": ("k1", "n1"), "accuracy_deviate": ("k2", "n2")}, inp, ci)
    out = pd.concat([g[["run_id", "difficulty", "n_tasks", "n_conform"]],
                     sh.filter(like="conform_share"), g[[f"n_{w}" for w in flags.values()]],
                     sh.filter(like="accuracy_"),
                     d[["diff", "ci_low", "ci_high", "p_value"]]], axis=1)
    out["method"] = "Wilson; " + TWO_PROPORTIONS
    return finish(out, inp, clustered=True)


def _node_order(values, by: str) -> dict[str, int]:
    names = list(dict.fromkeys(values))
    fixed = list(sq.CANONICAL) if by == "stage" else []
    rest = sorted(v for v in names if v not in fixed and v not in (sq.START, sq.END))
    order = [sq.START, *[v for v in fixed if v in names], *rest, sq.END]
    return {v: i for i, v in enumerate(order)}


@needs(files=(TRAJECTORY_FILE,), file_needs=_FILE_NEEDS, uses=("difficulty", *_LEVELS),
       trials="any")
def transitions(run: Run | Runs, *, by: str = "auto", collapse_repeats: bool = True,
                threshold: float | None = None, ci: float = 0.95) -> pd.DataFrame:
    """The directly-follows relation: one row per (from, to) pair of consecutive blocks,
    with a start and an end node.

    Parameters
    ----------
    run, by, threshold
        As :func:`task_patterns`.
    collapse_repeats : bool
        True (default): transitions between blocks. False: between steps, so a repeated
        stage shows as a self-transition.
    ci : float
        Level of the Wilson intervals.

    Returns
    -------
    DataFrame
        Per ``run_id`` (several runs only) and ``difficulty``, one row per pair in node
        order (start, the stages in the catalogue's order, other values alphabetically, end):
        ``source``, ``target``, ``count`` (occurrences), ``exit_share`` (``count`` / all
        exits of ``source`` in the group), ``n_tasks`` (tasks passing it), ``accuracy`` of
        those tasks with ``accuracy_ci_low``, ``accuracy_ci_high`` (Wilson, scored tasks),
        ``median_source_s`` (median seconds spent in the source block or step, from
        ``duration_seconds``; NaN for start or without durations), ``method``.

    Raises
    ------
    ValueError
        As :func:`task_patterns`.

    Notes
    -----
    Counts of :func:`dabench_analysis.trajectory.steps.directly_follows`; ``n_tasks`` counts each
    task once per pair however often it passes it.

    References
    ----------
    van der Aalst, W. M. P. (2016). Process Mining: Data Science in Action, 2nd ed.
    Springer, §6.2.

    Examples
    --------
    >>> import dabench_analysis as da
    >>> t = transitions(da.load_run("data/sample_runs/proposed_aat"))
    >>> t.loc[0, ["source", "target"]].tolist(), int(t.loc[0, "count"])
    (['start', 'UNDERSTAND'], 80)
    """
    check_ci(ci)
    by = _check_by(run, by)
    inp = _gather_by(run, "transitions", by, threshold=threshold)
    edges = sq.directly_follows(sq.blocks(inp.steps, by=by, collapse_repeats=collapse_repeats))
    s = stratify(edges, inp.tasks)
    t = s["task_index"].to_numpy()
    s["ok"] = inp.tasks["correct"].fillna(False).to_numpy(dtype=bool)[t]
    s["scored"] = inp.tasks["correct"].notna().to_numpy()[t]
    keys = ["run_id", "difficulty", "source", "target"]
    g = s.groupby(keys, sort=False, observed=True).agg(count=("task_index", "size"),
                                        median_source_s=("source_seconds", "median"))
    once = s.drop_duplicates([*keys, "task_index"])
    u = once.groupby(keys, sort=False, observed=True).agg(n_tasks=("task_index", "size"))
    g = g.join(u).reset_index().merge(
        shares(once, keys, {"accuracy": ("ok", "scored")}, inp, ci), on=keys, how="left")
    exits = g.groupby(["run_id", "difficulty", "source"], observed=True)["count"].transform("sum")
    order = _node_order(pd.concat([g["source"], g["target"]]), by)
    out = pd.DataFrame({
        "run_id": g["run_id"], "difficulty": g["difficulty"], "source": g["source"],
        "target": g["target"], "count": g["count"].astype("int64"),
        "exit_share": g["count"] / exits, "n_tasks": g["n_tasks"].astype("int64"),
        **g.filter(like="accuracy"), "median_source_s": g["median_source_s"],
        "method": f"by={by}; directly-follows counts; Wilson",
        "_s": g["source"].map(order), "_t": g["target"].map(order)})
    return finish(out, inp, sort=["_s", "_t"], clustered=True).drop(columns=["_s", "_t"])
