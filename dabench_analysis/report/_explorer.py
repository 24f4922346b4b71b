"""The explorer (:func:`explore`): a run's tasks in a notebook panel, filtered and sorted, and
everything recorded about the one selected (metrics, steps with the first failing step
highlighted, tool calls, replay, failure attribution); two runs paired on their shared tasks.

Built with ipywidgets. Where no kernel runs (a notebook exported to HTML, a notebook opened
untrusted) the panel is replaced by a static copy: a note, the task list and the selected task
as plain tables (the ``text/html`` of its display).
"""

from __future__ import annotations

import html
from typing import Any

import pandas as pd

from dabench_analysis._lazy import need
from dabench_analysis.export import format_estimate
from dabench_analysis.load._run import Run
from dabench_analysis.load._sweep import Runs
from dabench_analysis.report._display import task_html
from dabench_analysis.report._show import table_html
from dabench_analysis.schema.columns import SUCCESS_THRESHOLD, check_threshold
from dabench_analysis.tables.explore import TaskDetail, filter_tasks, task_detail, task_list

#: Sort keys offered: label -> column of the task list (None: the run's order).
SORTS = {"run order": None, "final score": "final_score", "steps": "steps",
         "runtime": "execution_time", "difference (run - baseline)": "diff"}
#: The filters offered: column of the task list -> label.
FILTERS = {"outcome": "Outcome", "difficulty": "Difficulty", "failure_category": "Failure",
           "change": "Change"}
#: The task list's columns in the static copy (those present).
LIST_COLUMNS = ("task_id", "difficulty", "task_type", "outcome", "final_score", "baseline_score",
                "change", "steps", "first_failing_step", "execution_time", "failure_category")
STATIC_NOTE = ("A static copy of the explorer (no kernel is running here): the task list and "
               "the selected task as plain tables. Open the notebook in JupyterLab and run it "
               "to filter, sort and select tasks.")
ALL = "all"


