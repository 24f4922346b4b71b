# Over 400 lines (<= 500): one object, the report context: its inputs, sections, writer and files.
"""What one report notebook works on, and its writer: the inputs, parameters, output folder,
the sections skipped so far and the results computed (:class:`Context`).

A notebook makes one context after loading its runs (:func:`run_context`, :func:`compare_context`,
:func:`sweep_context`), called ``out``; each section is then a cell that calls the package
function computing it, inside ``with out.section(name, title):``, and hands the result to
``out.table``, ``out.figure`` or ``out.text``, which write it (tables as ``.csv`` at full
precision and ``.tex``/``.md`` rounded, figures as ``.png``/``.pdf``, text as ``.md``) and show
it. A function whose inputs are absent raises :class:`~dabench_analysis.schema.Skipped`; the
section shows why instead (:mod:`dabench_analysis.report._sections`). ``report.summary(out)``
writes ``summary.json`` (:mod:`dabench_analysis.report._summary`). Displayed as the last
expression of a cell, a context states the run(s) and the success threshold the report uses.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dabench_analysis import export, schema, tables, validate
from dabench_analysis._atomic import STAGE_ENV
from dabench_analysis.export._tables import TABLE_FORMATS, _save_table
from dabench_analysis.load import Run, Runs, run_configs
from dabench_analysis.report._figure_writer import FIGURE_WRITER_ENV, FigureWriter
from dabench_analysis.report._sections import Sections
from dabench_analysis.report._show import _show_presented, show
from dabench_analysis.schema._files import CONFIG_FILE
from dabench_analysis.schema.needs import Skipped, collect_reduced
from dabench_analysis.schema.numbers import ESTIMATE_DIGITS

_USES = {"run": "every accuracy, failure share, calibration bucket and the run quality",
         "compare": "McNemar's test, the per-task changes and the results paragraph",
         "sweep": "the accuracies of the leaderboard, McNemar's tests, the flips and the item "
                  "analysis"}


class Context:
    """The state of one report notebook.

    Parameters
    ----------
    report : {"run", "compare", "sweep"}
        Which report.
    inputs : mapping of str to object
        The report's inputs by name (``"run"``, ``"baseline_run"``, ``"runs"``), for the
        summary's key numbers.
    lazy : mapping of str to callable, optional
        Inputs computed on first use by calling them without arguments (``"validation"``).
    ahead : mapping of str to callable, optional
        Inputs like ``lazy``'s, handed at once to the report's figure writer, whose worker
        computes them while the kernel goes on (a run's validation, while the kernel imports
        and shows the run); computed here on first use when there is no writer, or when the
        worker could not compute one (:meth:`FigureWriter.call
        <dabench_analysis.report._figure_writer.FigureWriter.call>`). Each must pickle (a
        ``functools.partial`` of a module's function).
    parameters : mapping
        The notebook's parameters (``threshold`` among them).
    out : Path
        The report folder; tables go to ``out / "tables"``.
    sections : Sections
        The sections skipped or reduced so far.
    read : sequence
        What the report read (runs, folders), for the manifest.
    subject : str
        One line naming the run(s), shown with the threshold.
    seeds : mapping, optional
        Random seeds of the report, for the manifest.

    Attributes
    ----------
    results : dict
        Each written table or text by its stem.
    threshold : float
        ``parameters["threshold"]``: ``final_score >= threshold`` is a correct answer (the
        analysis' one threshold; every section passes it as ``threshold=``).
    notes : list of str
        Runs whose ``run_config.json`` declares another threshold (stated with it).
    """

    def __init__(self, report: str, *, inputs: Mapping[str, Any], parameters: Mapping[str, Any],
                 out: Path, sections: Sections, read: Sequence[Any], subject: str,
                 lazy: Mapping[str, Callable[[], Any]] | None = None,
                 ahead: Mapping[str, Callable[[], Any]] | None = None,
                 seeds: Mapping[str, Any] | None = None) -> None:
        self.report, self.parameters, self.out = report, dict(parameters), Path(out)
        self.sections, self.read, self.subject = sections, list(read), subject
        self.seeds = dict(seeds or {})
        if "threshold" not in self.parameters:
            raise ValueError("the report's parameters have no 'threshold' (the notebook "
                             "parameter success_threshold was renamed threshold)")
        self.threshold = schema.check_threshold(self.parameters["threshold"], name="threshold")
        runs = [r for x in read for r in (x if isinstance(x, Runs) else [x])
                if isinstance(r, Run)]
        self.notes = _declared(runs, self.threshold)
        self._inputs, self._lazy = dict(inputs), dict(lazy or {})
        self.results: dict[str, Any] = {}
        self._title = ""
        self._where = "in this run" if report != "compare" else "in one of the runs"
        self._writer = _batch_writer()
        for name, fn in (ahead or {}).items():
            future = self._writer.call(fn) if self._writer is not None else None
            self._lazy[name] = fn if future is None else \
                functools.partial(self._writer.result, future, fn)

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

    @property
    def validation(self) -> Any:
        """The run's :func:`~dabench_analysis.validate_run` result (computed on first use)."""
        return self.value("validation")

    @contextmanager
    def section(self, name: str, title: str) -> Iterator[None]:
        """Run one section: a :class:`~dabench_analysis.schema.Skipped` raised inside is shown
        as a note and listed in ``summary.json``; optional inputs it ran without, likewise.

        Parameters
        ----------
        name : str
            Its identifier in ``summary.json`` (the stem of its first table or figure).
        title : str
            Its title in notes and the default caption of its written tables.

        Examples
        --------
        >>> import tempfile, dabench_analysis as da
        >>> run = da.load_run("data/sample_runs/proposed_aat")
        >>> out = run_context(run, {"threshold": 0.8}, out=Path(tempfile.mkdtemp()),
        ...                   quiet=True)
        >>> with out.section("calibration", "Calibration"):
        ...     out.table(da.stats.calibration.calibration_table(run.tasks.drop(
        ...         columns="confidence_score")), "calibration")
        >>> out.sections.skipped[0]["missing"]
        ['confidence_score']
        """
        self._title = title
        try:
            with collect_reduced() as absent:
                yield
        except Skipped as exc:
            reason = exc.reason if exc.reason.startswith(("needs", "`")) else \
                f"Not computed: {exc.reason}"
            self.sections.skip(name, title, exc.missing or [exc.reason],
                               f"**Skipped: {title}**. {reason[0].upper()}{reason[1:]}.")
        else:
            if absent:
                self.sections.reduce(name, title, absent, self._where)
        finally:
            self._title = ""

    def table(self, value: pd.DataFrame | pd.Series, stem: str = "", *, caption: str = "",
              columns: Sequence[str] = (), labels: Mapping[str, str] | None = None,
              max_rows: int | None = None, shown: bool = True) -> Any:
        """Write a table to ``tables/<stem>.{csv,tex,md}`` and show it; return it.

        The ``.csv`` keeps every column at full precision; the ``.tex``/``.md`` and the page
        show ``columns`` (those present; default all), rounded by the number rule
        (:func:`dabench_analysis.export.save_table`), captioned ``caption`` (default: the
        section's title). Without ``stem`` the table is only shown. ``shown=False``: written
        only. The table is kept in ``results[stem]``.
        """
        keep = [c for c in columns if c in value] or None
        heads = {c: h for c, h in (labels or {}).items()
                 if c in value and (keep is None or c in keep)}
        presented = None
        if stem:
            presented = _save_table(value, self.tables_dir / stem, formats=TABLE_FORMATS,
                                    digits=ESTIMATE_DIGITS, caption=caption or self._title,
                                    columns=keep, labels=heads)[1]
            self.results[stem] = value
        if not shown:
            return value
        # The files' presented table is what show() would present (same columns, labels and
        # digits) when the table has no named index and every row is shown.
        if presented is not None and isinstance(value, pd.DataFrame) \
                and all(n is None for n in value.index.names) \
                and (max_rows is None or len(value) <= max_rows):
            _show_presented(presented, value, caption=caption or None, max_rows=max_rows)
        else:
            show(value, columns=keep, max_rows=max_rows, caption=caption or None, labels=heads)
        return value

    def figure(self, value: Any, stem: str) -> Any:
        """Save a figure function's result (an Axes, Axes, or a Figure) to ``<stem>.{png,pdf}``
        and show it; return it.

        In a report the runner executes with a core left over, the figure is saved by the
        report's figure writer in a second process while the next sections run
        (:mod:`dabench_analysis.report._figure_writer`): a placeholder is shown until
        :meth:`wait_for_figures` replaces it with the saved PNG. Elsewhere, and for a figure
        that cannot be pickled, it is saved here (:func:`dabench_analysis.export.save_and_show`).
        """
        fig = _figure(value)
        if fig is None:
            raise TypeError(f"{stem}: not a figure, an Axes or a sequence of Axes: "
                            f"{type(value).__name__}")
        if self._writer is not None and self._writer.submit(fig, (self.out / stem).absolute()):
            return value
        _display(export.save_and_show(fig, self.out / stem))
        return value

    def wait_for_figures(self) -> None:
        """Wait until every figure handed to the batch report's figure writer is saved, and
        show each (:meth:`~dabench_analysis.report._figure_writer.FigureWriter.wait`); later
        figures are saved in the kernel. Nothing to do outside a batch report.

        Raises
        ------
        OSError
            A figure the writer could not save (the first one).
        """
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.wait()

    def text(self, value: str, stem: str = "") -> str:
        """Write Markdown text to ``<stem>`` (``"results_paragraph.md"``) and show it."""
        if stem:
            export._files.write_text(value + "\n", self.out / stem)
            self.results[stem.removesuffix(".md")] = value
        if value:
            from IPython.display import Markdown

            _display(Markdown(value))
        return value

    def skipped_lines(self) -> str:
        """The skipped and reduced sections, grouped by reason (:func:`group_skips`), as
        Markdown ("Every section was computed." when none)."""
        lines = self.sections.lines()
        return "\n\n".join(lines) or "Every section was computed."

    def statement(self) -> str:
        """The report's subject and the success threshold it uses, as Markdown.

        Examples
        --------
        >>> import dabench_analysis as da
        >>> ctx = run_context(da.load_run("data/sample_runs/proposed_aat"),
        ...                   {"threshold": 0.8}, out=Path("figures/x"), quiet=True)
        >>> print(ctx.statement().split(". ")[1].split(" (")[0])
        **Success threshold: 0.8**: a task's answer counts as correct when `final_score >= 0.8`
        """
        return " ".join([
            f"{self.subject}. **Success threshold: {self.threshold:g}**: a task's answer "
            f"counts as correct when `final_score >= {self.threshold:g}` (parameter "
            f"`threshold`); {_USES[self.report]} use it.", *self.notes])

    def _repr_markdown_(self) -> str:
        """The statement."""
        return self.statement()

    def __repr__(self) -> str:
        return f"<report context {self.report}: {self.statement()}>"


def _declared(runs: Sequence[Run], threshold: float) -> list[str]:
    """A note per run whose ``run_config.json`` declares another success threshold than the
    analysis' (:attr:`Run.declared_threshold`): noted, never applied."""
    return [f"Run `{r.run_id}` declares a success threshold of {r.declared_threshold:g} in its "
            f"{CONFIG_FILE}; this analysis uses {threshold:g} (parameter `threshold`)."
            for r in runs if r.declared_threshold is not None
            and r.declared_threshold != threshold]


def run_context(run: Run, parameters: Mapping[str, Any], *, out: Path,
                quiet: bool = False) -> Context:
    """The context of a run report (``notebooks/run_report.ipynb``).

    Parameters
    ----------
    run : Run
        The loaded run (it carries no threshold).
    parameters : mapping
        The notebook's parameters, with ``threshold``.
    out : Path
        The report folder.
    quiet : bool
        Record skipped sections without displaying notes (outside notebooks).

    Returns
    -------
    Context
        Inputs ``run``, ``tasks``, ``tool_calls`` and ``validation`` (:func:`validate_run` of
        the run's folder with the threshold, on first use). For another harness's run, the
        sections it cannot feed show no note each: the notebook shows them as a few grouped
        lines (:meth:`Context.skipped_lines`).

    Raises
    ------
    ValueError
        A run without tasks, or parameters without a ``threshold`` in (0, 1].
    """
    tables._common.require_rows(run.tasks, what=f"run {run.run_id}")
    # called once Context has checked the threshold (it raises without one); a run folder's
    # in the figure writer's worker (bench/README, issue 37 item 3, ninth round)
    check = functools.partial(validate.validate_run, run.path if run.format == "eval-v2" else run,
                              threshold=parameters.get("threshold"))
    ahead = {"validation": check} if run.format == "eval-v2" else {}
    context = Context("run", inputs={"run": run, "tasks": run.tasks}, ahead=ahead,
                      lazy={} if ahead else {"validation": check},
                      parameters=parameters, out=out,
                      sections=Sections("run", fmt=run.format, quiet=quiet,
                                        grouped=run.format != "eval-v2"),
                      read=[run], subject=f"Run `{run.run_id}` ({run.size}, `{run.path}`)")
    _apply_style()  # after the figure writer has started: its worker imports meanwhile
    return context


def compare_context(baseline: Run, proposed: Run, parameters: Mapping[str, Any], *, out: Path,
                    quiet: bool = False) -> Context:
    """The context of a comparison report (``notebooks/compare_runs.ipynb``).

    Inputs ``baseline`` and ``proposed`` (the runs' tasks), ``baseline_run`` and
    ``proposed_run``; a column counts as present when both runs have it. Parameters and
    errors as in :func:`run_context`.
    """
    for r in (baseline, proposed):
        tables._common.require_rows(r.tasks, what=f"run {r.run_id}")
    inputs = {"baseline": baseline.tasks, "proposed": proposed.tasks, "baseline_run": baseline,
              "proposed_run": proposed}
    context = Context("compare", inputs=inputs, parameters=parameters, out=out,
                      sections=Sections("compare", quiet=quiet, fmt=baseline.format
                                        if baseline.format == proposed.format else "mixed"),
                      read=[baseline, proposed],
                      subject=f"Baseline `{baseline.run_id}` vs proposed `{proposed.run_id}` "
                              f"({len(baseline.tasks)} and {len(proposed.tasks)} tasks)")
    _apply_style()
    return context


def sweep_context(runs: Runs, parameters: Mapping[str, Any], *, out: Path,
                  quiet: bool = False) -> Context:
    """The context of a sweep report (``notebooks/sweep.ipynb``).

    Inputs ``runs`` and ``tasks`` (every run's, stacked). The bootstrap ``seed`` parameter is recorded as the
    manifest's seed. Raises as :func:`dabench_analysis.tables.sweep.check_sweep` (one run_id
    per folder, at least two runs) and :func:`run_context`.
    """
    tables.sweep.check_sweep(runs)
    tasks = runs.tasks
    run_configs(runs.runs, tasks)  # a bad run_config.json fails here, before any section
    formats = {r.format for r in runs.runs}
    sections = Sections("sweep", quiet=quiet,
                        fmt=formats.pop() if len(formats) == 1 else "mixed")
    context = Context("sweep", inputs={"runs": runs, "tasks": tasks},
                      parameters=parameters, out=out, sections=sections, read=[runs],
                      subject=f"{len(runs)} runs ({len(tasks)} task rows)",
                      seeds={"bootstrap": parameters["seed"]} if "seed" in parameters else None)
    _apply_style()
    return context


def _apply_style() -> None:
    """Apply the figures' style (:func:`dabench_analysis.figures.apply_style`), imported here,
    once a report's context has started its figure writer: the figures' modules import
    matplotlib (~0.4 s), and the writer's worker starts that much earlier."""
    from dabench_analysis.figures import apply_style

    apply_style()


def _figure(value: Any) -> Any:
    """The figure of a figure function's result (an Axes, a sequence of Axes, a Figure)."""
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    if isinstance(value, Figure):
        return value
    if isinstance(value, Axes):
        return value.figure
    if isinstance(value, (list, tuple, np.ndarray)) and len(value):
        first = np.ravel(np.asarray(value, dtype=object))[0]  # panels: the first one's figure
        return first.figure if isinstance(first, Axes) else None
    return None


def _batch_writer() -> FigureWriter | None:
    """A figure writer for a report the runner executes (its staging folder is set,
    :data:`~dabench_analysis._atomic.STAGE_ENV`) with a core left over (the runner set
    :data:`~dabench_analysis.report._figure_writer.FIGURE_WRITER_ENV`); None elsewhere, e.g.
    in a notebook opened by hand whatever the user's environment says."""
    from IPython import get_ipython

    if os.environ.get(FIGURE_WRITER_ENV) != "1" or not os.environ.get(STAGE_ENV) \
            or get_ipython() is None:
        return None
    return FigureWriter()


def _display(obj: Any) -> None:
    from IPython import get_ipython
    from IPython.display import display

    if get_ipython() is not None:
        display(obj)
