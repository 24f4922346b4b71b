# Over 400 lines (<= 500): the pairwise, flip and item tables of a sweep, with their declared inputs.
"""Many runs task by task: all-pairs paired comparisons, flips between two runs, and item
analysis (how many runs solve each task). The leaderboards are in :mod:`.sweep`, which also
re-exports these functions. Every ``threshold`` is an explicit argument (default 0.8).
"""

from __future__ import annotations

import re
from functools import cache

import numpy as np
import pandas as pd

from dabench_analysis import schema
from dabench_analysis.schema import require_columns
from dabench_analysis.schema.needs import needs
from dabench_analysis.stats._descriptive import t_summary
from dabench_analysis.stats._inputs import as_float, check_ci, warn
from dabench_analysis.stats._nonparametric import signed_rank
from dabench_analysis.stats._proportions import discordant_counts, mcnemar_discordant
from dabench_analysis.stats.multicomp import adjust_pvalues
from dabench_analysis.tables._common import correct_mask, takes_run


def _as_tasks(frame: pd.DataFrame, columns=()) -> pd.DataFrame:
    """The stacked task frame of a sweep, checked: ``run_id``, ``task_id`` and ``columns``
    present, one row per run and task."""
    require_columns(frame, ["run_id", "task_id", *columns])
    if frame["run_id"].isna().any() or frame["task_id"].isna().any():
        raise ValueError("tasks has rows without a run_id or task_id")
    key = frame[["run_id", "task_id"]].astype(str)
    dup = key.duplicated()
    if dup.any():
        r, t = key[dup].iloc[0]
        raise ValueError(f"task {t!r} appears more than once in run {r!r} "
                         f"({int(dup.sum())} duplicate rows; repeated trials are never "
                         "averaged here: see tables.sweep.task_counts and tables.trials)")
    return frame


_DIGITS = re.compile(r"(\d+)")


def _task_order(col: pd.Series) -> pd.Series:
    """``sort_values`` key: ``task_id`` in natural order (numbers inside an id compared as
    numbers: task_5 before task_45; t07/t7 by their text), other columns as they are."""
    if col.name != "task_id":
        return col
    text = col.astype(str)
    key = {t: i for i, t in enumerate(sorted(set(text), key=lambda t: (
        [int(p) if j % 2 else p for j, p in enumerate(_DIGITS.split(t))], t)))}
    return text.map(key)


def _higher_is_better(metric: str) -> bool:
    """The catalogue's direction of ``metric`` (unknown columns: higher is better)."""
    col = schema.TASK_COLUMNS.get(metric)
    return True if col is None or col.higher_is_better is None else bool(col.higher_is_better)


def _wide(tasks: pd.DataFrame, values: pd.Series, runs: list[str]) -> pd.DataFrame:
    """``values`` (aligned with ``tasks``) as a task × run float frame, NaN where absent."""
    frame = pd.DataFrame({"run_id": tasks["run_id"].astype(str).to_numpy(),
                          "task_id": tasks["task_id"].astype(str).to_numpy(),
                          "v": as_float(values, str(values.name)).to_numpy()})
    return frame.pivot(index="task_id", columns="run_id", values="v").reindex(columns=runs)


def _run_order(tasks: pd.DataFrame, metric: str) -> list[str]:
    """Run ids, best mean ``metric`` over the run's own tasks first (ties by first appearance)."""
    runs = list(pd.unique(tasks["run_id"].astype(str)))
    means = as_float(tasks[metric], metric).groupby(tasks["run_id"].astype(str).to_numpy()).mean()
    key = means.reindex(runs).to_numpy() * (-1 if _higher_is_better(metric) else 1)
    return [runs[i] for i in np.lexsort((np.arange(len(runs)), np.nan_to_num(key, nan=np.inf)))]


def _correct_matrix(tasks: pd.DataFrame, runs: list[str], threshold: float) -> np.ndarray:
    flags = correct_mask(tasks, threshold=threshold)
    return _wide(tasks, flags.rename("correct"), runs).to_numpy()