class Explorer:
    """The explorer of one run, or of a run against a baseline (see :func:`explore`).

    Attributes
    ----------
    run : Run
        The run explored (with a baseline: the second run given).
    baseline : Run or None
    listing : DataFrame
        :func:`dabench_analysis.tables.explore.task_list` of the run (against the baseline).
    widget : ipywidgets.VBox
        The panel (filters, task list, detail).
    """

    def __init__(self, run: Run, baseline: Run | None = None, *, task_id: str | None = None,
                 rows: int = 12, threshold: float = SUCCESS_THRESHOLD):
        need("ipywidgets", what="da.explore", extra="explore")  # before any work
        self.run, self.baseline, self.rows = run, baseline, rows
        self.threshold = check_threshold(threshold)
        self.listing = task_list(run, baseline=baseline, threshold=self.threshold)
        self._details: dict[tuple[str, str], TaskDetail] = {}
        self._build()
        first = task_id or self._default_task()
        if first is not None:
            self.select(first)

    # --- what is shown ------------------------------------------------------------------------
    @property
    def shown(self) -> pd.DataFrame:
        """The rows of :attr:`listing` that pass the filters, in the chosen order."""
        c = self._controls
        pick = {col: [] if c[col].value == ALL else [c[col].value] for col in FILTERS if col in c}
        return filter_tasks(self.listing, **pick, text=c["text"].value,
                            sort_by=SORTS[c["sort"].value], descending=c["descending"].value)

    @property
    def selected(self) -> str | None:
        """The task_id selected (None when no task is)."""
        return self._list.value

    def select(self, task_id: str) -> None:
        """Select a task (clearing the filters that hide it).

        Raises
        ------
        KeyError
            A task_id not in :attr:`listing`.
        """
        if task_id not in set(self.listing["task_id"]):
            raise KeyError(f"task {task_id!r} not in the explorer's list (e.g. "
                           f"{', '.join(self.listing['task_id'].head(5))}, …)")
        if task_id not in set(self.shown["task_id"]):
            for name in [*FILTERS, "text"]:
                if name in self._controls:
                    self._controls[name].value = "" if name == "text" else ALL
        self._list.value = task_id

    def filter(self, *, outcome: str = ALL, difficulty: str = ALL, failure_category: str = ALL,
               change: str = ALL, text: str = "", sort_by: str = "run order",
               descending: bool = False) -> pd.DataFrame:
        """Set the panel's filters and sort (as a click would) and return :attr:`shown`.

        Parameters
        ----------
        outcome, difficulty, failure_category, change : str
            A value of that column of :attr:`listing`, or ``"all"``.
        text : str
            Free text looked for in every column ("" for all).
        sort_by : str
            A key of :data:`SORTS` the listing can sort by.
        descending : bool
            Largest first.

        Raises
        ------
        ValueError
            A value the panel does not offer (the message lists those it does).
        """
        wanted = {"outcome": outcome, "difficulty": difficulty,
                  "failure_category": failure_category, "change": change, "text": text,
                  "sort": sort_by, "descending": descending}
        for name, value in wanted.items():
            control = self._controls.get(name)
            if control is None:
                if value not in (ALL, ""):
                    raise ValueError(f"this explorer has no {name} filter")
                continue
            options = getattr(control, "options", None)
            if options is not None and value not in options:
                raise ValueError(f"{name} {value!r} is not offered; one of "
                                 f"{', '.join(map(str, options))}")
            control.value = value
        return self.shown

    def detail(self, task_id: str, *, baseline: bool = False) -> TaskDetail:
        """The :class:`~dabench_analysis.tables.explore.TaskDetail` of a task (of the baseline
        with ``baseline=True``), read once."""
        run = self.baseline if baseline else self.run
        if run is None:
            raise ValueError("this explorer has no baseline")
        key = (run.run_id, task_id)
        if key not in self._details:
            self._details[key] = task_detail(run, task_id, threshold=self.threshold)
        return self._details[key]

    # --- the panel ------------------------------------------------------------------------------
    def _default_task(self) -> str | None:
        failed = self.listing[self.listing["outcome"].astype("string") != "correct"]
        pool = failed if len(failed) else self.listing
        return str(pool["task_id"].iloc[0]) if len(pool) else None

    def _build(self) -> None:
        import ipywidgets as w

        def menu(col: str) -> w.Dropdown:
            values = self.listing[col]
            order = (list(values.cat.categories) if isinstance(values.dtype, pd.CategoricalDtype)
                     else sorted(values.dropna().astype(str).unique()))
            present = set(values.dropna().astype(str))
            return w.Dropdown(options=[ALL, *[str(v) for v in order if str(v) in present]],
                              value=ALL, description=FILTERS[col],
                              layout=w.Layout(width="15em"),
                              style={"description_width": "5em"})

        c: dict[str, Any] = {col: menu(col) for col in FILTERS if col in self.listing}
        c["text"] = w.Text(placeholder="task id, type, root cause …", description="Search",
                           continuous_update=False, layout=w.Layout(width="20em"),
                           style={"description_width": "4em"})
        sorts = [k for k, v in SORTS.items() if v is None or v in self.listing]
        c["sort"] = w.Dropdown(options=sorts, value=sorts[0], description="Sort by",
                               layout=w.Layout(width="17em"), style={"description_width": "4em"})
        c["descending"] = w.Checkbox(value=False, description="largest first", indent=False,
                                     layout=w.Layout(width="9em"))
        self._controls = c
        self._count = w.HTML()
        self._list = w.Select(options=[], rows=self.rows, layout=w.Layout(width="100%"))
        self._list.add_class("dabench-task-list")
        self._panes = [w.HTML(layout=w.Layout(width="100%"))
                       for _ in range(2 if self.baseline is not None else 1)]
        view = self._panes[0] if len(self._panes) == 1 else w.Tab(
            children=self._panes, titles=[self.run.run_id, f"baseline: {self.baseline.run_id}"])
        for control in c.values():
            control.observe(self._refresh, names="value")
        self._list.observe(self._show, names="value")
        self.widget = w.VBox([w.HTML(self._header()), w.HBox(list(c.values()),
                              layout=w.Layout(flex_flow="row wrap")), self._count, self._list,
                              view], layout=w.Layout(width="100%"))
        self.widget.add_class("dabench-explorer")
        self._refresh()

    def _header(self) -> str:
        run, n = self.run, len(self.listing)
        text = f"<b>{html.escape(run.run_id)}</b>: {n} tasks"
        if self.baseline is not None:
            counts = self.listing["change"].value_counts()
            text = (f"<b>{html.escape(run.run_id)}</b> against <b>"
                    f"{html.escape(self.baseline.run_id)}</b> on {n} shared tasks: "
                    + ", ".join(f"{int(counts.get(k, 0))} {k}"
                                for k in ("improved", "regressed", "unchanged")))
        return (f"<div style='font-size:14px'>{text} (correct: final_score ≥ "
                f"{self.threshold:g})</div>")

    def _label(self, row: pd.Series) -> str:
        parts = [str(row["task_id"])]
        parts += [str(row[c]) for c in ("difficulty", "outcome") if c in row and pd.notna(row[c])]
        score = f"score {format_estimate(row['final_score'])}"
        if "baseline_score" in row:
            score = (f"score {format_estimate(row['baseline_score'])} → "
                     f"{format_estimate(row['final_score'])} ({row['change']})")
        parts.append(score)
        if pd.notna(row.get("steps")):
            parts.append(f"{int(row['steps'])} steps")
        if pd.notna(row.get("execution_time")):
            parts.append(f"{format_estimate(row['execution_time'])} s")
        if pd.notna(row.get("failure_category")):
            parts.append(str(row["failure_category"]))
        return " · ".join(parts)

    def _refresh(self, change=None) -> None:
        shown, current = self.shown, self._list.value
        self._list.options = [(self._label(r), str(r["task_id"])) for _, r in shown.iterrows()]
        ids = list(shown["task_id"].astype(str))
        self._count.value = f"<span>{len(ids)} of {len(self.listing)} tasks</span>"
        if current in ids:
            self._list.value = current
        elif ids:
            self._list.value = ids[0]
        else:
            self._show()

    def _show(self, change=None) -> None:
        task = self._list.value
        if task is None:
            for pane in self._panes:
                pane.value = "<p>No task matches the filters.</p>"
            return
        self._panes[0].value = self._pair_line(task) + task_html(self.detail(task))
        if self.baseline is not None:
            self._panes[1].value = task_html(self.detail(task, baseline=True))

    def _pair_line(self, task: str) -> str:
        if self.baseline is None:
            return ""
        row = self.listing[self.listing["task_id"] == task].iloc[0]
        flip = f", {row['flip']}" if row["flip"] else ""
        return (f"<p style='font-size:13px'>final_score {format_estimate(row['baseline_score'])}"
                f" ({html.escape(self.baseline.run_id)}) → {format_estimate(row['final_score'])}"
                f" ({html.escape(self.run.run_id)}): <b>{row['change']}{flip}</b></p>")

    # --- displays -------------------------------------------------------------------------------
    def static_html(self) -> str:
        """The static copy: a note, the task list and the selected task as plain tables."""
        cols = [c for c in LIST_COLUMNS if c in self.listing]
        task = self.selected
        detail = "" if task is None else self._pair_line(task) + task_html(self.detail(task))
        if task is not None and self.baseline is not None:
            detail += task_html(self.detail(task, baseline=True))
        return (f'<div class="dabench-explorer-static"><p class="dabench-note"><strong>Note.'
                f"</strong> {html.escape(STATIC_NOTE)}</p>{self._header()}"
                f"{table_html(self.listing, columns=cols, max_rows=100)}{detail}</div>")

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        bundle = self.widget._repr_mimebundle_()
        bundle["text/html"] = self.static_html()
        bundle["text/plain"] = repr(self)
        return bundle

    def __repr__(self) -> str:
        against = f" against {self.baseline.run_id!r}" if self.baseline is not None else ""
        return (f"<Explorer of {self.run.run_id!r}{against}: {len(self.listing)} tasks, "
                f"selected {self.selected or 'none'}>")


