"""Harness health (0–10) and run quality: the components, the weights, the three causes that cap
the score (seed 000 §Troubleshooting "Health score < 7"), the bands, and the validation's tables
(health breakdown, full findings).

The formula, its thresholds and why they were chosen: :func:`harness_score`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import pandas as pd

from dabench_analysis import schema
from dabench_analysis.load.findings import Finding
from dabench_analysis.load.run import Run
from dabench_analysis.validate.invariants import _INVARIANT_CHECKS, GAP_LIMIT, TOOL_FAILURE_LIMIT

#: §Health Score Interpretation: lower bound of each band and its action.
BANDS = ((9.0, "HEALTHY", "Ready to use"), (7.0, "GOOD", "Review warnings"),
         (5.0, "FAIR", "Fix issues before publication"), (3.0, "POOR", "Investigation required"),
         (0.0, "UNHEALTHY", "Do not use"))


#: Weights of the weighted part of the harness health score (see :func:`harness_score`).
HARNESS_WEIGHTS = {"reconciliation": 0.4, "validity": 0.2, "attribution": 0.2,
                   "time_accounting": 0.1, "tool_reliability": 0.1}


#: Share of tasks (timed tasks; failed tasks) above which time gaps or missing attribution
#: count as a cause of a score below 7 (ours: the guide gives no share; 10 % as for tool calls).
TASK_SHARE_LIMIT = 0.10


class Cause(NamedTuple):
    """One cause of §Troubleshooting "Health score < 7", measured as ``1 - component``."""

    component: str
    limit: float
    measure: str


#: The guide's three causes of a harness health score below 7, in its order.
CAUSES = {
    "time_gaps": Cause("time_accounting", TASK_SHARE_LIMIT,
                       "share of timed tasks with more than 50 % of execution_time unaccounted "
                       "(time accounting gap > 50 %)"),
    "tool_failures": Cause("tool_reliability", TOOL_FAILURE_LIMIT,
                           "tool failure rate: sum(tool_failures) / sum(tool_calls)"),
    "missing_attribution": Cause("attribution", TASK_SHARE_LIMIT,
                                 "share of failed tasks (final_score < 0.8) without a "
                                 "failure_category (missing or UNKNOWN_FAILURE)"),
}


#: Cap of the score with k >= 1 causes: ``CAP_TOP - CAP_STEP * k`` (6, 4, 2).
CAP_TOP, CAP_STEP = 8.0, 2.0


NOT_EVALUATED = f"not evaluated: no {schema.TASK_FILE} (run eval-v2 first); no health score"


@dataclass(frozen=True)
class Health:
    """Harness health and run quality (seed 000 V2.1 item 2, "Separated Health Assessments").

    Attributes
    ----------
    harness_score : float
        0–10 (:func:`harness_score`); NaN for a run that is not evaluated.
    harness_status : {"HEALTHY", "DEGRADED", "UNHEALTHY", "UNDEFINED"}
        V2.1 thresholds; HEALTHY also needs no error finding; UNDEFINED without a score.
    harness_band, action : str
        §Health Score Interpretation (HEALTHY, GOOD, FAIR, POOR, UNHEALTHY) and what to do;
        "UNDEFINED" and the reason without a score.
    components : dict of str to float
        reconciliation, validity, attribution, time_accounting, tool_reliability, each [0, 1].
    run_quality_score : float
        0–10, NaN for a run without tasks.
    run_quality_status : {"HEALTHY", "DEGRADED", "UNHEALTHY", "UNDEFINED"}
    answer_accuracy, execution_success_rate : float
        Shares in [0, 1] (final_score >= the run's success threshold, default 0.8;
        execution_success), NaN without values.
    weighted_score : float
        0–10, the weighted part of the score before any cap.
    causes : tuple of str
        Keys of :data:`CAUSES` found in the run (each caps the score below 7).
    success_threshold : float
        The success threshold of ``answer_accuracy`` (:func:`dabench_analysis.schema.correct`).
    """

    harness_score: float
    harness_status: str
    harness_band: str
    action: str
    components: dict[str, float]
    run_quality_score: float
    run_quality_status: str
    answer_accuracy: float
    execution_success_rate: float
    weighted_score: float = float("nan")
    causes: tuple[str, ...] = ()
    success_threshold: float = schema.SUCCESS_THRESHOLD


def _status(score: float, n_errors: int = 0) -> str:
    """V2.1: HEALTHY (9.0+, no errors), DEGRADED (7.0+), UNHEALTHY (else); NaN -> UNDEFINED."""
    if math.isnan(score):
        return "UNDEFINED"
    return "HEALTHY" if score >= 9.0 and n_errors == 0 else "DEGRADED" if score >= 7.0 \
        else "UNHEALTHY"


def _band(score: float) -> tuple[str, str]:
    if math.isnan(score):
        return "UNDEFINED", NOT_EVALUATED
    return next((name, act) for low, name, act in BANDS if score >= low)


def _cause_found(key: str, components: dict[str, float]) -> bool:
    """True when the run shows cause ``key`` of :data:`CAUSES`: ``1 - component > limit``."""
    cause = CAUSES[key]
    return components[cause.component] < 1 - cause.limit  # 1 - 0.10 == 0.9 exactly


def harness_score(components: dict[str, float]) -> tuple[float, float, tuple[str, ...]]:
    """The harness health score from its five components.

    Parameters
    ----------
    components : dict of str to float
        The keys of :data:`HARNESS_WEIGHTS`, each a share in [0, 1] (:func:`harness_components`).

    Returns
    -------
    tuple of (float, float, tuple of str)
        The score (0–10), its weighted part before the cap (0–10) and the causes found.

    Notes
    -----
    Seed 000 names the inputs (V2.1 item 2: reconciliation pass rate, validator errors,
    attribution coverage), the bands (§Health Score Interpretation) and three causes of a score
    below 7 (§Troubleshooting: time accounting gaps > 50 %, tool failure rate > 10 %, missing
    failure attribution), but no formula. Ours:

    ``weighted = 10 (0.4 R + 0.2 V + 0.2 A + 0.1 T + 0.1 F)``

    ``score = weighted`` without a cause, ``min(weighted, 8 - 2 k)`` with k >= 1 causes.

    Components (shares in [0, 1]; one that cannot be measured because its input column is
    absent, e.g. no ``failure_category``, no per-stage times or no tool-call counts in either
    file, is NaN: left out, the other weights rescaled to sum to 1, and its cause "not
    assessable" rather than clear or found): R tasks passing
    every error-level invariant; V task rows without a loader error (0 after a file-level
    error); A failed tasks (final_score < 0.8) with a failure_category other than
    UNKNOWN_FAILURE (1 without failed tasks; NaN without the column); T timed tasks whose unaccounted time
    (1 - sum of the five per-stage ``*_time`` / ``execution_time``) is at most 50 %; F tool
    calls that succeeded (1 - sum(tool_failures) / sum(tool_calls), from tool_calls.csv's rows
    when task_metrics lacks the counts; 1 without calls).

    Causes, each ``1 - component > limit``: **time_gaps** 1 - T > 10 % (more than 10 % of the
    timed tasks have > 50 % of their wall clock unaccounted); **tool_failures** 1 - F > 10 %
    (the guide's tool failure rate > 10 %); **missing_attribution** 1 - A > 10 % (more than
    10 % of the failed tasks lack an attribution).

    Rationale: as a weighted sum alone, no single cause could reach the guide's "< 7": A
    weighs 2 points and T and F 1 point each, so a run whose every tool call failed still
    scored 9.1. Each cause therefore caps the score, one band of §Health Score Interpretation
    per cause: 6 (top of FAIR, "Fix issues before publication"), 4 with two (top of POOR,
    "Investigation required"), 2 with three (UNHEALTHY, "Do not use"). Below the cap the
    weighted part still ranks runs, and it alone decides a run without a cause, so a clean
    run scores 9 or more (10 with no tool failure at all). The 10 % share for time gaps and
    attribution is ours (the guide gives none): isolated tasks with large I/O waits or an
    unmapped evaluation bucket are tolerated, as the guide tolerates up to 10 % of failed
    tool calls; beyond that the timers or the attribution are systematically broken.

    Examples
    --------
    >>> clean = dict.fromkeys(HARNESS_WEIGHTS, 1.0)
    >>> harness_score(clean)
    (10.0, 10.0, ())
    >>> harness_score({**clean, "tool_reliability": 0.0})  # every tool call failed
    (6.0, 9.0, ('tool_failures',))
    >>> harness_score({**clean, "attribution": float("nan"), "tool_reliability": 0.0})  # no A
    (6.0, 8.75, ('tool_failures',))
    """
    known = {k: w for k, w in HARNESS_WEIGHTS.items() if not math.isnan(components[k])}
    weighted = 10 * sum(w * components[k] for k, w in known.items()) / sum(known.values())
    causes = tuple(k for k in CAUSES if _cause_found(k, components))
    score = min(weighted, CAP_TOP - CAP_STEP * len(causes)) if causes else weighted
    return score, weighted, causes


def _health(components: dict[str, float] | None, quality: dict[str, float],
            n_errors: int, *, evaluated: bool = True,
            success_threshold: float = schema.SUCCESS_THRESHOLD) -> Health:
    if not evaluated:
        nan = float("nan")
        return Health(nan, "UNDEFINED", *_band(nan), dict.fromkeys(HARNESS_WEIGHTS, nan),
                      nan, "UNDEFINED", nan, nan)
    score, weighted, causes = (0.0, 0.0, ()) if components is None else \
        harness_score(components)
    band, action = _band(score)
    known = [v for v in quality.values() if not math.isnan(v)]
    q = 10 * sum(known) / len(known) if known else float("nan")
    return Health(score, _status(score, n_errors), band, action,
                  components or dict.fromkeys(HARNESS_WEIGHTS, 0.0), q, _status(q),
                  quality.get("answer_accuracy", float("nan")),
                  quality.get("execution_success_rate", float("nan")), weighted, causes,
                  success_threshold)


def _pct(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{x:.1%}"


def _num(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{x:.1f}/10"


def cause_text(health: Health) -> str:
    """The causes of a capped harness health score, in words.

    Parameters
    ----------
    health : Health
        From :func:`dabench_analysis.validate.validate_run` (``report.health``).

    Returns
    -------
    str
        One ``"<cause> <measured share> > <limit>"`` per cause found, joined by "; "; empty
        when no cause was found.

    Examples
    --------
    >>> comps = {**dict.fromkeys(HARNESS_WEIGHTS, 1.0), "tool_reliability": 0.75}
    >>> h = _health(comps, {}, 0)
    >>> h.harness_score, cause_text(h)
    (6.0, 'tool failures 25.0% > 10%')
    """
    return "; ".join(f"{k.replace('_', ' ')} {_pct(1 - health.components[CAUSES[k].component])}"
                     f" > {CAUSES[k].limit:.0%}" for k in health.causes)


def _validity(run: Run, findings: Sequence[Finding]) -> float:
    errors = [f for f in findings if f.severity == "error" and f.file == run.task_file
              and f.check not in _INVARIANT_CHECKS]
    if any(not f.rows for f in errors):
        return 0.0
    bad = {r for f in errors for r in f.rows}
    total = len(run.tasks) + len(bad - set(run.source_rows))
    return 1.0 - len(bad) / total if total else 0.0


def harness_components(run: Run, rec: pd.DataFrame, failed: pd.Series,
                       findings: Sequence[Finding]) -> dict[str, float]:
    """The five [0, 1] components of the harness health score (see :func:`harness_score`)."""
    # Failed as the harness attributes failures: below the guide's 0.8 (what eval-v2 wrote a
    # failure_category for), not the analysis' success threshold.
    failing = (~schema.correct(rec["final_score"], schema.SUCCESS_THRESHOLD)).fillna(False) \
        .to_numpy(dtype=bool)
    if "failure_category" not in run.tasks:  # not recorded by this harness: not assessable
        attribution = float("nan")
    elif not failing.any():
        attribution = 1.0
    else:
        cat = run.tasks["failure_category"][failing]
        attribution = float((cat.notna() & (cat != "UNKNOWN_FAILURE")).mean())
    ratio = rec["time_ratio"].dropna()
    time_ok = float("nan") if ratio.empty else float((ratio >= 1 - GAP_LIMIT).mean())
    return {"reconciliation": float(1 - failed.mean()), "validity": _validity(run, findings),
            "attribution": attribution, "time_accounting": time_ok,
            "tool_reliability": _tool_success(rec)}


def _tool_success(rec: pd.DataFrame) -> float:
    """1 - tool failure rate from task_metrics' counts, else from tool_calls.csv's rows; NaN
    when neither holds a count (not measured: left out of the score, never counted as 1)."""
    for calls_col, fails_col in (("tool_calls", "tool_failures"), ("tc_rows", "tc_failed")):
        both = rec[[calls_col, fails_col]].dropna()
        if len(both):
            calls, fails = both[calls_col].sum(), both[fails_col].sum()
            return float(min(max((calls - fails) / calls, 0.0), 1.0)) if calls > 0 else 1.0
    return float("nan")




def quality_components(tasks: pd.DataFrame, *,
                       threshold: float = schema.SUCCESS_THRESHOLD) -> dict[str, float]:
    """Answer accuracy (:func:`dabench_analysis.schema.correct` at ``threshold``, the run's
    success threshold) and execution success rate; NaN without values. Raises ValueError for a
    threshold outside (0, 1] (:func:`dabench_analysis.schema.check_threshold`)."""
    empty = pd.Series([], dtype="boolean")
    correct = schema.correct(tasks["final_score"], threshold) if "final_score" in tasks \
        else empty
    executed = tasks["execution_success"].astype("boolean") if "execution_success" in tasks \
        else empty
    return {key: float(s.dropna().astype(bool).mean()) if s.notna().any() else float("nan")
            for key, s in (("answer_accuracy", correct), ("execution_success_rate", executed))}
