"""Phase 0 MAS analyses: specialist value, recovery, coordinator interventions.

Conventions as in :mod:`dabench_analysis.tables.ablation`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dabench_analysis import schema
from dabench_analysis.schema import require_columns
from dabench_analysis.schema._labels import value_label
from dabench_analysis.schema.needs import needs
from dabench_analysis.stats._differences import two_proportions
from dabench_analysis.stats._inputs import as_bool, check_ci, warn
from dabench_analysis.stats._proportions import mcnemar_discordant, proportion_interval
from dabench_analysis.tables._common import TasksLike, takes_run


def _correctness(tasks: pd.DataFrame, correct: str | None, threshold: float) -> pd.Series:
    if correct is None:
        require_columns(tasks, ["final_score"])
        return schema.correct(tasks["final_score"], threshold)
    require_columns(tasks, [correct])
    return as_bool(tasks[correct], correct)


@needs("final_score", "schema_agent_used", "domain_agent_used", "document_agent_used",
       by_argument={"specialists": "{}_agent_used"})
@takes_run()
def specialist_value(tasks: TasksLike, *, correct: str | None = None,
                     threshold: float = schema.SUCCESS_THRESHOLD,
                     specialists: tuple[str, ...] = tuple(schema.columns.SPECIALISTS),
                     ci: float = 0.95) -> pd.DataFrame:
    """Specialist agent value: accuracy with vs without each specialist (Phase 0 Task 4).

    Parameters
    ----------
    tasks : DataFrame, Run or Runs
        One row per task with ``<specialist>_agent_used`` flags (pandas ``boolean`` or 0/1) and
        ``final_score`` (or the ``correct`` column).
        A Run or Runs gives its ``tasks``; several runs are pooled, with a PooledRunsWarning.
    correct : str, optional
        Flag column of correctness; default ``final_score >= threshold``
        (:func:`dabench_analysis.schema.correct`).
    threshold : float
        Success threshold in (0, 1]; default 0.8
        (seed 000).
    specialists : tuple of str
        Specialists to analyse (default schema, domain, document).
    ci : float
        Interval level.

    Returns
    -------
    DataFrame
        One row per specialist: ``specialist``, ``column``, ``n_used``, ``n_not_used``,
        ``n_missing`` (flag or correctness missing), ``accuracy_with``, ``ci_low_with``,
        ``ci_high_with``, ``accuracy_without``, ``ci_low_without``, ``ci_high_without`` (Wilson),
        ``delta`` (with − without, proportion points), ``ci_low``, ``ci_high`` (Newcombe hybrid
        score interval of the difference), ``p_value`` (Fisher's exact, two-sided), ``method``,
        ``note``.

    Raises
    ------
    ValueError
        A missing specialist column or outcome column, or a ``threshold`` outside (0, 1].

    Notes
    -----
    Newcombe (1998) method 10 via statsmodels ``confint_proportions_2indep(method="newcomb")``;
    Fisher's exact test via ``scipy.stats.fisher_exact`` (as R ``fisher.test``). A specialist
    used on every task (or none) has no comparison group: delta, interval and p are NaN with a
    warning. Specialists are called on the tasks that need them, so delta is an association.

    References
    ----------
    Newcombe, R. G. (1998). Interval estimation for the difference between independent
    proportions: comparison of eleven methods. Statistics in Medicine 17, 873–890.
    Fagerland, M. W., Lydersen, S., Laake, P. (2015). Recommended confidence intervals for two
    independent binomial proportions. Statistical Methods in Medical Research 24(2), 224–254.

    Examples
    --------
    >>> df = pd.DataFrame({"schema_agent_used": [True] * 4 + [False] * 4,
    ...                    "domain_agent_used": False, "document_agent_used": False,
    ...                    "final_score": [1, 1, 1, 0, 1, 0, 0, 0]})
    >>> out = specialist_value(df, specialists=("schema",))
    >>> float(out.delta[0]), round(float(out.p_value[0]), 4)  # R fisher.test: p = 0.4857
    (0.5, 0.4857)
    """
    check_ci(ci)
    ok = _correctness(tasks, correct, threshold)
    rows, notes = [], []
    for sp in specialists:
        col = f"{sp}_agent_used"
        require_columns(tasks, [col])
        used = as_bool(tasks[col], col)
        keep = (used.notna() & ok.notna()).to_numpy()
        u, c = used.to_numpy(dtype=bool, na_value=False)[keep], ok.to_numpy(
            dtype=bool, na_value=False)[keep]
        n1, n2 = int(u.sum()), int((~u).sum())
        k1, k2 = int(c[u].sum()), int(c[~u].sum())
        (l1, h1), (l2, h2) = (proportion_interval(k1, n1, ci)[:2],
                              proportion_interval(k2, n2, ci)[:2])
        both = two_proportions(k1, n1, k2, n2, ci=ci)  # the package's two-proportion rule
        lo, hi, p = both["ci_low"], both["ci_high"], both["p_value"]
        note = ""
        if n1 == 0 or n2 == 0:
            name = value_label("specialist", sp)  # "Schema agent", as the table
            note = f"{name}: no comparison group (used on {n1} of {n1 + n2} tasks)"
            notes.append(note)
        a1, a2 = (k1 / n1 if n1 else np.nan), (k2 / n2 if n2 else np.nan)
        rows.append({"specialist": sp, "column": col, "n_used": n1, "n_not_used": n2,
                     "n_missing": int((~keep).sum()), "accuracy_with": a1, "ci_low_with": l1,
                     "ci_high_with": h1, "accuracy_without": a2, "ci_low_without": l2,
                     "ci_high_without": h2, "delta": a1 - a2, "ci_low": lo, "ci_high": hi,
                     "p_value": p, "method": "Wilson; Newcombe difference; Fisher exact",
                     "note": note})
    warn(notes)
    return pd.DataFrame(rows)


@needs("initial_answer_correct", "final_answer_correct",
       uses=("recovered_after_replan", "recovered_after_retry", "final_score"))
@takes_run()
def mas_effectiveness(tasks: TasksLike, *, ci: float = 0.95,
                      threshold: float = schema.SUCCESS_THRESHOLD) -> pd.DataFrame:
    """MAS effectiveness: first-attempt vs final accuracy and recovery (Phase 0 Task 2).

    Parameters
    ----------
    tasks : DataFrame, Run or Runs
        One row per task with flags ``initial_answer_correct``, ``final_answer_correct`` and,
        optionally, ``recovered_after_replan``, ``recovered_after_retry`` and
        ``final_score`` ([0, 1]).
        A Run or Runs gives its ``tasks``; several runs are pooled, with a PooledRunsWarning.
    ci : float
        Level of the Wilson intervals.
    threshold : float
        The analysis' success threshold in (0, 1] (default 0.8): ``final_score_accuracy`` and
        ``n_flag_disagrees`` compare the harness's flag with the one outcome rule,
        :func:`dabench_analysis.schema.correct` at this threshold.

    Returns
    -------
    DataFrame
        One row: ``n`` (tasks with both flags), ``n_missing``, ``first_attempt_accuracy``,
        ``first_attempt_ci_low``, ``first_attempt_ci_high``, ``final_accuracy``,
        ``final_ci_low``, ``final_ci_high``, ``recovery_gain`` (final − first attempt accuracy,
        proportion points), ``n_recovered`` (wrong first, right finally), ``n_regressed`` (right
        first, wrong finally), ``n_recovered_after_replan``, ``n_recovered_after_retry``
        (<NA> when the column is absent), ``statistic``, ``p_value`` (exact McNemar on
        recovered vs regressed), ``method``, ``note``, then ``threshold``,
        ``final_score_accuracy`` (share of the ``n`` tasks with ``final_score >= threshold``,
        over those with a score; NaN without a ``final_score`` column), ``n_flag_disagrees``
        (tasks where ``final_answer_correct`` differs from ``final_score >= threshold``; <NA>
        without ``final_score``) and ``outcome_source`` (which columns are the harness's own
        flags and which the score rule).

    Raises
    ------
    ValueError
        Missing ``initial_answer_correct`` / ``final_answer_correct`` or non-boolean values.

    Notes
    -----
    ``first_attempt_accuracy``, ``final_accuracy``, the recoveries and the McNemar test read
    the harness's own flags ``initial_answer_correct`` / ``final_answer_correct`` (the
    harness's rule: the eval-v2 guide's 0.8 on its own score), not the analysis' threshold;
    the table states so in ``outcome_source`` and puts the analysis' accuracy at
    ``threshold`` beside them (``final_score_accuracy``, as Table 2's accuracy), with the
    count of tasks whose flag disagrees with it. The seed's "MAS Recovery Gain" is reported as an absolute difference of accuracies. The
    McNemar test asks whether recoveries outnumber regressions beyond chance; with no
    discordant task p = 1.0.

    References
    ----------
    McNemar, Q. (1947). Psychometrika 12, 153–157.

    Examples
    --------
    >>> df = pd.DataFrame({"initial_answer_correct": [True, False, False, False, True],
    ...                    "final_answer_correct": [True, True, True, False, True]})
    >>> out = mas_effectiveness(df)
    >>> float(out.first_attempt_accuracy[0]), float(out.final_accuracy[0]), int(out.n_recovered[0])
    (0.4, 0.8, 2)
    >>> df["final_score"] = [0.9, 0.85, 0.7, 0.1, 0.95]
    >>> out = mas_effectiveness(df, threshold=0.8)
    >>> float(out.final_score_accuracy[0]), int(out.n_flag_disagrees[0])
    (0.6, 1)
    """
    check_ci(ci)
    ini = as_bool(tasks["initial_answer_correct"], "initial_answer_correct")
    fin = as_bool(tasks["final_answer_correct"], "final_answer_correct")
    keep = (ini.notna() & fin.notna()).to_numpy()
    i = ini.to_numpy(dtype=bool, na_value=False)[keep]
    f = fin.to_numpy(dtype=bool, na_value=False)[keep]
    n, notes = int(keep.sum()), []
    if (~keep).any():
        notes.append(f"{int((~keep).sum())} tasks with a missing correctness flag excluded")
    k1, k2 = int(i.sum()), int(f.sum())
    rec, reg = int((~i & f).sum()), int((i & ~f).sum())
    (l1, h1), (l2, h2) = (proportion_interval(k1, n, ci)[:2],
                          proportion_interval(k2, n, ci)[:2])
    extra = {}
    for c in ("recovered_after_replan", "recovered_after_retry"):
        extra[f"n_{c}"] = (int(as_bool(tasks[c], c)[keep].fillna(False).sum())
                           if c in tasks.columns else pd.NA)
    test = mcnemar_discordant(reg, rec, n=n, exact=True)
    stat, p, note = test.statistic, test.p_value, test.note
    notes.append(note)
    warn(notes)
    score_rule = _score_rule(tasks, fin, keep, threshold)
    return pd.DataFrame([{
        "n": n, "n_missing": int((~keep).sum()),
        "first_attempt_accuracy": k1 / n if n else np.nan, "first_attempt_ci_low": l1,
        "first_attempt_ci_high": h1, "final_accuracy": k2 / n if n else np.nan,
        "final_ci_low": l2, "final_ci_high": h2,
        "recovery_gain": (k2 - k1) / n if n else np.nan, "n_recovered": rec, "n_regressed": reg,
        **extra, "statistic": stat, "p_value": p,
        "method": "Wilson intervals; McNemar exact (recovered vs regressed)",
        "note": "; ".join(n for n in notes if n), **score_rule}]).astype(
            {"n_recovered_after_replan": "Int64", "n_recovered_after_retry": "Int64",
             "n_flag_disagrees": "Int64"})


def _score_rule(tasks: pd.DataFrame, final_flag: pd.Series, keep, threshold: float) -> dict:
    """The one outcome rule beside the harness's flags: accuracy at ``threshold`` over the
    kept tasks with a score, and how many of them the ``final_answer_correct`` flag contradicts."""
    source = ("harness flags: initial_answer_correct, final_answer_correct (first_attempt_"
              "accuracy, final_accuracy, recoveries, McNemar)")
    if "final_score" not in tasks.columns:
        return {"threshold": threshold, "final_score_accuracy": np.nan,
                "n_flag_disagrees": pd.NA, "outcome_source": source}
    ok = schema.correct(tasks["final_score"], threshold)[keep]
    flag = final_flag[keep]
    scored = ok.notna().to_numpy()
    ok_b = ok.to_numpy(dtype=bool, na_value=False)[scored]
    flag_b = flag.to_numpy(dtype=bool, na_value=False)[scored]
    return {"threshold": threshold,
            "final_score_accuracy": float(ok_b.mean()) if scored.any() else np.nan,
            "n_flag_disagrees": int((ok_b != flag_b).sum()),
            "outcome_source": source + f"; final_score_accuracy, n_flag_disagrees: "
                              f"final_score >= {threshold:g}"}


@needs("replan_requested", "replan_successful", "retry_requested", "retry_successful")
@takes_run()
def coordinator_effectiveness(tasks: TasksLike, *, ci: float = 0.95) -> pd.DataFrame:
    """Coordinator intervention effectiveness: replan and retry success rates (Phase 0 Task 3).

    Parameters
    ----------
    tasks : DataFrame, Run or Runs
        One row per task with flags ``replan_requested``, ``replan_successful``,
        ``retry_requested``, ``retry_successful``.
        A Run or Runs gives its ``tasks``; several runs are pooled, with a PooledRunsWarning.
    ci : float
        Level of the Wilson interval of the success rate.

    Returns
    -------
    DataFrame
        One row per intervention ("replan", "retry"): ``intervention``, ``n_tasks`` (tasks with
        a known ``*_requested``), ``n_missing``, ``requested``, ``successful`` (among requested),
        ``success_rate``, ``ci_low``, ``ci_high``, ``method``, ``note``. None requested gives
        success_rate NaN and the note "n/a (none requested)".

    Raises
    ------
    ValueError
        Missing columns or non-boolean values.

    Notes
    -----
    A task marked successful without a request is inconsistent; it is not counted as a
    success and a warning gives the count. A requested task with a missing ``*_successful`` is
    left out of the rate and counted in ``n_missing``.

    Examples
    --------
    >>> df = pd.DataFrame({"replan_requested": [True, True, False, True],
    ...                    "replan_successful": [True, False, False, True],
    ...                    "retry_requested": [False, False, False, False],
    ...                    "retry_successful": [False, False, False, False]})
    >>> out = coordinator_effectiveness(df)
    >>> out[["intervention", "requested", "successful"]].values.tolist()
    [['replan', 3, 2], ['retry', 0, 0]]
    """
    check_ci(ci)
    rows, notes = [], []
    for kind in ("replan", "retry"):
        rq, sc = f"{kind}_requested", f"{kind}_successful"
        require_columns(tasks, [rq, sc])
        r, s = as_bool(tasks[rq], rq), as_bool(tasks[sc], sc)
        req = r.fillna(False).to_numpy(dtype=bool)
        miss = r.isna().to_numpy() | (req & s.isna().to_numpy())
        succ = s.fillna(False).to_numpy(dtype=bool)
        odd = int((succ & ~r.fillna(True).to_numpy(dtype=bool)).sum())
        if odd:
            notes.append(f"{odd} tasks have {sc} without {rq}; not counted as successes")
        n_req, n_succ = int((req & ~miss).sum()), int((req & succ & ~miss).sum())
        lo, hi = proportion_interval(n_succ, n_req, ci)[:2]
        rows.append({"intervention": kind, "n_tasks": int((~r.isna()).sum()),
                     "n_missing": int(miss.sum()), "requested": n_req, "successful": n_succ,
                     "success_rate": n_succ / n_req if n_req else np.nan, "ci_low": lo,
                     "ci_high": hi, "method": "Wilson",
                     "note": "" if n_req else "n/a (none requested)"})
    warn(notes)
    return pd.DataFrame(rows)
