"""What one report notebook works on: its inputs, parameters, output folder, which sections it can
feed and the results computed so far (:class:`Context`).

A notebook makes one context after loading its runs (:func:`run_context`, :func:`compare_context`,
:func:`sweep_context`); each section is then one call, ``report.section(ctx, "main_results")``
(:mod:`dabench_analysis.report.compute`), and ``report.summary(ctx)`` writes ``summary.json``
(:mod:`dabench_analysis.report.summary`). Displayed as the last expression of a cell, a context
states the run(s) and the success threshold the report uses.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from dabench_analysis import schema, tables, validate
from dabench_analysis.figures import apply_style
from dabench_analysis.load import Run, Runs, run_configs
from dabench_analysis.report.sections import Sections
from dabench_analysis.schema.parts import FirstPresent, Param, Present

_USES = {"run": "every accuracy, failure share, calibration bucket and the run quality",
         "compare": "McNemar's test, the per-task changes and the results paragraph",
         "sweep": "the accuracies of the leaderboard, McNemar's tests, the flips and the item "
                  "analysis"}


class Context:
    """The state of one report notebook.

    Parameters
    ----------
    report : {"run", "compare", "sweep"}
        Which report (the sections of the catalogue it holds).
    inputs : mapping of str to object
        The report's inputs by the names the catalogue's parts use (``"tasks"``, ``"run"``, ...).
    lazy : mapping of str to callable, optional
        Inputs computed on first use by calling them without arguments (``"validation"``).
    parameters : mapping
        The notebook's parameters (``success_threshold`` among them).
    out : Path
        The report folder; tables go to ``out / "tables"``.
    sections : Sections
        Which sections the inputs can feed.
    read : sequence
        What the report read (runs, folders), for the manifest.
    subject : str
        One line naming the run(s), shown with the threshold.
    seeds : mapping, optional
        Random seeds of the report, for the manifest.

    Attributes
    ----------
    results : dict
        Each computed table or text by name (:attr:`~dabench_analysis.schema.parts.Part.result_key`).
    threshold : float
        ``parameters["success_threshold"]``: ``final_score >= threshold`` is a correct answer.
    """

    def __init__(self, report: str, *, inputs: Mapping[str, Any], parameters: Mapping[str, Any],
                 out: Path, sections: Sections, read: Sequence[Any], subject: str,
                 lazy: Mapping[str, Callable[[], Any]] | None = None,
                 seeds: Mapping[str, Any] | None = None) -> None:
        self.report, self.parameters, self.out = report, dict(parameters), Path(out)
        self.sections, self.read, self.subject = sections, list(read), subject
        self.seeds = dict(seeds or {})
        self.threshold = schema.check_threshold(self.parameters["success_threshold"],
                                                name="success_threshold")
        self._inputs, self._lazy = dict(inputs), dict(lazy or {})
        self.results: dict[str, Any] = {}

    @property
    def tables_dir(self) -> Path:
        """``out / "tables"``."""
        return self.out / "tables"

    def value(self, name: str) -> Any:
        """The input or earlier result called ``name``.

        Raises
        ------
        KeyError
            Naming what the report has, for a name that is neither.
        """
        if name in self.results:
            return self.results[name]
        if name not in self._inputs and name in self._lazy:
            self._inputs[name] = self._lazy[name]()
        if name not in self._inputs:
            known = ", ".join([*self._inputs, *self._lazy, *self.results])
            raise KeyError(f"the {self.report} report has no input or result {name!r} (a "
                           f"section that was skipped or not run yet?); known: {known}")
        return self._inputs[name]

    def argument(self, value: Any) -> Any:
        """A keyword argument of a part: a literal, a notebook parameter or the present columns."""
        if isinstance(value, Param):
            return self.parameters[value.name]
        if isinstance(value, Present):
            return self.sections.present(value.columns)
        if isinstance(value, FirstPresent):  # candidates: the first recorded is used, named
            return value.columns  # in the note (tables.frontier.cost_column)
        return value

    def statement(self) -> str:
        """The report's subject and the success threshold it uses, as Markdown.

        Examples
        --------
        >>> import dabench_analysis as da
        >>> ctx = run_context(da.load_run("data/sample_runs/proposed_aat"),
        ...                   {"success_threshold": 0.8}, out=Path("figures/x"), quiet=True)
        >>> print(ctx.statement().split(". ")[1].split(" (")[0])
        **Success threshold: 0.8**: a task's answer counts as correct when `final_score >= 0.8`
        """
        return (f"{self.subject}. **Success threshold: {self.threshold:g}**: a task's answer "
                f"counts as correct when `final_score >= {self.threshold:g}` (parameter "
                f"`success_threshold`); {_USES[self.report]} use it.")

    def _repr_markdown_(self) -> str:
        """The statement, then (another harness's run) the sections it cannot feed, grouped
        (:meth:`Sections.overview`)."""
        lines = self.sections.overview() if self.sections.grouped else []
        return "\n\n".join([self.statement(), *lines])

    def __repr__(self) -> str:
        return f"<report context {self.report}: {self.statement()}>"


def _check_threshold(parameters: Mapping[str, Any], *runs: Run) -> None:
    """The runs were loaded with the notebook's threshold (one threshold per analysis)."""
    threshold = parameters["success_threshold"]
    for run in runs:
        if run.success_threshold != threshold:
            raise ValueError(f"run {run.run_id!r} was loaded with success_threshold="
                             f"{run.success_threshold:g}, the report's parameter is "
                             f"{threshold:g}; load it with load_run(..., "
                             f"success_threshold=success_threshold)")


def run_context(run: Run, parameters: Mapping[str, Any], *, out: Path,
                quiet: bool = False) -> Context:
    """The context of a run report (``notebooks/run_report.ipynb``).

    Parameters
    ----------
    run : Run
        Loaded with the notebook's ``success_threshold``.
    parameters : mapping
        The notebook's parameters, with ``success_threshold``.
    out : Path
        The report folder.
    quiet : bool
        Record skipped sections without displaying notes (outside notebooks).

    Returns
    -------
    Context
        Inputs ``run``, ``tasks``, ``tool_calls`` and ``validation`` (:func:`validate_run` of
        the run's folder with the threshold, on first use). For another harness's run, the
        sections it cannot feed are shown as a few grouped lines where the context is
        displayed (:meth:`Sections.overview`) instead of a note in each section.

    Raises
    ------
    ValueError
        A run without tasks, or loaded with another threshold than the parameter.
    """
    _check_threshold(parameters, run)
    tables.require_rows(run.tasks, what=f"run {run.run_id}")
    apply_style()
    threshold = parameters["success_threshold"]
    lazy = {"tool_calls": lambda: run.tool_calls,
            "validation": lambda: validate.validate_run(
                run.path if run.format == "eval-v2" else run, threshold=threshold)}
    trials = run.trials
    size = f"{len(run.tasks)} tasks" if trials < 2 else \
        f"{run.tasks['task_id'].nunique()} tasks, up to {trials} trials each"
    # another harness's run: what it cannot feed, in a few lines under the statement
    return Context("run", inputs={"run": run, "tasks": run.tasks}, lazy=lazy,
                   parameters=parameters, out=out,
                   sections=Sections(run, quiet=quiet, grouped=run.format != "eval-v2"),
                   read=[run], subject=f"Run `{run.run_id}` ({size}, `{run.path}`)")


def compare_context(baseline: Run, proposed: Run, parameters: Mapping[str, Any], *, out: Path,
                    quiet: bool = False) -> Context:
    """The context of a comparison report (``notebooks/compare_runs.ipynb``).

    Inputs ``baseline`` and ``proposed`` (the runs' tasks), ``baseline_run`` and
    ``proposed_run``; a column counts as present when both runs have it. Parameters and
    errors as in :func:`run_context`.
    """
    _check_threshold(parameters, baseline, proposed)
    for r in (baseline, proposed):
        tables.require_rows(r.tasks, what=f"run {r.run_id}")
    apply_style()
    inputs = {"baseline": baseline.tasks, "proposed": proposed.tasks, "baseline_run": baseline,
              "proposed_run": proposed}
    return Context("compare", inputs=inputs, parameters=parameters, out=out,
                   sections=Sections(baseline, proposed, report="compare", quiet=quiet),
                   read=[baseline, proposed],
                   subject=f"Baseline `{baseline.run_id}` vs proposed `{proposed.run_id}` "
                           f"({len(baseline.tasks)} and {len(proposed.tasks)} tasks)")


def sweep_context(runs: Runs, parameters: Mapping[str, Any], *, out: Path,
                  quiet: bool = False) -> Context:
    """The context of a sweep report (``notebooks/sweep.ipynb``).

    Inputs ``runs`` and ``tasks`` (every run's, stacked). The bootstrap ``seed`` parameter is recorded as the
    manifest's seed. Raises as :func:`dabench_analysis.tables.sweep.check_sweep` (one run_id
    per folder, at least two runs) and :func:`run_context`.
    """
    tables.sweep.check_sweep(runs)
    _check_threshold(parameters, *runs.runs)
    apply_style()
    tasks = runs.tasks
    configs = run_configs(runs.runs, tasks)
    per_config = configs["config"].dropna().value_counts()
    sections = Sections.from_columns(tasks.columns, report="sweep", quiet=quiet,
                                     row_trials=max(r.trials for r in runs.runs),
                                     trials=int(per_config.max()) if len(per_config) else 1)
    return Context("sweep", inputs={"runs": runs, "tasks": tasks},
                   parameters=parameters, out=out, sections=sections, read=[runs],
                   subject=f"{len(runs)} runs ({len(tasks)} task rows)",
                   seeds={"bootstrap": parameters["seed"]} if "seed" in parameters else None)
