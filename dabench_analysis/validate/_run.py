"""Validate one run: load it leniently, check the cross-file invariants and the replays, and
report findings (severity, file, row, column, check, message) with harness health and run quality.
"""

from __future__ import annotations

import dataclasses
import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from dabench_analysis.load import Run, load_run
from dabench_analysis.load._config import declared_config
from dabench_analysis.load._findings import Finding, RunLoadError
from dabench_analysis.schema import (
    SUCCESS_THRESHOLD,
    TOOL_CALLS_FILE,
    TRAJECTORY_FILE,
    check_threshold,
)
from dabench_analysis.schema._declared import needing as sections_needing
from dabench_analysis.schema._declared import optional_columns
from dabench_analysis.schema._declared import using as sections_using
from dabench_analysis.schema.columns import OTHER_HARNESS_COLUMNS
from dabench_analysis.validate import _files as fl
from dabench_analysis.validate import _invariants as inv
from dabench_analysis.validate import _replay as rp
from dabench_analysis.validate._health import (
    HARNESS_WEIGHTS,
    Health,
    _health,
    _num,
    harness_components,
    quality_components,
)

FINDING_COLUMNS = ["severity", "file", "row", "column", "check", "message"]


_SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


@dataclass
class ValidationReport:
    """What :func:`validate_run` found.

    Attributes
    ----------
    path : Path
    run_id : str
    state : {"evaluated", "not evaluated", "failed"}
        Seed 003 §Evaluation States: "not evaluated" when the run has no task_metrics.csv,
        "failed" when its artifacts could not be read at all.
    findings : DataFrame
        ``severity`` (error, warning, info), ``file``, ``row`` (1-based data row, <NA> for
        file- or column-level findings), ``column``, ``check``, ``message``; one line per row
        concerned, errors first.
    health : Health
    n_tasks : int
        Rows of the task file (a run of repeated trials: one per task and trial).
    size : str
        The run's size in words (:attr:`dabench_analysis.load.Run.size`: tasks and trials);
        empty for a run that was not loaded.
    """

    path: Path
    run_id: str
    state: str
    findings: pd.DataFrame
    health: Health
    n_tasks: int = 0
    size: str = ""
    _raw: list[Finding] = field(default_factory=list, repr=False)

    @property
    def ok(self) -> bool:
        """True when there is no error finding."""
        return not (self.findings["severity"] == "error").any()

    def to_frame(self) -> pd.DataFrame:
        """The findings with a leading ``run_id`` column (concatenate reports of many runs)."""
        return self.findings.assign(run_id=self.run_id)[["run_id", *FINDING_COLUMNS]]

    def summary(self) -> pd.DataFrame:
        """One row per check: ``severity, check, n, files, columns, first_row, example``.

        ``n`` counts finding lines (rows concerned); errors come first.

        Examples
        --------
        >>> validate_run("data/sample_runs/pending_run").summary()[["severity", "check", "n"]]
          severity         check  n
        0     info  missing_file  1
        """
        f = self.findings
        if f.empty:
            return pd.DataFrame(columns=["severity", "check", "n", "files", "columns",
                                         "first_row", "example"])
        out = f.groupby(["severity", "check"], sort=False).agg(
            n=("message", "size"),
            files=("file", lambda s: ", ".join(dict.fromkeys(s.dropna()))),
            columns=("column", lambda s: ", ".join(dict.fromkeys(s.dropna().astype(str)))),
            first_row=("row", "min"), example=("message", "first")).reset_index()
        return out.sort_values("severity", key=lambda s: s.map(_SEVERITY_ORDER),
                               kind="stable").reset_index(drop=True)

    def __repr__(self) -> str:
        counts = self.findings["severity"].value_counts()
        h = self.health
        return (f"<ValidationReport {self.run_id!r} ({self.state}): "
                f"{counts.get('error', 0)} errors, {counts.get('warning', 0)} warnings, "
                f"{counts.get('info', 0)} info; harness health {_num(h.harness_score)} "
                f"{h.harness_status}; run quality {_num(h.run_quality_score)} "
                f"{h.run_quality_status}>")