@needs("task_id", "final_score")
@takes_run(pools=False)
def flip_counts(tasks, *, threshold: float = schema.SUCCESS_THRESHOLD) -> pd.DataFrame:
    """For every pair of runs, how many shared tasks pass in both, fail in both, or flip.

    Parameters
    ----------
    tasks : DataFrame or Runs
        Stacked task frames (``load_runs(...).tasks``) with ``run_id``, ``task_id`` and
        ``final_score`` ([0, 1]).
    threshold : float
        A task passes when ``final_score >= threshold`` (:func:`tables._common.correct_mask`).

    Returns
    -------
    DataFrame
        One row per pair (k(k − 1)/2; runs ordered by mean final score, best first):
        ``run_a``, ``run_b``, ``n_shared`` (tasks both runs have with a score),
        ``n_both_pass``, ``n_both_fail``, ``n_pass_fail`` (solved by run a only),
        ``n_fail_pass`` (solved by run b only), ``n_flips``.

    Raises
    ------
    ValueError
        Missing columns, a task twice in one run, a ``threshold`` outside (0, 1].

    Examples
    --------
    >>> t = pd.DataFrame({"run_id": ["a"] * 3 + ["b"] * 3, "task_id": ["t1", "t2", "t3"] * 2,
    ...                   "final_score": [0.9, 0.9, 0.1, 0.9, 0.1, 0.9]})
    >>> flip_counts(t)[["n_shared", "n_pass_fail", "n_fail_pass", "n_flips"]].values.tolist()
    [[3, 1, 1, 2]]
    """
    t = _as_tasks(tasks, ["final_score"])
    runs = _run_order(t, "final_score")
    c = _correct_matrix(t, runs, threshold)
    known = ~np.isnan(c)
    p, f = (known & (c == 1)).astype(float), (known & (c == 0)).astype(float)
    i, j = np.triu_indices(len(runs), k=1)
    counts = {"n_shared": known.astype(float).T @ known, "n_both_pass": p.T @ p,
              "n_both_fail": f.T @ f, "n_pass_fail": p.T @ f, "n_fail_pass": f.T @ p}
    out = pd.DataFrame({"run_a": [runs[a] for a in i], "run_b": [runs[b] for b in j],
                        **{k: v[i, j].round().astype("int64") for k, v in counts.items()}})
    out["n_flips"] = out["n_pass_fail"] + out["n_fail_pass"]
    return out


@takes_run(pools=False)
def flips(tasks, run_a: str | None = None, run_b: str | None = None, *,
          threshold: float = schema.SUCCESS_THRESHOLD) -> pd.DataFrame:
    """The tasks whose correctness differs between two runs: solved by one of them only.

    Parameters
    ----------
    tasks : DataFrame or Runs
        Stacked task frames with ``run_id``, ``task_id``, ``final_score`` ([0, 1]) and
        optionally ``difficulty``.
    run_a, run_b : str, optional
        The two runs; the ``flip`` column names the one that solves the task. Default: the
        two runs with the highest mean final score (best as ``run_a``); with fewer than two runs
        the table is empty, with a warning.
    threshold : float
        A task passes when ``final_score >= threshold``.

    Returns
    -------
    DataFrame
        One row per flipped task among those both runs have with a score: ``task_id``,
        ``difficulty`` (labelled, from ``run_a``; <NA> if absent), ``score_a``, ``score_b``,
        ``correct_a``, ``correct_b``, ``flip`` ("solved by <run_a> only" / "... <run_b> only");
        run a's first, each part by task_id in natural order (task_5 before task_45).

    Raises
    ------
    ValueError
        An unknown run (the known ones are listed), the same run twice, missing columns.

    Examples
    --------
    >>> t = pd.DataFrame({"run_id": ["a"] * 3 + ["b"] * 3, "task_id": ["t1", "t2", "t3"] * 2,
    ...                   "final_score": [0.9, 0.9, 0.1, 0.9, 0.1, 0.9]})
    >>> flips(t, "a", "b")[["task_id", "flip"]].values.tolist()
    [['t2', 'solved by a only'], ['t3', 'solved by b only']]
    """
    t = _as_tasks(tasks, ["final_score"])
    cols = ["task_id", "difficulty", "score_a", "score_b", "correct_a", "correct_b", "flip"]
    known = list(pd.unique(t["run_id"].astype(str)))
    if run_a is None or run_b is None:
        if len(known) < 2:
            warn([f"flips need two runs; tasks has {len(known)}"])
            return pd.DataFrame(columns=cols)
        best = _run_order(t, "final_score")
        run_a, run_b = (best[0], best[1]) if run_a is None and run_b is None else \
            (run_a or next(r for r in best if r != str(run_b)),
             run_b or next(r for r in best if r != str(run_a)))
    for r in (run_a, run_b):
        if str(r) not in known:
            raise ValueError(f"no run {r!r} in tasks; known: {', '.join(known[:10])}"
                             f"{' ...' if len(known) > 10 else ''}")
    if str(run_a) == str(run_b):
        raise ValueError(f"run_a and run_b are the same run ({run_a!r})")
    side = []
    for r in (run_a, run_b):
        sub = t[t["run_id"].astype(str) == str(r)]
        side.append(pd.DataFrame({
            "task_id": sub["task_id"].astype(str).to_numpy(),
            "difficulty": sub["difficulty"].to_numpy() if "difficulty" in sub else pd.NA,
            "score": as_float(sub["final_score"], "final_score").to_numpy(),
            "correct": correct_mask(sub, threshold=threshold).to_numpy()}))
    m = side[0].merge(side[1].drop(columns="difficulty"), on="task_id", suffixes=("_a", "_b"))
    m = m[m["correct_a"].notna() & m["correct_b"].notna()]
    m = m[m["correct_a"] != m["correct_b"]].copy()
    a_only = m["correct_a"].astype(bool).to_numpy()
    m = m.assign(flip=np.where(a_only, f"solved by {run_a} only", f"solved by {run_b} only"),
                 b_only=~a_only)
    if set(m["difficulty"].dropna()) <= set(schema.DIFFICULTY_ORDER):
        m["difficulty"] = pd.Categorical(m["difficulty"], schema.DIFFICULTY_ORDER, ordered=True)
    return m.sort_values(["b_only", "task_id"], kind="stable", key=_task_order)[cols] \
        .reset_index(drop=True)