def explore(run: Run, proposed: Run | None = None, *, task_id: str | None = None,
            rows: int = 12, threshold: float = SUCCESS_THRESHOLD) -> Explorer:
    """Open a run in a notebook panel: its tasks filtered and sorted, one task in detail.

    Parameters
    ----------
    run : Run
        The run to explore; with ``proposed``, the baseline.
    proposed : Run, optional
        ``explore(base, run)`` pairs the two runs on the tasks both hold: each task's score in
        both, improved / regressed / unchanged (and fixed / broken at the success threshold),
        the detail of both side by side in tabs.
    task_id : str, optional
        The task selected first (default: the first task not correct, else the first task).
    rows : int
        Height of the task list, in rows.
    threshold : float
        Success threshold in (0, 1] of the outcomes (correct: ``final_score >= threshold``);
        default 0.8 (:data:`~dabench_analysis.schema.SUCCESS_THRESHOLD`).

    Returns
    -------
    Explorer
        Displayed as the panel: filters (outcome, difficulty, failure category, change for a
        pair, free text over every column), sort (final score, steps, runtime, difference),
        the task list, and the selected task: metrics, failure attribution, steps with the
        first failing step highlighted, tool calls, replay. Without a kernel (an HTML export)
        its display is the static copy (:meth:`Explorer.static_html`).

    Raises
    ------
    TypeError
        An argument that is not a Run (a Runs: pick one, ``runs["run_id"]``).
    KeyError
        A ``task_id`` that is not one of the (shared) tasks.
    ValueError
        A threshold outside (0, 1], or missing ``task_id`` / ``final_score`` columns.

    Notes
    -----
    The task list is :func:`dabench_analysis.tables.explore.task_list` and its filters
    :func:`~dabench_analysis.tables.explore.filter_tasks`; correctness is
    :func:`dabench_analysis.schema.correct` at ``threshold``; a task's
    detail is :func:`~dabench_analysis.tables.explore.task_detail` (seed 000 §Debug Failed
    Task, §View Trajectory). Load with ``include_text=True`` to see thoughts and observations.

    Examples
    --------
    >>> from dabench_analysis import load_run
    >>> ex = explore(load_run("data/sample_runs/baseline_react"), task_id="task_24")
    >>> ex
    <Explorer of 'baseline_react': 80 tasks, selected task_24>
    >>> len(ex.filter(outcome="failed", sort_by="steps", descending=True)), ex.selected
    (7, 'task_24')
    """
    for name, value in (("run", run), ("proposed", proposed)):
        if value is not None and not isinstance(value, Run):
            hint = " (a Runs: pick one, runs['<run_id>'])" if isinstance(value, Runs) else ""
            raise TypeError(f"explore() takes a Run as {name}, got {type(value).__name__}{hint}")
    if proposed is None:
        return Explorer(run, task_id=task_id, rows=rows, threshold=threshold)
    return Explorer(proposed, run, task_id=task_id, rows=rows, threshold=threshold)
