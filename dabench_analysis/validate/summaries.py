"""The tables of a validated run for people: its harness health and run quality with every input of\nthe scores, and every finding, errors first (the run report shows both; validate --out writes\nthem).\n"""

from __future__ import annotations

import math

import pandas as pd

from dabench_analysis.validate._health import (
    CAP_STEP,
    CAP_TOP,
    CAUSES,
    HARNESS_WEIGHTS,
    NOT_EVALUATED,
    Health,
)
from dabench_analysis.validate._run import ValidationReport

_MEASURES = {
    "reconciliation": "tasks passing every cross-file invariant (§Hardening Features 1)",
    "validity": "task rows without a schema or range error (V2.1: validator errors)",
    "attribution": "failed tasks with a failure_category (V2.1: attribution coverage)",
    "time_accounting": "timed tasks with at most 50 % of execution_time unaccounted",
    "tool_reliability": "tool calls that succeeded: 1 - tool failure rate",
    "answer_accuracy": "share of tasks with final_score >= {threshold:g} (the success threshold)",
    "execution_success_rate": "share of tasks whose code ran (execution_success)",
}


HEALTH_TABLE_COLUMNS = ["run_id", "state", "assessment", "measure", "value", "limit", "weight",
                        "points", "status", "note"]


def _harness_rows(h: Health) -> list[tuple]:
    nan = float("nan")
    rows = [("harness_health", k, v, nan, w, 10 * w * v, h.harness_status, _MEASURES[k] + (
        "; not assessable in this run (its input is absent): left out, the other weights "
        "rescaled" if math.isnan(v) else "")) for k, w in HARNESS_WEIGHTS.items()
        for v in [h.components[k]]]
    rows.append(("harness_health", "weighted_score", h.weighted_score, nan, 1.0,
                 h.weighted_score, h.harness_status, "10 × Σ weight × value, before any cap"))
    cap = CAP_TOP - CAP_STEP * len(h.causes)
    for key, cause in CAUSES.items():
        found, value = key in h.causes, 1 - h.components[cause.component]
        status = "found" if found else "not assessable" if math.isnan(value) else "clear"
        rows.append(("harness_health", key, value, cause.limit, nan, cap if found else nan,
                     status, cause.measure + (f"; above the limit: caps the score at {cap:g}"
                                              if found else "; not measured in this run"
                                              if math.isnan(value) else "")))
    rows.append(("harness_health", "score", h.harness_score, nan, 1.0, h.harness_score,
                 h.harness_status, f"{h.action} (§Health Score Interpretation for the score, "
                 "never more favourable than the status)"))
    return rows


def health_table(report: ValidationReport) -> pd.DataFrame:
    """The harness health and run quality of a validated run, every input of the score shown.

    Parameters
    ----------
    report : ValidationReport
        From :func:`dabench_analysis.validate.validate_run`.

    Returns
    -------
    DataFrame
        Columns ``run_id``, ``state`` (evaluated, not evaluated, failed), ``assessment``
        (harness_health, run_quality), ``measure``, ``value``, ``limit``, ``weight``,
        ``points``, ``status``, ``note``. Harness rows: the five components (value a share
        in [0, 1], ``weight``, ``points`` = 10 × weight × value), ``weighted_score`` (0–10),
        one row per cause of :data:`CAUSES` (value the measured share, ``limit``, ``points`` the
        cap when found, ``status`` found, clear or not assessable) and ``score`` (0–10, the
        V2.1 status, the action in ``note``: :func:`~dabench_analysis.validate._health.health_action`). Run-quality rows: ``answer_accuracy``, ``execution_success_rate`` (equal
        weights over the known ones) and ``score``. A run that is not evaluated has one
        ``score`` row per assessment, NaN, status UNDEFINED.

    Notes
    -----
    The formula and its thresholds: :func:`harness_score`; run quality =
    10 × mean(answer accuracy, execution success rate), statuses as V2.1.

    Examples
    --------
    >>> from dabench_analysis.validate import validate_run
    >>> t = health_table(validate_run("data/sample_runs/proposed_aat"))
    >>> h = t[t["assessment"] == "harness_health"].set_index("measure")
    >>> calls = pd.read_csv("data/sample_runs/proposed_aat/tool_calls.csv")
    >>> failed = 1 - calls["success"].mean()  # the share of failed calls, from the file
    >>> bool(abs(h.loc["tool_failures", "value"] - failed) < 1e-12), h.loc["score", "status"]
    (True, 'HEALTHY')
    """
    h, nan = report.health, float("nan")
    if report.state == "not evaluated":
        rows = [(a, "score", nan, nan, nan, nan, "UNDEFINED", NOT_EVALUATED)
                for a in ("harness_health", "run_quality")]
    else:
        rows = _harness_rows(h)
        quality = {"answer_accuracy": h.answer_accuracy,
                   "execution_success_rate": h.execution_success_rate}
        known = [k for k, v in quality.items() if not math.isnan(v)]
        for k, v in quality.items():
            w = 1 / len(known) if k in known else 0.0
            rows.append(("run_quality", k, v, nan, w, 10 * w * v if k in known else nan,
                         h.run_quality_status,
                         _MEASURES[k].format(threshold=h.success_threshold)))
        rows.append(("run_quality", "score", h.run_quality_score, nan, 1.0,
                     h.run_quality_score, h.run_quality_status,
                     "HEALTHY >= 9.0, DEGRADED >= 7.0 (V2.1)"))
    out = pd.DataFrame(rows, columns=HEALTH_TABLE_COLUMNS[2:])
    out.insert(0, "state", report.state)
    out.insert(0, "run_id", report.run_id)
    return out


FINDINGS_TABLE_COLUMNS = ["run_id", "severity", "check", "file", "row", "column", "message"]


def findings_table(report: ValidationReport) -> pd.DataFrame:
    """Every finding of a validated run, one row per data row concerned, ready to display.

    Parameters
    ----------
    report : ValidationReport
        From :func:`dabench_analysis.validate.validate_run`.

    Returns
    -------
    DataFrame
        Columns ``run_id``, ``severity`` (error, warning, info), ``check``, ``file``, ``row``
        (1-based data row, header not counted; <NA> for file- or column-level findings),
        ``column``, ``message``; errors first, then warnings and info, each by check, file
        and row; a fresh 0..n-1 index. No findings: the columns without rows.

    Examples
    --------
    >>> from dabench_analysis.validate import validate_run
    >>> findings_table(validate_run("data/sample_runs/pending_run"))[["severity", "check"]]
      severity         check
    0     info  missing_file
    """
    return report.to_frame()[FINDINGS_TABLE_COLUMNS].reset_index(drop=True)


def health_section(report: ValidationReport) -> pd.DataFrame:
    """The health of a run as the run report shows it: :func:`health_table` without its
    ``run_id`` and ``state`` columns (one run, evaluated).

    Examples
    --------
    >>> from dabench_analysis.validate import validate_run
    >>> table = health_section(validate_run("data/sample_runs/proposed_aat"))
    >>> table.loc[table["measure"] == "score", ["assessment", "status"]].values.tolist()
    [['harness_health', 'HEALTHY'], ['run_quality', 'HEALTHY']]
    """
    return health_table(report).drop(columns=["run_id", "state"])