_mcnemar = cache(mcnemar_discordant)  # one test per distinct (b, c, n)


def _pair_row(x: np.ndarray, y: np.ndarray, ci: float) -> dict:
    d = x - y
    sr, summ = signed_rank(d), t_summary(d, ci)
    return {"n_shared": d.size, "mean_a": x.mean() if d.size else np.nan,
            "mean_b": y.mean() if d.size else np.nan, "mean_diff": summ["mean"],
            "ci_low": summ["ci_low"], "ci_high": summ["ci_high"], "statistic": sr["statistic"],
            "p_wilcoxon": sr["p_value"], "wilcoxon_method": sr["wilcoxon_method"],
            "note": "; ".join(n for n in (sr["note"], summ["note"] and
                                           f"mean difference: {summ['note']}") if n)}


@needs("task_id", "final_score")
@takes_run(pools=False)
def pairwise(tasks, *, threshold: float = schema.SUCCESS_THRESHOLD, metric: str = "final_score",
             ci: float = 0.95) -> pd.DataFrame:
    """Every pair of runs compared on the tasks the two share, corrected for k(k − 1)/2 tests.

    Parameters
    ----------
    tasks : DataFrame or Runs
        Stacked task frames with ``run_id``, ``task_id``, ``final_score`` ([0, 1]) and
        ``metric``. Runs on different task sets are compared on each pair's intersection.
    threshold : float
        Correct means ``final_score >= threshold`` (for McNemar's test).
    metric : str
        Score compared by the mean difference and Wilcoxon's test.
    ci : float
        Level of the t-interval of the mean difference.

    Returns
    -------
    DataFrame
        One row per pair, runs ordered by their mean ``metric`` (best first, so ``run_a`` is
        usually the better): ``run_a``, ``run_b``, ``metric``, ``n_shared`` (tasks with
        ``metric`` in both), ``mean_a``, ``mean_b``, ``mean_diff`` (a − b), ``ci_low``,
        ``ci_high``, ``statistic`` (Wilcoxon T+ of a − b), ``p_wilcoxon``, ``wilcoxon_method``,
        ``n_correct_shared`` (tasks with a score in both), ``n_pass_fail`` (a correct, b not),
        ``n_fail_pass``, ``p_mcnemar``, ``mcnemar_method``, ``p_holm`` and ``p_bh`` (Wilcoxon p
        adjusted over all pairs), ``p_mcnemar_holm``, ``p_mcnemar_bh``, ``threshold``,
        ``note``.

    Raises
    ------
    ValueError
        Missing columns, a task twice in one run, ``threshold`` or ``ci`` out of range.

    Notes
    -----
    Per pair, on the tasks both runs have a value for: the t-interval of the mean paired
    difference (:func:`stats.paired_comparison`'s interval), Wilcoxon's signed-rank test with
    R's defaults (:mod:`stats.nonparametric`: exact below 50 pairs without ties or zeros, else
    the normal approximation with tie and continuity correction; all differences zero gives
    p = 1) and McNemar's exact test of correctness (:func:`stats.mcnemar`; no discordant task
    gives p = 1). Holm (1979) and Benjamini–Hochberg (1995) adjust each test's p over all pairs
    (:func:`stats.adjust_pvalues`; pairs without shared tasks have p = NaN and are not
    counted). The tests of different pairs share runs and so are dependent: Holm controls the
    family-wise error under any dependence, BH the false discovery rate under positive
    dependence.

    Examples
    --------
    >>> t = pd.DataFrame({"run_id": ["a"] * 4 + ["b"] * 4, "task_id": ["t1", "t2", "t3", "t4"] * 2,
    ...                   "final_score": [0.9, 0.8, 0.95, 0.85, 0.1, 0.2, 0.3, 0.4]})
    >>> pairwise(t)[["run_a", "run_b", "n_shared", "p_wilcoxon", "p_mcnemar"]].values.tolist()
    [['a', 'b', 4, 0.125, 0.125]]
    """
    check_ci(ci)
    t = _as_tasks(tasks, ["final_score", metric])
    runs = _run_order(t, metric)
    w = _wide(t, t[metric].rename(metric), runs).to_numpy()
    c = _correct_matrix(t, runs, threshold)
    ok = ~np.isnan(w)
    n_c, pf, fp = discordant_counts(c)
    rows = []
    for a, b in zip(*np.triu_indices(len(runs), k=1), strict=True):
        m = ok[:, a] & ok[:, b]
        row = {"run_a": runs[a], "run_b": runs[b], "metric": metric,
               **_pair_row(w[m, a], w[m, b], ci)}
        kb, kc, kn = int(round(pf[a, b])), int(round(fp[a, b])), int(round(n_c[a, b]))
        _, pm, meth, note = _mcnemar(kb, kc, n=kn)
        row.update(n_correct_shared=kn, n_pass_fail=kb, n_fail_pass=kc, p_mcnemar=pm,
                   mcnemar_method=meth, note="; ".join(x for x in (row["note"], note) if x))
        rows.append(row)
    return _adjusted(pd.DataFrame(rows, columns=[c for c in _PAIR_COLUMNS if c not in _ADDED]),
                     threshold)


