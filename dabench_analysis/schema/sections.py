# Over 400 lines (<= 500): the catalogue of report sections is one table, each entry naming
# what a section needs and what it computes and writes; split in two, they would drift apart.
"""Which analyses need which inputs, and what they compute: every section of the reports, as data.

A *section* is one table or figure of a report (or a group written together). It declares the
task_metrics columns it ``needs`` (absent in the run: the section is skipped with a note), the
optional files it needs (``tool_calls.csv``, ...), the columns of those files it needs
(``file_needs``, written ``"tool_calls.csv:latency_seconds"``: a file from another harness
version may lack some), and the optional columns it ``uses`` when present (absent: the section
runs on fewer metrics or rows, which its note says). Its ``parts`` say what it computes (the
function by dotted name, resolved by the report layer), writes and shows
(:mod:`dabench_analysis.schema.parts`); a notebook cell is one ``report.section(ctx, name)``. The notebooks,
the batch index, :func:`dabench_analysis.validate_run` (which analyses an absent column disables)
and the README's table of columns are all driven from :data:`SECTIONS`; the lower layers read it
here instead of importing the report layer.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from dabench_analysis.schema.columns import (
    CORRELATION_METRICS,
    MAIN_METRICS,
    SPECIALISTS,
    STAGES,
    TASK_COLUMNS,
    TOOL_CALL_COLUMNS,
    TRAJECTORY_COLUMNS,
    Column,
)
from dabench_analysis.schema.files import (
    OPTIONAL_FILES,
    REPLAY_FILES,
    TOOL_CALLS_FILE,
    TRAJECTORY_FILE,
)
from dabench_analysis.schema.parts import THRESHOLD, FirstPresent, Param, Part, Present
from dabench_analysis.schema.sections_trajectory import TRAJECTORY_SECTIONS

#: What each optional file feeds besides the sections that name it.
FILE_USES: dict[str, str] = {
    TRAJECTORY_FILE: "validation: token conservation, time accounting, missing trajectories; "
                     "the explore notebook's steps",
    TOOL_CALLS_FILE: "validation: tool-call rows and failures per task",
    REPLAY_FILES: "validation: replay fields and their agreement with task_metrics; the explore "
                  "notebook's replay view",
}
#: The column catalogue of each optional CSV file.
FILE_CATALOGUES: dict[str, dict[str, Column]] = {TRAJECTORY_FILE: TRAJECTORY_COLUMNS,
                                                 TOOL_CALLS_FILE: TOOL_CALL_COLUMNS}


def in_file(file: str, *columns: str) -> tuple[str, ...]:
    """Qualified names ``"<file>:<column>"`` of columns of an optional CSV file.

    Parameters
    ----------
    file : str
        A key of :data:`FILE_CATALOGUES` (``trajectory.csv``, ``tool_calls.csv``).
    *columns : str
        Columns of that file's catalogue.

    Returns
    -------
    tuple of str

    Raises
    ------
    ValueError
        For a file without a catalogue or a column not in it.

    Examples
    --------
    >>> in_file("tool_calls.csv", "tool_name", "latency_seconds")
    ('tool_calls.csv:tool_name', 'tool_calls.csv:latency_seconds')
    """
    if file not in FILE_CATALOGUES:
        raise ValueError(f"no column catalogue for {file!r}; known: {', '.join(FILE_CATALOGUES)}")
    unknown = [c for c in columns if c not in FILE_CATALOGUES[file]]
    if unknown:
        raise ValueError(f"column(s) {unknown} not in the {file} catalogue")
    return tuple(f"{file}:{c}" for c in columns)


def split_qualified(name: str) -> tuple[str, str]:
    """``"tool_calls.csv:tool_name"`` -> ``("tool_calls.csv", "tool_name")``.

    Examples
    --------
    >>> split_qualified("trajectory.csv:tokens")
    ('trajectory.csv', 'tokens')
    """
    file, _, col = name.partition(":")
    return file, col


@dataclass(frozen=True)
class Section:
    """One section of a report.

    Attributes
    ----------
    name : str
        Identifier, also the stem of the table or figure it writes.
    title : str
        Heading shown in the report.
    report : {"run", "compare", "sweep"}
        Which notebook holds it (``run_report.ipynb``, ``compare_runs.ipynb``, ``sweep.ipynb``).
    needs : tuple of str
        task_metrics columns without which the section cannot be computed.
    files : tuple of str
        Optional files of the run directory it reads (see :data:`OPTIONAL_FILES`).
    file_needs : tuple of str
        Columns of those files without which it cannot be computed, as ``"<file>:<column>"``
        (:func:`in_file`); checked only when the file is present (an absent file is what is
        missing then).
    uses : tuple of str
        Optional columns used when present (task_metrics columns, or ``"<file>:<column>"``
        of a file it needs); the section runs on those present.
    uses_at_least : int
        How many of ``uses`` must be present (e.g. a correlation needs a second metric).
    parts : tuple of Part
        What it computes, writes and shows, in order (:class:`~dabench_analysis.schema.parts.Part`:
        the function by dotted name, its arguments, the written stem, the columns shown).
    trials : {"one", "any", "several"}
        What it needs of repeated trials (a run of another harness holds one row per task and
        trial; a sweep's configurations repeat runs): ``"one"`` one row per task (skipped on
        runs with repeated trials: pairing or a per-task interval would silently average
        them), ``"any"``, or ``"several"`` (only with repeated trials: pass@k, flakiness).
    """

    name: str
    title: str
    report: str
    needs: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    file_needs: tuple[str, ...] = ()
    uses: tuple[str, ...] = ()
    uses_at_least: int = 0
    parts: tuple[Part, ...] = ()
    trials: str = "one"

    @property
    def outputs(self) -> tuple[str, ...]:
        """Files it writes under the report folder (``tables/<stem>``, ``<figure stem>``,
        ``<name>.md``), from its parts.

        Examples
        --------
        >>> SECTIONS["difficulty_breakdown"].outputs
        ('tables/difficulty_breakdown', 'difficulty_breakdown')
        """
        return tuple(p.stem for p in self.parts if p.stem)

    def missing(self, columns: Collection[str], files: Collection[str] = OPTIONAL_FILES,
                file_columns: Mapping[str, Collection[str]] | None = None) -> list[str]:
        """The inputs this section lacks, as names to show (empty: it can run).

        Parameters
        ----------
        columns : collection of str
            task_metrics columns present (for a comparison: present in both runs).
        files : collection of str
            Optional files present (entries of :data:`OPTIONAL_FILES`).
        file_columns : mapping of str to collection of str, optional
            For optional files present, the columns they hold (``run.tool_calls.columns``).
            A file not in the mapping is taken to hold every column of its catalogue.

        Returns
        -------
        list of str
            Absent needed columns, files and columns of present files (``"<file>:<column>"``);
            when fewer than ``uses_at_least`` of ``uses`` are present, one entry
            ``"one of: a, b, ..."`` for them.

        Examples
        --------
        >>> SECTIONS["failure_stages"].missing(["final_score"])
        ['failure_stage']
        >>> SECTIONS["correlation_matrix"].missing(["final_score"])[0][:7]
        'one of:'
        >>> SECTIONS["tool_usage"].missing([], file_columns={
        ...     "tool_calls.csv": ["task_id", "tool_name", "tokens"]})
        ['tool_calls.csv:success']
        """
        out = [c for c in self.needs if c not in columns]
        out += [f for f in self.files if f not in files]
        file_columns = file_columns or {}
        for name in self.file_needs:
            file, col = split_qualified(name)
            if file in files and file in file_columns and col not in file_columns[file]:
                out.append(name)
        present = [c for c in self.uses if c in columns]
        if len(present) < self.uses_at_least:
            out.append("one of: " + ", ".join(c for c in self.uses if c not in columns))
        return out

    def absent_uses(self, columns: Collection[str],
                    file_columns: Mapping[str, Collection[str]] | None = None) -> list[str]:
        """Optional columns of ``uses`` that are absent (the section runs without them); a
        file's column (``"tool_calls.csv:tokens"``) counts as absent when ``file_columns``
        holds the file without it.

        Examples
        --------
        >>> SECTIONS["tool_usage"].absent_uses([], {"tool_calls.csv": ["tool_name"]})
        ['tool_calls.csv:latency_seconds', 'tool_calls.csv:tokens']
        """
        file_columns = file_columns or {}
        out = []
        for name in self.uses:
            file, col = split_qualified(name)
            if not col:
                out += [name] if name not in columns else []
            elif file in file_columns and col not in file_columns[file]:
                out.append(name)
        return out


_STAGE_COLUMNS = tuple(f"{p}_{m}" for p in STAGES.values() for m in ("time", "calls", "tokens"))
_SPECIALIST_FLAGS = tuple(f"{s}_agent_used" for s in SPECIALISTS)
_COORDINATOR = ("replan_requested", "replan_successful", "retry_requested", "retry_successful")
_PARAGRAPH = ("task_id", "final_score", "difficulty", "analyst_score", "first_try_success",
              "replan_count", "tool_efficiency", "verification_triggered",
              "verification_failures_detected", "failure_category")
_T = (("threshold", THRESHOLD),)  # the analysis' success threshold, as keyword argument
_CORRECTION = (("correction", Param("correction")),)
_PAIR = ("baseline", "proposed")  # a comparison's inputs: the two runs' tasks
_ABLATION = ("comparison", "group_a", "group_b", "n_a", "n_b", "mean_a", "mean_b", "mean_diff",
             "ci_low", "ci_high", "p_value", "effect_size", "effect", "magnitude")
_PAIRED = ("n_pairs", "mean_baseline", "mean_proposed", "mean_diff", "ci_low", "ci_high",
           "statistic", "p_value", "p_adjusted", "cohens_d_z", "magnitude")


_BOOT = (("n_boot", Param("n_boot")), ("seed", Param("seed")))
#: Cost columns the frontier can use, the first present chosen.
_COSTS = ("cost", "total_tokens", "execution_time")


def _table(compute: str, name: str, **kw) -> Part:
    return Part(compute, f"tables/{name}", **kw)


_ALL = [
    # run report (notebooks/run_report.ipynb), in the order it shows them
    Section("health", "Run health", "run", trials="any", parts=(
        _table("validate.health_section", "health", inputs=("validation",)),
        Part("validate.findings_table", inputs=("validation",)))),
    Section("main_results", "Table 1: main results", "run", needs=("final_score",),
            uses=tuple(MAIN_METRICS[1:]), trials="any", parts=(_table(
                "tables.main_results", "main_results",
                args=(("metrics", Present(tuple(MAIN_METRICS))),)),)),
    Section("difficulty_breakdown", "Table 2: breakdown by difficulty", "run",
            needs=("difficulty", "execution_success", "final_score", "execution_time",
                   "total_tokens"),
            parts=(_table("tables.difficulty_breakdown", "difficulty_breakdown", args=_T),
                   Part("figures.difficulty_bars", "difficulty_breakdown", args=_T))),
    Section("task_type_breakdown", "Table 3: by task type", "run",
            needs=("task_type", "final_score"), uses=("analyst_score",), parts=(_table(
                "tables.task_type_breakdown", "task_type_breakdown",
                args=(("metrics", Present(("final_score", "analyst_score"))),)),)),
    Section("specialist_participation", "Table 4: specialist participation", "run",
            needs=("specialist_participation", "final_score"), uses=("autonomy_score",),
            parts=(_table("tables.specialist_participation", "specialist_participation",
                          args=(("metrics", Present(("final_score", "autonomy_score"))), *_T),
                          columns=("specialists_used", "n", "answer_accuracy",
                                   "answer_accuracy_ci_low", "answer_accuracy_ci_high",
                                   "final_score_mean", "final_score_ci_low", "final_score_ci_high",
                                   "autonomy_score_mean", "autonomy_score_ci_low",
                                   "autonomy_score_ci_high", "answer_accuracy_method",
                                   "final_score_method", "autonomy_score_method")),)),
    Section("root_causes", "Table 5: top 10 root causes", "run",
            needs=("root_cause", "final_score"), uses=("failure_category",),
            parts=(_table("tables.failures.root_causes", "root_causes", args=_T),)),
    Section("score_distribution", "Score distribution", "run",
            needs=("final_score", "difficulty"), parts=(Part(
                "figures.score_distribution", "score_distribution",
                args=(("hue", "difficulty"), *_T)),)),
    Section("failure_distribution", "Failure distribution", "run",
            needs=("final_score", "failure_category"),
            parts=(Part("figures.failure_distribution", "failure_distribution", args=_T),)),
    Section("failure_categories", "MAS failure categories", "run",
            needs=("final_score", "failure_category"),
            parts=(_table("tables.failures.failure_categories", "failure_categories", args=_T),)),
    Section("failure_stages", "Failures by stage", "run", needs=("final_score", "failure_stage"),
            parts=(_table("tables.failures.failure_stages", "failure_stages", args=_T),
                   Part("figures.failure_by_stage", "failure_by_stage", args=_T))),
    Section("outcome_error_types", "Outcome error types", "run",
            needs=("final_score", "outcome_error_type"),
            parts=(_table("tables.failures.outcome_error_types", "outcome_error_types",
                          args=_T),)),
    Section("outcome_status", "Outcome status", "run", needs=("outcome_status",),
            parts=(_table("tables.failures.outcome_status", "outcome_status"),)),
    Section("mas_effectiveness", "MAS effectiveness", "run",
            needs=("initial_answer_correct", "final_answer_correct"),
            uses=("recovered_after_replan", "recovered_after_retry"),
            parts=(_table("tables.mas.mas_effectiveness", "mas_effectiveness", columns=(
                "n", "first_attempt_accuracy", "first_attempt_ci_low", "first_attempt_ci_high",
                "final_accuracy", "final_ci_low", "final_ci_high", "recovery_gain",
                "n_recovered", "n_regressed", "p_value")),)),
    Section("coordinator_effectiveness", "Coordinator intervention effectiveness", "run",
            needs=_COORDINATOR, parts=(_table(
                "tables.mas.coordinator_effectiveness", "coordinator_effectiveness",
                columns=("intervention", "requested", "successful", "success_rate", "ci_low",
                         "ci_high")),)),
    Section("specialist_value", "Specialist agent value", "run",
            needs=("final_score", *_SPECIALIST_FLAGS), parts=(_table(
                "tables.mas.specialist_value", "specialist_value", args=_T, columns=(
                    "specialist", "n_used", "n_not_used", "accuracy_with", "ci_low_with",
                    "ci_high_with", "accuracy_without", "ci_low_without", "ci_high_without",
                    "delta", "ci_low", "ci_high", "p_value")),)),
    Section("verification_timeline", "Verification timeline: coordinator approval vs correctness",
            "run", needs=("final_score",),
            uses=("aat_verification_passed", "coordinator_final_decision"), uses_at_least=1,
            parts=(_table("tables.verification.verification_timeline", "verification_timeline",
                          args=_T, columns=("measure", "count", "n", "proportion", "ci_low",
                                            "ci_high")),)),
    Section("calibration", "Calibration by confidence bucket", "run",
            needs=("confidence_score", "final_score"),
            parts=(_table("stats.calibration.calibration_table", "calibration", args=_T,
                          caption="Accuracy and mean confidence per confidence bucket"),
                   Part("stats.calibration.calibration_summary", args=_T,
                        caption="Calibration error over all buckets (ECE, MCE, Brier score)"),
                   Part("figures.reliability_diagram", "reliability_diagram", args=_T))),
    Section("ablation_verification", "Ablation 1: verification", "run",
            needs=("verification_triggered", "final_score"), parts=(_table(
                "tables.ablation.verification", "ablation_verification", columns=_ABLATION),)),
    Section("ablation_replanning", "Ablation 2: replanning", "run",
            needs=("first_try_success", "replan_count", "final_score"), parts=(_table(
                "tables.ablation.replanning", "ablation_replanning", columns=_ABLATION),)),
    Section("ablation_efficiency_quartiles", "Ablation 3: tool-efficiency quartiles", "run",
            needs=("tool_efficiency", "final_score"), parts=(_table(
                "tables.ablation.efficiency_quartiles", "ablation_efficiency_quartiles",
                # the bounds by the number rule; the .csv keeps the exact interval text
                columns=("quantile_bin", "lower", "upper", "n", "mean", "std", "ci_low",
                         "ci_high", "method", "note")),)),
    Section("phase_timing", "Phase timing", "run", needs=(*_STAGE_COLUMNS, "execution_time"),
            parts=(_table("tables.timing.phase_timing", "phase_timing"),)),
    # per call, not per task: repeated trials add calls; latency and tokens when recorded
    Section("tool_usage", "Tool latency and failures", "run", files=(TOOL_CALLS_FILE,),
            file_needs=in_file(TOOL_CALLS_FILE, "task_id", "tool_name", "success"),
            uses=in_file(TOOL_CALLS_FILE, "latency_seconds", "tokens"), trials="any",
            parts=(_table("tables.timing.tool_usage", "tool_usage", inputs=("tool_calls",)),
                   Part("figures.tool_latency", "tool_latency", inputs=("tool_calls",)))),
    Section("correlation_matrix", "Correlation matrix", "run", needs=("final_score",),
            uses=tuple(CORRELATION_METRICS[1:]), uses_at_least=1, parts=(Part(
                "figures.correlation_matrix", "correlation_matrix",
                args=(("metrics", Present(tuple(CORRELATION_METRICS))),)),)),
    Section("autonomy_vs_efficiency", "Autonomy vs efficiency", "run",
            needs=("autonomy_score", "tool_efficiency", "final_score"),
            parts=(Part("figures.autonomy_vs_efficiency", "autonomy_vs_efficiency"),)),
    Section("pass_k", "Repeated trials: pass@k and pass^k", "run",
            needs=("task_id", "final_score"), uses=("trial",), trials="several", parts=(
                _table("tables.trials.pass_k", "pass_k", inputs=("run",),
                       caption="pass@k and pass^k by number of trials k"),
                Part("figures.pass_k_curve", "pass_k_curve", inputs=("pass_k",)))),
    Section("flakiness", "Repeated trials: tasks with mixed outcomes", "run",
            needs=("task_id", "final_score"), uses=("trial",), trials="several",
            parts=(_table("tables.trials.flakiness", "flakiness", inputs=("run",),
                          caption="Tasks whose trials disagree (flaky tasks)"),)),
    # comparison report (notebooks/compare_runs.ipynb); columns needed in both runs
    Section("paired_comparison", "Paired comparison of the main metrics", "compare",
            needs=("task_id", "final_score"), uses=tuple(MAIN_METRICS[1:]), parts=(_table(
                "stats.compare_runs", "paired_comparison", inputs=_PAIR,
                args=(("metrics", Present(tuple(MAIN_METRICS))), *_CORRECTION),
                columns=("metric", *_PAIRED)),)),
    Section("paired_by_difficulty", "Paired comparison by difficulty", "compare",
            needs=("task_id", "difficulty", "final_score"), parts=(_table(
                "tables.comparison.by_difficulty", "paired_by_difficulty", inputs=_PAIR,
                args=_CORRECTION, columns=("difficulty", *_PAIRED)),)),
    Section("mcnemar", "McNemar test on answer correctness", "compare",
            needs=("task_id", "final_score"),
            parts=(_table("stats.mcnemar", "mcnemar", inputs=_PAIR, args=_T, labels=(
                ("b", "Solved by baseline only"), ("c", "Solved by proposed only"))),)),
    Section("task_changes", "Per-task changes", "compare", needs=("task_id", "final_score"),
            parts=(_table("tables.comparison.task_changes", "task_changes", inputs=_PAIR,
                          args=_T, show="counts:change"),
                   _table("task_changes", "improved_tasks", inputs=(), caption="Improved tasks",
                          rows=("change", "improved"), sort="-diff"),
                   _table("task_changes", "regressed_tasks", inputs=(),
                          caption="Regressed tasks", rows=("change", "regressed")))),
    Section("paired_difference", "Paired differences", "compare",
            needs=("task_id", "final_score"),
            parts=(Part("figures.paired_difference", "paired_difference", inputs=_PAIR),)),
    Section("results_paragraph", "Results paragraph", "compare", needs=_PARAGRAPH,
            parts=(Part("export.reporting_paragraph", "results_paragraph.md",
                        inputs=(*_PAIR, "paired_comparison"), args=_T),)),
    # sweep report (notebooks/sweep.ipynb); tasks of every run, stacked
    Section("task_counts", "Tasks per run and tasks shared by all runs", "sweep",
            needs=("task_id", "final_score"), trials="any", parts=(
                _table("tables.sweep.task_counts", "task_counts", show="none",
                       caption="Tasks per run (n_own) and tasks all runs share (n_shared)"),
                Part("report.notes.shared_tasks_note", inputs=("task_counts",)),
                Part("task_counts", inputs=(), max_rows=60))),
    Section("leaderboard", "Leaderboard with rank intervals", "sweep",
            needs=("task_id", "final_score"), parts=(
                _table("tables.sweep.leaderboard", "leaderboard", caption="Leaderboard on the "
                       "shared tasks, with rank intervals",
                       args=(*_T, ("n_boot", Param("n_boot")), ("seed", Param("seed")))),
                Part("figures.leaderboard_forest", "leaderboard_forest",
                     inputs=("leaderboard",)))),
    Section("pairwise", "Every pair of runs, paired on their shared tasks", "sweep",
            needs=("task_id", "final_score"), parts=(
                _table("tables.sweep.pairwise", "pairwise", args=_T, show="none",
                       caption="Paired comparisons of every pair of runs"),
                # its own key: the heatmap below keeps the pairs in leaderboard order
                Part("pairwise", inputs=(), sort="p_holm,run_a,run_b", max_rows=60,
                     key="pairwise_by_p", caption="Pairs by Holm-adjusted Wilcoxon p", columns=(
                         "run_a", "run_b", "n_shared", "mean_diff", "ci_low", "ci_high",
                         "p_wilcoxon", "p_holm", "n_pass_fail", "n_fail_pass", "p_mcnemar",
                         "p_mcnemar_holm", "wilcoxon_method", "mcnemar_method")),
                Part("figures.pairwise_heatmap", "pairwise_heatmap", inputs=("pairwise",)))),
    Section("flip_counts", "Tasks that flip between runs", "sweep",
            needs=("task_id", "final_score"), parts=(_table(
                "tables.sweep.flip_counts", "flip_counts", args=_T, max_rows=60,
                caption="Tasks that flip between each pair of runs"),)),
    Section("items", "Item analysis", "sweep", needs=("task_id", "final_score"),
            uses=("difficulty",), parts=(
        _table("tables.sweep.items", "items", args=_T, max_rows=60,
               caption="Item analysis across the sweep"),
        Part("figures.item_difficulty", "item_difficulty", inputs=("items",)))),
    Section("pass_k_runs", "Repeated trials: pass@k and pass^k per run", "sweep",
            needs=("task_id", "final_score"), trials="several", parts=(
                _table("tables.trials.pass_k", "pass_k", inputs=("runs",), args=_BOOT,
                       caption="pass@k and pass^k per run by number of trials k"),
                _table("tables.trials.flakiness", "flakiness", inputs=("runs",),
                       caption="Tasks whose trials disagree (flaky tasks), per run"),
                Part("figures.pass_k_curve", "pass_k_curve", inputs=("pass_k",)))),
    Section("frontier", "Cost-accuracy frontier", "sweep", needs=("task_id", "final_score"),
            uses=_COSTS, uses_at_least=1, trials="any", parts=(
                _table("tables.sweep.frontier", "frontier", args=(
                    *_T, ("cost", FirstPresent(_COSTS)), ("n_boot", Param("n_boot")),
                    ("seed", Param("seed"))),
                       caption="Accuracy and mean cost per task on the shared tasks; on the "
                       "frontier: no other run is both more accurate and cheaper"),
                Part("figures.frontier", "frontier", inputs=("frontier",)))),
]

_ALL += [Section(**entry) for entry in TRAJECTORY_SECTIONS]  # schema/sections_trajectory.py
#: Every section of the reports, by name, in report order.
SECTIONS: dict[str, Section] = {s.name: s for s in _ALL}


def sections_needing(column: str, *, report: str | None = None) -> list[str]:
    """Names of the sections an absent ``column`` (or optional file) disables.

    Parameters
    ----------
    column : str
        A task_metrics column, an entry of :data:`OPTIONAL_FILES` or a column of one of them
        (``"tool_calls.csv:latency_seconds"``, :func:`in_file`).
    report : {"run", "compare"} or None
        Only sections of this report.

    Returns
    -------
    list of str
        Sections that need it (``uses`` alone does not disable a section).

    Examples
    --------
    >>> sections_needing("outcome_error_type")
    ['outcome_error_types']
    >>> sections_needing("tool_calls.csv")
    ['tool_usage', 'tool_fit']
    >>> sections_needing("tool_calls.csv:success")
    ['tool_usage', 'tool_fit']
    """
    return [s.name for s in _ALL if (report is None or s.report == report)
            and (column in s.needs or column in s.files or column in s.file_needs)]


def sections_using(column: str) -> list[str]:
    """Names of the sections that use ``column`` when present (without needing it)."""
    return [s.name for s in _ALL if column in s.uses]


def optional_columns() -> list[str]:
    """task_metrics columns of the optional tier, in catalogue order."""
    return [c.name for c in TASK_COLUMNS.values() if not c.required]