def _frame(findings: Sequence[Finding]) -> pd.DataFrame:
    rows = [(f.severity, f.file, r, f.column, f.check, f.message)
            for f in findings for r in (f.rows or (None,))]
    df = pd.DataFrame(rows, columns=FINDING_COLUMNS)
    df = df.astype({"severity": "string", "file": "string", "row": "Int64",
                    "column": "string", "check": "string", "message": "string"})
    order = df["severity"].map(_SEVERITY_ORDER).astype(int)
    return df.assign(_o=order).sort_values(["_o", "check", "file", "row"], kind="stable") \
        .drop(columns="_o").reset_index(drop=True)


def _side(run: Run, attr: str, file: str, findings: list) -> pd.DataFrame | None:
    if not ((run.path / file).is_file() if run.format == "eval-v2" else file in run.side_files):
        off = sections_needing(file)
        findings.append(Finding("warning" if off else "info", file, None, None, "missing_file",
                                "optional file not found; "
                                + (f"disables {', '.join(off)}; " if off else "")
                                + "invariants that need it are not checked"))
        return None
    try:
        table = getattr(run, attr)
        return table if "task_id" in table else None  # no task_id: reported by the loader
    except RunLoadError as exc:
        findings.extend(exc.findings or [Finding("error", file, None, None, "unreadable",
                                                 str(exc).splitlines()[0])])
        return None


def _absent_columns(run: Run) -> list[Finding]:
    """Absent optional task_metrics columns, each with the report sections it disables.

    A column some section needs: a warning naming the sections; one only used when present: an
    info; the rest (no analysis reads them): one info listing them.
    """
    present, out, unused = set(run.tasks.columns), [], []
    if run.format != "eval-v2":  # columns another harness cannot record: one grouped line
        return _not_recorded(run, [n for n in optional_columns() if n not in present
                                   and n not in OTHER_HARNESS_COLUMNS])
    for name in optional_columns():
        if name in present or name in OTHER_HARNESS_COLUMNS:
            continue
        off, used = sections_needing(name), sections_using(name)
        if off:
            rest = f"; {', '.join(used)} run without it" if used else ""
            out.append(Finding("warning", run.task_file, None, name, "absent_column",
                               f"optional column absent: disables {', '.join(off)}{rest}"))
        elif used:
            out.append(Finding("info", run.task_file, None, name, "absent_column",
                               f"optional column absent: {', '.join(used)} run without it"))
        else:
            unused.append(name)
    if unused:
        out.append(Finding("info", run.task_file, None, None, "absent_column",
                           f"{len(unused)} optional catalogue columns absent, which no report "
                           f"section needs: {', '.join(unused)}"))
    return out


def _not_recorded(run: Run, absent: list[str]) -> list[Finding]:
    """Another harness's run: the eval-v2 columns its file does not record, in one info finding
    naming them and how many report sections they disable (the report names those once, at
    its top: ``report._sections.group_skips``)."""
    if not absent:
        return []
    off = {s for name in absent for s in sections_needing(name)}
    return [Finding("info", run.task_file, None, None, "absent_column",
                    f"{len(absent)} eval-v2 columns not recorded in this {run.format} file "
                    f"(they disable {len(off)} report sections; the others run without them): "
                    + ", ".join(absent))]


def _grouped_skips(run: Run, found: list[Finding]) -> list[Finding]:
    """Another harness's run: its ``invariant_skipped`` findings as one info naming the checks
    (each names inputs the harness does not record); the other findings unchanged."""
    skipped = [f.message.split(" ", 1)[0] for f in found if f.check == "invariant_skipped"]
    if not skipped:
        return found
    return [f for f in found if f.check != "invariant_skipped"] + [Finding(
        "info", run.task_file, None, None, "invariant_skipped",
        f"{len(skipped)} cross-file checks not assessable (this {run.format} file has no "
        f"values for their inputs, eval-v2 columns): {', '.join(skipped)}")]