_PAIR_COLUMNS = ["run_a", "run_b", "metric", "n_shared", "mean_a", "mean_b", "mean_diff",
                 "ci_low", "ci_high", "statistic", "p_wilcoxon", "wilcoxon_method",
                 "n_correct_shared", "n_pass_fail", "n_fail_pass", "p_mcnemar", "mcnemar_method",
                 "p_holm", "p_bh", "p_mcnemar_holm", "p_mcnemar_bh", "threshold", "note"]
_ADDED = ("p_holm", "p_bh", "p_mcnemar_holm", "p_mcnemar_bh", "threshold")


def _adjusted(out: pd.DataFrame, threshold: float) -> pd.DataFrame:
    for col in ("p_holm", "p_bh", "p_mcnemar_holm", "p_mcnemar_bh"):
        raw = out["p_mcnemar" if "mcnemar" in col else "p_wilcoxon"].to_numpy(float)
        out[col] = adjust_pvalues(raw, method=col.rsplit("_", 1)[1]).p_adjusted
    out["threshold"] = threshold
    none = int((out["n_shared"] == 0).sum())
    zero = int(out["wilcoxon_method"].str.contains("0 non-zero").sum())
    warn([f"{none} pair(s) share no task: p = NaN, not counted in the corrections" if none
          else "", f"{zero} pair(s) with all paired differences zero: Wilcoxon p set to 1.0"
          if zero else ""])
    return out[_PAIR_COLUMNS].astype({c: "int64" if c.startswith("n_") else "float64" for c in (
        "n_shared", "n_correct_shared", "n_pass_fail", "n_fail_pass", "mean_a", "mean_b",
        "mean_diff", "ci_low", "ci_high", "statistic", "p_wilcoxon", "p_mcnemar")})


_ITEM_COLUMNS = ["task_id", "difficulty", "n_runs", "n_solved", "solve_rate", "mean_score",
                 "outcome_variance", "solved_by"]


