"""Harness health (0–10) and run quality: the components, the weights, the bands and the health
table shown in the run report.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from dabench_analysis import schema
from dabench_analysis.load.findings import Finding
from dabench_analysis.load.run import Run
from dabench_analysis.validate.invariants import _INVARIANT_CHECKS, GAP_LIMIT, TOOL_FAILURE_LIMIT

#: §Health Score Interpretation: lower bound of each band and its action.
BANDS = ((9.0, "HEALTHY", "Ready to use"), (7.0, "GOOD", "Review warnings"),
         (5.0, "FAIR", "Fix issues before publication"), (3.0, "POOR", "Investigation required"),
         (0.0, "UNHEALTHY", "Do not use"))



@dataclass(frozen=True)
class Health:
    """Harness health and run quality (seed 000 V2.1 item 2, "Separated Health Assessments").

    Attributes
    ----------
    harness_score : float
        0–10, from ``components`` and :data:`HARNESS_WEIGHTS` (formula: :func:`validate_run`).
    harness_status : {"HEALTHY", "DEGRADED", "UNHEALTHY"}
        V2.1 thresholds; HEALTHY also needs no error finding.
    harness_band, action : str
        §Health Score Interpretation (HEALTHY, GOOD, FAIR, POOR, UNHEALTHY) and what to do.
    components : dict of str to float
        reconciliation, validity, attribution, time_accounting, tool_reliability, each [0, 1].
    run_quality_score : float
        0–10, NaN for a run without tasks.
    run_quality_status : {"HEALTHY", "DEGRADED", "UNHEALTHY", "UNDEFINED"}
    answer_accuracy, execution_success_rate : float
        Shares in [0, 1] (final_score >= 0.8; execution_success), NaN without values.
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


def _status(score: float, n_errors: int = 0) -> str:
    """V2.1: HEALTHY (9.0+, no errors), DEGRADED (7.0+), UNHEALTHY (else); NaN -> UNDEFINED."""
    if math.isnan(score):
        return "UNDEFINED"
    return "HEALTHY" if score >= 9.0 and n_errors == 0 else "DEGRADED" if score >= 7.0 \
        else "UNHEALTHY"


def _band(score: float) -> tuple[str, str]:
    return next((name, act) for low, name, act in BANDS if score >= low)


def _health(components: dict[str, float] | None, quality: dict[str, float],
            n_errors: int) -> Health:
    score = 0.0 if components is None else \
        10 * sum(HARNESS_WEIGHTS[k] * v for k, v in components.items())
    band, action = _band(score)
    known = [v for v in quality.values() if not math.isnan(v)]
    q = 10 * sum(known) / len(known) if known else float("nan")
    return Health(score, _status(score, n_errors), band, action,
                  components or dict.fromkeys(HARNESS_WEIGHTS, 0.0), q, _status(q),
                  quality.get("answer_accuracy", float("nan")),
                  quality.get("execution_success_rate", float("nan")))


def _pct(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{x:.1%}"


def _num(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{x:.1f}/10"


#: Weights of the harness health score (see ``validate_run``, Notes).
HARNESS_WEIGHTS = {"reconciliation": 0.4, "validity": 0.2, "attribution": 0.2,
                   "time_accounting": 0.1, "tool_reliability": 0.1}


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
    """The five [0, 1] components of the harness health score (see ``validate_run``)."""
    failing = (rec["final_score"] < schema.SUCCESS_THRESHOLD).fillna(False).to_numpy()
    if not failing.any():
        attribution = 1.0
    elif "failure_category" not in run.tasks:
        attribution = 0.0
    else:
        cat = run.tasks["failure_category"][failing]
        attribution = float((cat.notna() & (cat != "UNKNOWN_FAILURE")).mean())
    ratio = rec["time_ratio"].dropna()
    time_ok = 1.0 if ratio.empty else float((ratio >= 1 - GAP_LIMIT).mean())
    calls, fails = rec["tool_calls"].sum(), rec["tool_failures"].sum()
    rate = float(fails / calls) if calls and calls > 0 else 0.0
    return {"reconciliation": float(1 - failed.mean()), "validity": _validity(run, findings),
            "attribution": attribution, "time_accounting": time_ok,
            "tool_reliability": 1.0 if rate <= TOOL_FAILURE_LIMIT else TOOL_FAILURE_LIMIT / rate}


def quality_components(tasks: pd.DataFrame) -> dict[str, float]:
    """Answer accuracy (final_score >= 0.8) and execution success rate; NaN without values."""
    out = {}
    for key, col in (("answer_accuracy", "final_score"),
                     ("execution_success_rate", "execution_success")):
        s = tasks[col].dropna() if col in tasks else pd.Series([], dtype="float64")
        value = (s >= schema.SUCCESS_THRESHOLD) if col == "final_score" else s.astype(bool)
        out[key] = float(value.mean()) if len(s) else float("nan")
    return out