def _side_names(run: Run) -> dict[str, str]:
    """The file each side table of ``run`` came from: trajectory.csv and tool_calls.csv for an
    eval-v2 run; for another harness's, its own file (its steps and tool calls are read from it)."""
    return {f: f if run.format == "eval-v2" else run.task_file
            for f in (TRAJECTORY_FILE, TOOL_CALLS_FILE)}


def _side_file_findings(run: Run, sides: dict[str, pd.DataFrame | None]) -> list[Finding]:
    """Unknown task ids, missing step durations, run_id consistency across the files, control
    characters in free text, and the catalogue columns each side file lacks (as
    :func:`_absent_columns` for task_metrics). Findings name the file each table came from
    (:func:`_side_names`)."""
    names = _side_names(run)
    out = [f for file, table in sides.items()
           for f in fl.orphan_findings(run.tasks["task_id"], table, names[file],
                                       task_file=run.task_file)]
    out += fl.missing_time(sides[TRAJECTORY_FILE], names[TRAJECTORY_FILE])
    out += fl.parent_findings(sides[TRAJECTORY_FILE], names[TRAJECTORY_FILE])
    out += fl.run_id_findings(run.tasks["run_id"], run.source_rows, run.task_file, sides,
                              fill=run.run_id)
    out += fl.control_findings(run, sides)
    return out + [f for file in sides if (run.path / file).is_file()
                  for f in fl.absent_side_columns(run.path, file)]


def _failed_report(path: Path, exc: RunLoadError) -> ValidationReport:
    findings = exc.findings or [Finding("error", path.name, None, None, "run_dir",
                                        str(exc).splitlines()[0])]
    state = "not evaluated" if any(f.check == "missing_file" for f in findings) else "failed"
    if state == "not evaluated":  # a state, not an error (run-and-evaluate workflow, seed 003)
        findings = [dataclasses.replace(f, severity="info") if f.check == "missing_file" else f
                    for f in findings]
    return ValidationReport(path, path.name, state, _frame(findings),  # not evaluated: no score
                            _health(None, {}, len(findings), evaluated=state == "failed"), 0,
                            _raw=list(findings))


