# Over 400 lines (<= 500): the health formula, its causes, bands and status rules are one idea,
# with the tables that show them.
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
from dabench_analysis.load._findings import Finding
from dabench_analysis.load._run import Run
from dabench_analysis.schema._files import NOT_EVALUATED_HINT
from dabench_analysis.schema.numbers import format_estimate, format_parameter
from dabench_analysis.validate._invariants import _INVARIANT_CHECKS, GAP_LIMIT, TOOL_FAILURE_LIMIT

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


#: The not-evaluated state where a health score would be: the one hint for the state
#: (:data:`dabench_analysis.schema._files.NOT_EVALUATED_HINT`).
NOT_EVALUATED = f"not evaluated: {NOT_EVALUATED_HINT}; no health score"

#: The best action of §Health Score Interpretation each V2.1 status allows: a DEGRADED run (a
#: score of 9 with error findings, or 7-9) is at best "Review warnings", never "Ready to use".
STATUS_BEST_BAND = {"HEALTHY": "HEALTHY", "DEGRADED": "GOOD", "UNHEALTHY": "FAIR"}

#: The status of a score that would be HEALTHY but rests on some components only: a run is
#: never rated above what was assessed.
NOT_RATED = "NOT RATED"


@dataclass(frozen=True)
class Health:
    """Harness health and run quality (seed 000 V2.1 item 2, "Separated Health Assessments").

    Attributes
    ----------
    harness_score : float
        0–10 (:func:`harness_score`); NaN for a run that is not evaluated.
    harness_status : {"HEALTHY", "DEGRADED", "UNHEALTHY", "NOT RATED", "UNDEFINED"}
        V2.1 thresholds; HEALTHY also needs no error finding and every component assessed
        (else NOT RATED: :func:`health_status`); UNDEFINED without a score.
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
    not_assessed : tuple of str
        Components that could not be assessed (NaN: their input is absent), in
        :data:`HARNESS_WEIGHTS` order; empty without a score.
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
    not_assessed: tuple[str, ...] = ()


def health_status(score: float, *, n_errors: int = 0, n_not_assessed: int = 0) -> str:
    """The V2.1 status of a 0-10 health or quality score: the one status shown everywhere.

    Parameters
    ----------
    score : float
        0-10; NaN when there is nothing to rate.
    n_errors : int
        Error findings of the run (harness health: HEALTHY needs none; run quality passes 0).
    n_not_assessed : int
        Components of the score that could not be assessed (:attr:`Health.not_assessed`).

    Returns
    -------
    {"HEALTHY", "DEGRADED", "UNHEALTHY", "NOT RATED", "UNDEFINED"}
        HEALTHY at 9.0 or more without an error finding, DEGRADED at 7.0 or more, else
        UNHEALTHY; UNDEFINED for NaN (no data: never a rating). A score that would be HEALTHY
        while a component was not assessed is NOT RATED: what was assessed can lower the
        status, never raise it to "Ready to use".

    Notes
    -----
    Seed 000 V2.1 item 2: "Status thresholds: HEALTHY (9.0+, no errors), DEGRADED (7.0+),
    UNHEALTHY (else)". NOT RATED is ours (a harness that records no failure attribution,
    stage times or tool calls, e.g. an Inspect log, cannot show that these are healthy).

    Examples
    --------
    >>> health_status(9.8), health_status(9.8, n_errors=1), health_status(float("nan"))
    ('HEALTHY', 'DEGRADED', 'UNDEFINED')
    >>> health_status(10.0, n_not_assessed=3), health_status(6.0, n_not_assessed=3)
    ('NOT RATED', 'UNHEALTHY')
    """
    if math.isnan(score):
        return "UNDEFINED"
    if score >= 9.0 and n_errors == 0:
        return NOT_RATED if n_not_assessed else "HEALTHY"
    return "DEGRADED" if score >= 7.0 else "UNHEALTHY"


def _band(score: float) -> tuple[str, str]:
    if math.isnan(score):
        return "UNDEFINED", NOT_EVALUATED
    return next((name, act) for low, name, act in BANDS if score >= low)


def health_action(score: float, status: str) -> str:
    """What to do with a run of this harness health: the §Health Score Interpretation action
    for the score, never more favourable than the status.

    Parameters
    ----------
    score : float
        Harness health, 0-10 (NaN: not rated).
    status : str
        Its :func:`health_status`.

    Returns
    -------
    str
        The action of the score's row of the table (9-10 "Ready to use", 7-8 "Review
        warnings", 5-6 "Fix issues before publication", 3-4 "Investigation required", 0-2 "Do
        not use"), or of the best row the status allows (:data:`STATUS_BEST_BAND`) when that
        is lower: a run with error findings is never "Ready to use". NaN: the reason there is
        no score.

    Examples
    --------
    >>> health_action(9.8, "HEALTHY"), health_action(9.8, "DEGRADED")
    ('Ready to use', 'Review warnings')
    >>> health_action(6.0, "UNHEALTHY")
    'Fix issues before publication'
    >>> health_action(10.0, "NOT RATED")
    'Check the components not assessed before use'
    """
    if status == NOT_RATED and not math.isnan(score):
        return "Check the components not assessed before use"
    if math.isnan(score) or status not in STATUS_BEST_BAND:
        return _band(float("nan"))[1]
    names = [name for _, name, _ in BANDS]
    band = _band(score)[0]
    worst = max(names.index(band), names.index(STATUS_BEST_BAND[status]))
    return BANDS[worst][2]


def health_text(score: float, status: str, not_assessed: Sequence[str] = ()) -> str:
    """A health score as every output writes it: ``"9.9/10 HEALTHY: Ready to use"``.

    Parameters
    ----------
    score : float
        Harness health, 0-10 (NaN: no score).
    status : str
        Its :func:`health_status`.
    not_assessed : sequence of str
        Components not assessed (:attr:`Health.not_assessed`): named in the line, with how
        many of the five the score rests on.

    Examples
    --------
    >>> health_text(9.8, "DEGRADED")
    '9.80/10 DEGRADED: Review warnings'
    >>> health_text(float("nan"), "UNDEFINED")
    'n/a UNDEFINED'
    >>> health_text(10.0, "NOT RATED", ["attribution", "tool_reliability"])
    '10.0/10 on 3 of 5 components, NOT RATED: attribution, tool reliability not assessable'
    """
    if math.isnan(score):
        return f"n/a {status}"
    if not not_assessed:
        return f"{_num(score)} {status}: {health_action(score, status)}"
    names = ", ".join(n.replace("_", " ") for n in not_assessed)
    rest = f"{names} not assessable" if status == NOT_RATED else \
        f"{health_action(score, status)}; {names} not assessable"
    return (f"{_num(score)} on {len(HARNESS_WEIGHTS) - len(not_assessed)} of "
            f"{len(HARNESS_WEIGHTS)} components, {status}: {rest}")


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
    UNKNOWN_FAILURE (NaN without a failed task, without the column or without any
    final_score); T timed tasks whose unaccounted time
    (1 - sum of the five per-stage ``*_time`` / ``execution_time``) is at most 50 %; F tool
    calls that succeeded (1 - sum(tool_failures) / sum(tool_calls), from tool_calls.csv's rows
    when task_metrics lacks the counts; NaN without calls). Every component NaN: no
    score (NaN, UNDEFINED), never a number.

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
    if not known:  # nothing measured: no rating (UNDEFINED), never a number
        return float("nan"), float("nan"), ()
    weighted = 10 * sum(w * components[k] for k, w in known.items()) / sum(known.values())
    causes = tuple(k for k in CAUSES if _cause_found(k, components))
    score = min(weighted, CAP_TOP - CAP_STEP * len(causes)) if causes else weighted
    return score, weighted, causes


def run_quality_score(quality: dict[str, float]) -> float:
    """Run quality, 0-10: ``10 × mean`` of the known shares of :func:`quality_components`;
    NaN (UNDEFINED) when answer accuracy has no data (no final_score value: nothing to rate).

    Examples
    --------
    >>> run_quality_score({"answer_accuracy": 0.9, "execution_success_rate": 1.0})
    9.5
    >>> run_quality_score({"answer_accuracy": float("nan"), "execution_success_rate": 0.99})
    nan
    """
    if math.isnan(quality.get("answer_accuracy", float("nan"))):
        return float("nan")
    known = [v for v in quality.values() if not math.isnan(v)]
    return 10 * sum(known) / len(known)


def _health(components: dict[str, float] | None, quality: dict[str, float],
            n_errors: int, *, evaluated: bool = True,
            success_threshold: float = schema.SUCCESS_THRESHOLD) -> Health:
    """``components`` None: a run that could not be loaded; ``evaluated=False``: not evaluated.
    Neither has data to rate: no score (NaN, UNDEFINED), never a number (the load's error
    findings say why). A run without tasks passes components of NaN: nothing is rated."""
    if not evaluated or components is None:
        nan = float("nan")
        return Health(nan, "UNDEFINED", *_band(nan), dict.fromkeys(HARNESS_WEIGHTS, nan),
                      nan, "UNDEFINED", nan, nan)
    score, weighted, causes = harness_score(components)
    unknown = () if math.isnan(score) else tuple(k for k in HARNESS_WEIGHTS
                                                 if math.isnan(components[k]))
    status = health_status(score, n_errors=n_errors, n_not_assessed=len(unknown))
    q = run_quality_score(quality)
    return Health(score, status, _band(score)[0], health_action(score, status),
                  components, q, health_status(q),
                  quality.get("answer_accuracy", float("nan")),
                  quality.get("execution_success_rate", float("nan")), weighted, causes,
                  success_threshold, unknown)


def _pct(x: float) -> str:
    """A share as the package prints every share: a proportion (``0.138``), never 13.8 %."""
    return format_estimate(x)


def _num(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{format_estimate(x)}/10"


def cause_text(health: Health) -> str:
    """The causes of a capped harness health score, in words.

    Parameters
    ----------
    health : Health
        From :func:`dabench_analysis.validate.validate_run` (``report.health``).

    Returns
    -------
    str
        One ``"<cause>: <measured share> above the limit <limit>"`` per cause found, joined
        by "; "; empty when no cause was found. Shares print as proportions (the package's
        number rule, :mod:`dabench_analysis.schema.numbers`).

    Examples
    --------
    >>> comps = {**dict.fromkeys(HARNESS_WEIGHTS, 1.0), "tool_reliability": 0.75}
    >>> h = _health(comps, {}, 0)
    >>> h.harness_score, cause_text(h)
    (6.0, 'tool failures: 0.250 above the limit 0.1')
    """
    return "; ".join(f"{k.replace('_', ' ')}: {_pct(1 - health.components[CAUSES[k].component])}"
                     f" above the limit {format_parameter(CAUSES[k].limit)}"
                     for k in health.causes)


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
    if "failure_category" not in run.tasks or rec["final_score"].isna().all():
        attribution = float("nan")  # not recorded, or no score to tell failed tasks by
    elif not failing.any():
        attribution = float("nan")  # no failed task: a share of nothing, not assessable
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
    when neither holds a count or no call was made (a share without data: left out of the
    score, never counted as 1)."""
    for calls_col, fails_col in (("tool_calls", "tool_failures"), ("tc_rows", "tc_failed")):
        both = rec[[calls_col, fails_col]].dropna()
        if len(both):
            calls, fails = both[calls_col].sum(), both[fails_col].sum()
            if calls > 0:
                return float(min(max((calls - fails) / calls, 0.0), 1.0))
    return float("nan")


def quality_components(tasks: pd.DataFrame, *,
                       threshold: float = schema.SUCCESS_THRESHOLD) -> dict[str, float]:
    """Answer accuracy (:func:`dabench_analysis.schema.task_success` at ``threshold``, the
    run's success threshold: over tasks, trials averaged within a task, as every page shows
    it) and execution success rate; NaN without values. Raises ValueError for a
    threshold outside (0, 1] (:func:`dabench_analysis.schema.check_threshold`)."""
    empty = pd.Series([], dtype="boolean")
    per = schema.task_success(tasks["final_score"], tasks["task_id"] if "task_id" in tasks
                              else None, threshold) if "final_score" in tasks else empty
    executed = tasks["execution_success"].astype("boolean") if "execution_success" in tasks \
        else empty
    return {"answer_accuracy": float(per.mean()) if len(per) else float("nan"),
            "execution_success_rate": float(executed.dropna().astype(bool).mean())
            if executed.notna().any() else float("nan")}
