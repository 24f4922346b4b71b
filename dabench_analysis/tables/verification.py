"""Verification timeline: the coordinator's execution approval against ground-truth correctness.

Seed 000, Phase 0 Task 7 "Verification Timeline Clarity": eval-v2 separates "Execution
Approval" (the coordinator's decision, ``aat_verification_passed`` /
``coordinator_final_decision``) from "Ground Truth Result" (``final_score >= 0.8``, or the
run's success threshold: :func:`dabench_analysis.schema.correct`), because an
approved answer is not necessarily a correct one. This module cross-tabulates the two.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dabench_analysis import schema
from dabench_analysis.schema.needs import needs
from dabench_analysis.stats._inputs import as_bool, check_ci, warn
from dabench_analysis.stats._proportions import proportion_ci
from dabench_analysis.tables._common import TasksLike, require_rows, takes_run

#: The approval columns, in the order they are read (the flag first, the decision as a check).
APPROVAL_COLUMNS = ("aat_verification_passed", "coordinator_final_decision")


COLUMNS = ["measure", "kind", "approved", "correct", "count", "n", "proportion", "ci_low",
           "ci_high", "method", "note"]


# measure, kind, approved, correct, numerator cells, denominator cells (a b c d as in Notes)
_MEASURES = (
    ("approved_correct", "cell", True, True, "a", "abcd"),
    ("approved_incorrect", "cell", True, False, "b", "abcd"),
    ("not_approved_correct", "cell", False, True, "c", "abcd"),
    ("not_approved_incorrect", "cell", False, False, "d", "abcd"),
    ("approval_rate", "rate", pd.NA, pd.NA, "ab", "abcd"),
    ("accuracy", "rate", pd.NA, pd.NA, "ac", "abcd"),
    ("correct_among_approved", "rate", pd.NA, pd.NA, "a", "ab"),
    ("approved_among_correct", "rate", pd.NA, pd.NA, "a", "ac"),
    ("correct_among_not_approved", "rate", pd.NA, pd.NA, "c", "cd"),
    ("approved_among_incorrect", "rate", pd.NA, pd.NA, "b", "bd"),
    ("agreement", "rate", pd.NA, pd.NA, "ad", "abcd"),
)




def _approval(tasks: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """(approved, mismatch): the flag, else the decision; where both are known and disagree,
    ``mismatch`` is True."""
    present = [c for c in APPROVAL_COLUMNS if c in tasks]
    if not present:
        raise ValueError("verification timeline needs aat_verification_passed or "
                         "coordinator_final_decision; neither is in tasks")
    decision = None
    if "coordinator_final_decision" in tasks:
        d = tasks["coordinator_final_decision"].astype("string")
        decision = (d == "APPROVE_FINAL").astype("boolean")
    if "aat_verification_passed" not in tasks:
        return decision, pd.Series(False, index=tasks.index)
    flag = as_bool(tasks["aat_verification_passed"], "aat_verification_passed")
    if decision is None:
        return flag, pd.Series(False, index=tasks.index)
    mismatch = (flag != decision).fillna(False).astype(bool)
    return flag.fillna(decision), mismatch


@needs("final_score", uses=("aat_verification_passed", "coordinator_final_decision"),
       uses_at_least=1)
@takes_run()
def verification_timeline(tasks: TasksLike, *, threshold: float = schema.SUCCESS_THRESHOLD,
                          ci: float = 0.95) -> pd.DataFrame:
    """Coordinator approval × answer correctness: the four cells and the rates between them.

    Parameters
    ----------
    tasks : DataFrame, Run or Runs
        One row per task with ``final_score`` ([0, 1]) and ``aat_verification_passed`` (flag:
        pandas ``boolean``, bool, 0/1 or the package's flag spellings) and/or
        ``coordinator_final_decision`` (APPROVE_FINAL, RETRY_EXECUTION, REPLAN).
        A Run or Runs gives its ``tasks``; several runs are pooled, with a PooledRunsWarning.
    threshold : float
        Correct means ``final_score >= threshold``; in (0, 1]; default 0.8 (seed 000).
    ci : float
        Level of the Wilson intervals, in (0, 1).

    Returns
    -------
    DataFrame
        One row per measure, in this order: the cells ``approved_correct``,
        ``approved_incorrect``, ``not_approved_correct``, ``not_approved_incorrect`` (shares
        of all tasks), then the rates ``approval_rate``, ``accuracy``,
        ``correct_among_approved`` (is an approval right?), ``approved_among_correct``
        (are right answers approved?), ``correct_among_not_approved``,
        ``approved_among_incorrect`` (false approvals) and ``agreement`` (approval equals
        correctness). Columns: ``measure``; ``kind`` (cell, rate); ``approved``, ``correct``
        (pandas ``boolean``: the cell's condition; <NA> for rates); ``count`` (tasks counted,
        the numerator) and ``n`` (the denominator), both ``Int64``; ``proportion``
        (count / n, [0, 1]); ``ci_low``, ``ci_high`` (Wilson score interval, no continuity
        correction); ``method`` ("wilson"); ``note`` (why a proportion is undefined).

    Raises
    ------
    ValueError
        ``final_score`` or both approval columns missing; no task rows; ``threshold`` not a
        number in (0, 1]; ``ci`` outside (0, 1); a flag that is not boolean.

    Warns
    -----
    StatisticsWarning
        Tasks left out: a missing score or approval, or a flag that disagrees with the
        decision (the ``verification_outcome_mismatch`` of ``dabench-analysis validate``);
        proportions with n = 0 (NaN).

    Notes
    -----
    Approval is ``aat_verification_passed``; a task without it uses
    ``coordinator_final_decision == "APPROVE_FINAL"`` (any other decision: not approved);
    with both present they must agree (seed 000 §Critical Invariants). With a = approved and
    correct, b = approved and incorrect, c = not approved and correct, d = not approved and
    incorrect, N = a + b + c + d: cells are a/N, b/N, c/N, d/N; approval_rate = (a + b)/N,
    accuracy = (a + c)/N, correct_among_approved = a/(a + b), approved_among_correct =
    a/(a + c), correct_among_not_approved = c/(c + d), approved_among_incorrect = b/(b + d),
    agreement = (a + d)/N. Intervals by :func:`dabench_analysis.stats.proportion_ci` (Wilson,
    equal to R ``prop.test(x, n, correct = FALSE)$conf.int``; R's default adds a continuity
    correction). Each rate is a separate interval, not adjusted for multiplicity.

    References
    ----------
    Wilson, E. B. (1927). Probable inference, the law of succession, and statistical
    inference. Journal of the American Statistical Association 22(158), 209–212.

    Examples
    --------
    >>> df = pd.DataFrame({"aat_verification_passed": [1, 1, 1, 0],
    ...                    "final_score": [0.9, 0.8, 0.3, 0.95]})
    >>> out = verification_timeline(df).set_index("measure")
    >>> out.loc[["approved_incorrect", "correct_among_approved"], ["count", "n"]].values.tolist()
    [[1, 4], [2, 3]]
    """
    check_ci(ci)
    require_rows(tasks)
    approved, mismatch = _approval(tasks)
    correct = schema.correct(tasks["final_score"], threshold)
    keep = (approved.notna() & correct.notna()).to_numpy() & ~mismatch.to_numpy()
    notes = []
    if mismatch.any():
        notes.append(f"{int(mismatch.sum())} task(s) left out: aat_verification_passed "
                     "disagrees with coordinator_final_decision (verification_outcome_mismatch)")
    if (n_na := int((~keep).sum() - mismatch.sum())):
        notes.append(f"{n_na} task(s) left out: final_score or approval missing")
    ok = approved.to_numpy(dtype=bool, na_value=False)[keep]
    right = correct.to_numpy(dtype=bool, na_value=False)[keep]
    cells = {"a": ok & right, "b": ok & ~right, "c": ~ok & right, "d": ~ok & ~right}
    count = {key: int(v.sum()) for key, v in cells.items()}
    rows = [(m, kind, app, cor, sum(count[x] for x in num), sum(count[x] for x in den))
            for m, kind, app, cor, num, den in _MEASURES]
    out = pd.DataFrame(rows, columns=COLUMNS[:6])
    out["count"], out["n"] = out["count"].astype("Int64"), out["n"].astype("Int64")
    out[["approved", "correct"]] = out[["approved", "correct"]].astype("boolean")
    out[["proportion", "ci_low", "ci_high"]] = np.nan
    pos = (out["n"] > 0).to_numpy()
    if pos.any():
        wil = proportion_ci(out["count"][pos].to_numpy(int), out["n"][pos].to_numpy(int), ci=ci)
        out.loc[pos, ["proportion", "ci_low", "ci_high"]] = \
            wil[["proportion", "ci_low", "ci_high"]].to_numpy()
    out["method"] = "wilson"
    out["note"] = np.where(pos, "", "undefined: n = 0")
    if not pos.all():
        notes.append(f"{int((~pos).sum())} proportion(s) with n = 0: "
                     f"{', '.join(out['measure'][~pos])} undefined (NaN)")
    warn(notes)
    return out[COLUMNS]