def validate_run(run: Run | str | os.PathLike[str], *, replays: bool = True,
                 threshold: float | None = None) -> ValidationReport:
    """Check one eval-v2 run: schema, ranges, cross-file invariants, health.

    Parameters
    ----------
    run : Run or path-like
        A loaded run (:func:`dabench_analysis.load_run`): validated as it was loaded, its
        task file not read again (its load findings are the loader's; its trajectory and tool
        calls are read as the Run reads them). Or a run directory (``task_metrics.csv``,
        ``trajectory.csv``, ``tool_calls.csv``, ``task_*/task_replay.json``), loaded
        leniently (``strict=False``). Read only; nothing is written.
    replays : bool
        Also parse every ``task_replay.json``, check it against the replay catalogue and
        compare it with its task's row (slower on big runs).
    threshold : float, optional
        Success threshold of the run-quality score's answer accuracy, in (0, 1]; default
        :data:`dabench_analysis.schema.SUCCESS_THRESHOLD` (0.8; a Run carries none). The guide's own rules (``final_answer_correct``, ``outcome_status``,
        ``confidence_correct``) always check what the harness wrote at the guide's 0.8.

    Returns
    -------
    ValidationReport
        ``findings`` (DataFrame: severity, file, row, column, check, message), ``ok``,
        ``health``, ``state``, ``summary()``, ``to_frame()``. A run that cannot be loaded
        gives a report with its errors (state "failed" or "not evaluated"), never an exception.

    Raises
    ------
    ValueError
        A ``threshold`` outside (0, 1].

    Notes
    -----
    Checks, with the seed 000 section each comes from (every check but the loader's, with its
    severity, tolerance, section and rule: :data:`dabench_analysis.schema.CHECKS`, as a table
    :func:`dabench_analysis.schema.checks.checks_markdown`):

    * loader (the catalogue's value rules, :mod:`dabench_analysis.schema.rules`): file
      structure, required columns and values, dtypes, {0, 1} flags, [0, 1] scores,
      non-negative counts and times, finite numbers, the seed's enums, duplicated task_ids
      (§Data Model Schema); unknown columns are info;
    * §Data Model Schema 1-3: one ``run_id`` in task_metrics.csv (``run_id_mixed``) and the
      same in trajectory.csv and tool_calls.csv (``run_id_mismatch``), each an error at the
      first row that differs; absent optional columns of every file (``absent_column``: a
      warning naming the report sections it disables, an info naming the checks it leaves
      not assessable);
    * §Critical Invariants / §Hardening Features 1: tool_calls.csv rows and failed calls per
      task equal ``tool_calls`` / ``tool_failures``; abs(trajectory token sum - total_tokens)
      < 100; ``aat_verification_passed`` = 1 exactly when ``coordinator_final_decision`` =
      APPROVE_FINAL; time accounting with component time = sum of the per-stage ``*_time``
      columns (warning if component / ``execution_time`` < 0.05, info if it exceeds it);
      trajectory completeness; task ids of trajectory.csv / tool_calls.csv / replay folders
      missing from task_metrics.csv; trajectory.csv steps without ``duration_seconds``
      (§Troubleshooting "missing time data", warning); a ``parent_step_id`` that names no
      step of its task or leads back to a step (``parent_step_invalid``, warning);
    * the catalogued formulas, each within its tolerance: §Key Metrics 1 (answer / column /
      row F1 = 2PR/(P+R), column and row precision and recall), 2 and 3 (first_try_success,
      replan_count, autonomy_score, coordinator_interventions, user_intervention_count,
      planner_revisions, planner_dead_ends, plan_execution_alignment), 4 (tool_diversity,
      useful / wasted calls, tool_efficiency, tool_selection_accuracy, distinct tools), 5
      (data_understanding_score: weighted formula and its theoretical maximum, the
      relevant-tables / columns heuristics, exploration steps), 6 (verification_triggered
      exactly when verification_steps > 0; the legacy verification_passed / _score equal the
      critic's), 7 and V2.1 Phase 0 Task 2 (recovery and MAS recovery flags), 8
      (trajectory_length = steps; branching_factor >= 1; tool steps = tool-call rows), 10
      (confidence_correct, confidence_error, calibration_bucket with edges 0.2 ... 0.8 in the
      upper bucket), 11 (analyst_score, 1e-3), §AAT Architecture Metrics
      (specialist_participation), V2.1 items 1 and 4 (no UNKNOWN_FAILURE with an evaluation
      bucket; outcome_status); §Recent Fixes: replan_count_consistent, retry_count_consistent,
      coordinator_metrics_consistent (warnings);
    * ``run_config.json`` and constant ``config``/``seed`` task columns, as the sweep report
      reads them (:func:`dabench_analysis.load._config.declared_config`): a refused file or
      column is an error (``run_config``), file and columns disagreeing a warning
      (``run_config_conflict``), a seed that is a label an info (``seed_label``);
    * §Replay Artifacts, V2.1 item 6: each task_replay.json parses as a JSON object, has every
      required field of :data:`dabench_analysis.schema.replay.REPLAY_FIELDS` with its type, and
      agrees with its task's row: identity (task_id, run_id, trace_id, difficulty),
      coordinator decision, verification flag, final_score and answer_f1 (1e-6), outcome,
      execution attempts, failure attribution, tool calls, time accounting.

    Health (V2.1 item 2 separates harness health from run quality). The seed names the inputs,
    the bands and three causes of a score below 7 but no formula; ours
    (:func:`dabench_analysis.validate._health.harness_score`, with its rationale) is

    ``harness = 10 (0.4 R + 0.2 V + 0.2 A + 0.1 T + 0.1 F)``, capped at ``8 - 2 k`` when k >= 1
    of the guide's causes are found, with R the share of tasks that pass every error-level
    invariant (reconciliation pass rate), V the share of task rows without a loader error
    (validator errors; 0 if the task file has a file-level error), A the share of tasks below
    0.8 with a failure_category other than UNKNOWN_FAILURE (attribution coverage; not
    assessable without a failed task), T the share of timed tasks whose unaccounted time is at
    most 50 % of execution_time, F the share of tool calls that succeeded (not assessable
    without calls); a component without data is left out, never counted as 1. Causes
    (§Troubleshooting "Health score < 7"): time gaps (1 - T > 10 %), tool failure rate
    (1 - F > 10 %), missing failure attribution (1 - A > 10 %); one caps the score at 6, two at
    4, three at 2. The one status (shown by validate, the report and the index): HEALTHY if
    >= 9.0 and no error finding, DEGRADED if >= 7.0, else UNHEALTHY (V2.1), with the action of
    §Health Score Interpretation for the score, never more favourable than the status
    (:func:`dabench_analysis.validate._health.health_action`: a run with error findings is
    never "Ready to use").

    ``run quality = 10 (answer accuracy + execution success rate) / 2`` (the two outcome
    metrics V2.1 names; accuracy = share with final_score >= the success threshold,
    :func:`dabench_analysis.schema.correct`), same thresholds without the
    error condition. It reproduces the seed's example (64 % accuracy shown as DEGRADED for any
    execution success rate >= 76 %). Without any final_score value (or without tasks) run
    quality is NaN, status UNDEFINED, never a number; a run without tasks has no harness
    health either; a run that cannot be loaded has no score either (NaN, UNDEFINED: its error
    findings say why, and the state is "failed"); a run that is not
    evaluated (no task_metrics.csv, seed 003) has no score (NaN, UNDEFINED).

    Examples
    --------
    >>> report = validate_run("data/sample_runs/proposed_aat")
    >>> report.ok, report.health.harness_status
    (True, 'HEALTHY')
    >>> from dabench_analysis import load_run
    >>> run = load_run("data/sample_runs/proposed_aat")
    >>> validate_run(run, threshold=0.95).health.run_quality_score < report.health.run_quality_score
    True
    """
    extra: list[Finding] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # each loader warning is also a finding
        if not isinstance(run, Run):
            path = Path(run)
            try:
                run = load_run(path, strict=False)
            except RunLoadError as exc:
                check_threshold(SUCCESS_THRESHOLD if threshold is None else threshold)
                return _failed_report(path, exc)
        path = Path(run.path)
        threshold = check_threshold(SUCCESS_THRESHOLD if threshold is None else threshold)
        traj = _side(run, "trajectory", TRAJECTORY_FILE, extra)
        calls = _side(run, "tool_calls", TOOL_CALLS_FILE, extra)
    replay = rp.replay_frame(run, extra) if replays and run.format == "eval-v2" else None
    rec = inv.reconciliation_frame(run.tasks, traj, calls, replay)
    found, failed = inv.check_invariants(rec, run.source_rows, run.task_file,
                                         side_files=_side_names(run))
    if run.format != "eval-v2":  # checks of eval-v2 columns another harness cannot record
        found = _grouped_skips(run, found)
    if replay is not None:
        replay_found, replay_failed = rp.check_replays(rec, run.source_rows, run.task_file)
        found, failed = found + replay_found, failed | replay_failed
    failed |= rec["task_id"].isin(rp.failed_tasks(extra)).fillna(False).to_numpy()
    extra += found + _side_file_findings(run, {TRAJECTORY_FILE: traj, TOOL_CALLS_FILE: calls})
    extra += declared_config(run.run_id, path, run.tasks, task_file=run.task_file)[1]
    findings = list(run.findings) + extra + _absent_columns(run)
    n_errors = sum(f.severity == "error" for f in findings)
    components = harness_components(run, rec, failed, findings) if len(run.tasks) \
        else dict.fromkeys(HARNESS_WEIGHTS, float("nan"))  # no task: nothing is rated
    health = _health(components, quality_components(run.tasks, threshold=threshold), n_errors,
                     success_threshold=threshold)
    return ValidationReport(path, run.run_id, "evaluated", _frame(findings), health,
                            len(run.tasks), run.size, _raw=findings)