def _labels(t: pd.DataFrame) -> tuple[pd.Series, int]:
    """The labelled difficulty per task (the most frequent label across runs) and how many
    tasks carry more than one label."""
    if "difficulty" not in t:
        return pd.Series(dtype=object), 0
    lab = pd.DataFrame({"task_id": t["task_id"].astype(str).to_numpy(),
                        "difficulty": t["difficulty"].astype("string").to_numpy()}).dropna()
    lab["difficulty"] = lab["difficulty"].str.strip()
    unknown = sorted(set(lab["difficulty"]) - set(schema.DIFFICULTY_ORDER))
    if unknown:
        raise ValueError(f"difficulty values {unknown[:5]} are not among "
                         f"{', '.join(schema.DIFFICULTY_ORDER)}")
    counts = lab.value_counts(sort=False).rename("k").reset_index()
    n_multi = int(counts.groupby("task_id").size().gt(1).sum())
    best = counts.sort_values(["task_id", "k", "difficulty"], ascending=[True, False, True],
                              kind="stable").drop_duplicates("task_id")
    return best.set_index("task_id")["difficulty"], n_multi


@needs("task_id", "final_score", uses=("difficulty",))
@takes_run(pools=False)
def items(tasks, *, threshold: float = schema.SUCCESS_THRESHOLD) -> pd.DataFrame:
    """Item analysis across a sweep: per task, how many runs solve it (observed difficulty)
    beside its labelled difficulty.

    Parameters
    ----------
    tasks : DataFrame or Runs
        Stacked task frames with ``run_id``, ``task_id``, ``final_score`` ([0, 1]) and
        optionally ``difficulty``.
    threshold : float
        Solved means ``final_score >= threshold`` (:func:`tables._common.correct_mask`).

    Returns
    -------
    DataFrame
        One row per task, hardest first (by ``solve_rate``, then ``task_id`` in natural order:
        task_5 before task_45): ``task_id``,
        ``difficulty`` (the label, ordered Easy < Medium < Hard < Extreme; <NA> without one),
        ``n_runs`` (runs with a score for the task), ``n_solved``, ``solve_rate``
        (n_solved/n_runs), ``mean_score`` (mean final score over those runs),
        ``outcome_variance`` (solve_rate · (1 − solve_rate): 0 when every run agrees, 0.25 when
        half solve it), ``solved_by`` ("none", "all", "some"; "n/a" when no run has a score).

    Raises
    ------
    ValueError
        Missing columns, a task twice in one run, a ``threshold`` outside (0, 1].

    Notes
    -----
    Tasks that no run or every run solves carry no information about which run is better;
    tasks with the largest outcome variance separate the runs most. When runs label a task
    differently, the most frequent label is used and a warning gives the number of such tasks.

    Examples
    --------
    >>> t = pd.DataFrame({"run_id": ["a"] * 3 + ["b"] * 3, "task_id": ["t1", "t2", "t3"] * 2,
    ...                   "difficulty": ["Easy", "Hard", "Hard"] * 2,
    ...                   "final_score": [0.9, 0.1, 0.9, 0.9, 0.2, 0.1]})
    >>> items(t)[["task_id", "n_solved", "solve_rate", "solved_by"]].values.tolist()
    [['t2', 0, 0.0, 'none'], ['t3', 1, 0.5, 'some'], ['t1', 2, 1.0, 'all']]
    """
    t = _as_tasks(tasks, ["final_score"])
    solved = correct_mask(t, threshold=threshold).astype("Float64").to_numpy(float, na_value=np.nan)
    g = pd.DataFrame({"task_id": t["task_id"].astype(str).to_numpy(), "solved": solved,
                      "score": as_float(t["final_score"], "final_score").to_numpy()})
    agg = g.groupby("task_id", sort=True).agg(n_runs=("solved", "count"),
                                               n_solved=("solved", "sum"),
                                               mean_score=("score", "mean"))
    labels, n_multi = _labels(t)
    out = agg.reset_index()
    out["difficulty"] = pd.Categorical(labels.reindex(out["task_id"]).to_numpy(),
                                       categories=schema.DIFFICULTY_ORDER, ordered=True)
    n = out["n_runs"].to_numpy()
    rate = np.divide(out["n_solved"].to_numpy(), n, out=np.full(n.size, np.nan), where=n > 0)
    out["solve_rate"] = rate
    out["outcome_variance"] = rate * (1 - rate)
    out["solved_by"] = np.select([n == 0, out["n_solved"] == 0, out["n_solved"] == n],
                                 ["n/a", "none", "all"], "some")
    warn([f"{n_multi} task(s) carry different difficulty labels in different runs: the most "
          "frequent label is used" if n_multi else ""])
    out = out.astype({"n_runs": "int64", "n_solved": "int64"})
    return out.sort_values(["solve_rate", "task_id"], kind="stable", na_position="last",
                           key=_task_order)[_ITEM_COLUMNS].reset_index(drop=True)
