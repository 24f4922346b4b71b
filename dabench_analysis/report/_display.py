"""How a run, a sweep, a task and a replay look in a notebook: HTML for IPython's display.

The objects live below (:class:`~dabench_analysis.load.Run`, :class:`~dabench_analysis.load.Runs`
and :class:`~dabench_analysis.load._replay.Replay` in ``load``,
:class:`~dabench_analysis.tables.explore.TaskDetail` in ``tables``) and keep a short text
``repr``; their HTML is drawn here, with the tables of :func:`~dabench_analysis.report.show`, and
:func:`register` hands it to IPython's ``text/html`` formatter (done when the package is imported
inside IPython, and by ``%load_ext dabench_analysis``). The lower layers never import this one.
"""

from __future__ import annotations

import html
import json
import sys
import warnings
from collections.abc import Mapping, Sequence

import pandas as pd

from dabench_analysis import schema
from dabench_analysis.export import format_estimate, format_interval, present, visible
from dabench_analysis.export._presentation import column_label
from dabench_analysis.load._replay import Replay
from dabench_analysis.load._run import Run
from dabench_analysis.load._sweep import Runs
from dabench_analysis.report._show import table_html
from dabench_analysis.schema.numbers import format_parameter
from dabench_analysis.tables._summary import key_numbers
from dabench_analysis.tables.explore import TaskDetail

#: The trajectory columns shown for a task's steps, in order (those the run has; stage and agent
#: share a cell). A step's duration and tokens are in ``detail.steps``: at 1280 px, with
#: JupyterLab's file browser open, the text columns keep 200 px each only without them.
STEP_COLUMNS = ("step_id", "stage", "agent", "tool", "success", "thought", "observation")
#: The tool-call columns shown for a task, in order (those the run has).
CALL_COLUMNS = ("call_id", "step_id", "tool_name", "success", "latency_seconds", "error_type",
                "error_message")
#: Headers of the side files' columns shown (their unit in the label).
LABELS = {"step_id": "Step", "success": "OK", "latency_seconds": "Latency (s)",
          "call_id": "Call", "tool_name": "Tool"}
#: Row highlights of a task's steps: (class, background, tooltip).
FIRST_FAILURE = ("dabench-first-failure", "#f6c6c1", "the first failing step")
EVIDENCE = ("dabench-evidence", "#fbe3c4", "a step the failure attribution names")
FAILED = ("dabench-failed", "#fdf0ee", "a failed step")
_BOX = ("font-family:var(--jp-content-font-family, sans-serif);font-size:13px;"
        "line-height:1.4;margin:0.2em 0")
#: Cells padded and rows striped as in JupyterLab's own tables, also inside a widget (whose
#: HTML gets none of JupyterLab's table style); a row's own highlight comes first.
STYLE = ("<style>.dabench-box table.dabench-table{border-collapse:collapse;font-size:12px}"
         ".dabench-box table.dabench-table th,.dabench-box table.dabench-table td"
         "{padding:0.25em 0.6em}.dabench-box table.dabench-table thead"
         "{border-bottom:1px solid #999}.dabench-box table.dabench-table tbody "
         "tr:nth-child(odd){background-color:#f5f5f5}</style>")


def _facts(items: Sequence[tuple[str, object]]) -> str:
    """Label / value pairs side by side, wrapping onto more lines as the page narrows."""
    cells = "".join(
        f'<div style="min-width:9em;max-width:36em"><div style="color:#666;font-size:0.9em">'
        f"{html.escape(visible(str(k)))}</div><div>{html.escape(visible(str(v)))}</div></div>"
        for k, v in items)
    return (f'<div class="dabench-facts" style="display:flex;flex-wrap:wrap;gap:0.4em 1.6em;'
            f'margin:0.3em 0 0.6em">{cells}</div>')


def _heading(text: str, level: int = 4) -> str:
    return f'<h{level} style="margin:0.8em 0 0.3em">{html.escape(text)}</h{level}>'


def _accuracy(numbers: Mapping) -> str:
    acc = numbers.get("answer_accuracy")
    lo, hi = numbers.get("answer_accuracy_ci_low"), numbers.get("answer_accuracy_ci_high")
    if acc is None or pd.isna(acc):
        return "n/a (no final_score)"
    return format_interval(acc, lo, hi)


def _numbers(run: Run) -> Mapping:
    """The run's key numbers (:func:`~dabench_analysis.tables.key_numbers`), none where they
    cannot be computed: a display shows what it can and never raises or warns."""
    if not len(run.tasks) or "final_score" not in run.tasks:
        return {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return key_numbers(run)
        except (ValueError, TypeError, KeyError):
            return {}


def _findings(findings: Sequence) -> str:
    counts = {s: sum(f.severity == s for f in findings) for s in ("error", "warning", "info")}
    return f"{len(findings)} (" + ", ".join(f"{n} {s}" for s, n in counts.items()) + ")"


def run_html(run: Run) -> str:
    """A :class:`~dabench_analysis.load.Run` as HTML: name, tasks, answer accuracy at its
    threshold with its 95% interval, files present and absent, findings.

    Parameters
    ----------
    run : Run

    Returns
    -------
    str
        HTML (every value escaped, control characters as escapes): the facts of the run side
        by side; "n/a" for an accuracy that cannot be computed (no ``final_score``).

    Notes
    -----
    Answer accuracy and its interval are :func:`~dabench_analysis.tables.answer_accuracy`
    (through :func:`~dabench_analysis.tables.key_numbers`; correct:
    :func:`dabench_analysis.schema.correct` at 0.8, the default threshold), as in a report's
    ``summary.json``: Wilson over tasks, or with repeated trials over tasks (trials averaged
    within a task first), never over trials as if they were independent.

    Examples
    --------
    >>> from dabench_analysis import load_run
    >>> page = run_html(load_run("data/sample_runs/proposed_aat"))
    >>> "0.900 [" in page and "final_score ≥ 0.8" in page and "Files absent" in page
    True
    """
    numbers = _numbers(run)
    tasks = f"{run.size} ({len(run.tasks)} rows)" if run.trials > 1 else len(run.tasks)
    facts = [("Tasks", tasks),
             (f"Answer accuracy (final_score ≥ {schema.SUCCESS_THRESHOLD:g}, 95% CI)",
              _accuracy(numbers)),
             ("Findings when loaded (run.findings)", _findings(run.findings)),
             ("Files present", ", ".join(run.files_present) or "none"),
             ("Files absent", ", ".join(run.files_absent) or "none"),
             ("Folder", str(run.path))]
    return (f'<div class="dabench-run dabench-box" style="{_BOX}">'
            f'{_heading(f"Run {run.run_id}")}{_facts(facts)}</div>')


def runs_html(runs: Runs) -> str:
    """A :class:`~dabench_analysis.load.Runs` as HTML: one row per run (tasks, the most trials
    of a task when a run repeats them, answer accuracy with its interval (as
    :func:`run_html`), files absent,
    findings), then the folders skipped.

    Parameters
    ----------
    runs : Runs

    Returns
    -------
    str
        HTML: a table through :func:`~dabench_analysis.report.table_html` (the reports'
        presentation), and a table of ``runs.skipped`` when folders were skipped.

    Examples
    --------
    >>> from dabench_analysis import load_runs
    >>> "baseline_react" in runs_html(load_runs("data/sample_runs"))
    True
    """
    rows = []
    for run in runs:
        numbers = _numbers(run)
        rows.append({"run_id": run.run_id, "n_tasks": run.tasks["task_id"].nunique()
                     if "task_id" in run.tasks else len(run.tasks), "trials_max": run.trials,
                     "success_threshold": format_parameter(schema.SUCCESS_THRESHOLD),
                     **{k: numbers.get(k) for k in ("answer_accuracy", "answer_accuracy_ci_low",
                                                    "answer_accuracy_ci_high")},
                     "files_absent": ", ".join(run.files_absent) or "none",
                     "findings": _findings(run.findings)})
    frame = pd.DataFrame(rows)
    if len(frame) and frame["trials_max"].max() <= 1:  # eval-v2: one row per task
        frame = frame.drop(columns="trials_max")
    table = table_html(frame) if rows else "<p>No run loaded.</p>"
    skipped = (_heading(f"Not in the sweep ({len(runs.skipped)}): not evaluated or not "
                        "loadable", 5) + table_html(runs.skipped)
               if len(runs.skipped) else "")
    return (f'{STYLE}<div class="dabench-runs dabench-box" style="{_BOX}">'
            f'{_heading(f"{len(runs)} runs")}{table}{skipped}</div>')


def _attribution(replay: Mapping | None) -> str:
    fa = (replay or {}).get("failure_attribution")
    if not isinstance(fa, Mapping) or not fa:
        return ""
    items = [(column_label(k) if k in schema.TASK_COLUMNS else k.replace("_", " ").capitalize(),
              ", ".join(map(str, v)) if isinstance(v, list) else v) for k, v in fa.items()]
    return (f'<div class="dabench-attribution" style="border-left:3px solid #d55e00;'
            f'padding-left:0.8em">{_heading("Failure attribution", 5)}{_facts(items)}</div>')


def replay_html(replay: Mapping, *, attribution: bool = True) -> str:
    """A task's ``task_replay.json`` as HTML: question, outcome, evaluation, coordinator and
    verification, the failure attribution, the final answer, and the whole JSON on a click.

    Parameters
    ----------
    replay : Replay or dict
    attribution : bool
        Show the failure attribution (a task's page shows it above its steps instead).

    Returns
    -------
    str
        HTML: the replay's facts, its ``failure_attribution``, ``final_answer_csv`` and the
        whole JSON in a ``<details>`` element (closed), every value escaped.

    Examples
    --------
    >>> page = replay_html(Replay({"task_id": "t1", "outcome_status": "failed",
    ...                            "failure_attribution": {"root_cause": "KeyError: 'x'"}}))
    >>> "KeyError: &#x27;x&#x27;" in page and "Failure attribution" in page
    True
    """
    ev = replay.get("evaluation_result") if isinstance(replay.get("evaluation_result"),
                                                       Mapping) else {}
    attempts = replay.get("execution_attempts")
    keys = ("question", "outcome_status", "coordinator_final_decision", "verification_passed")
    facts = [(column_label(k) if k in schema.TASK_COLUMNS else k.replace("_", " ").capitalize(),
              replay[k]) for k in keys if replay.get(k) is not None]
    facts += [(f"Evaluation: {column_label(k) if k in schema.TASK_COLUMNS else k.replace('_', ' ')}",
               format_estimate(v) if isinstance(v, int | float) and not isinstance(v, bool) else v)
              for k, v in ev.items()]
    if isinstance(attempts, list):
        facts.append(("Execution attempts", len(attempts)))
    answer = replay.get("final_answer_csv")
    answer_html = (_heading("Final answer (CSV)", 5) + '<pre style="max-height:12em;overflow:'
                   f'auto">{html.escape(visible(str(answer)))}</pre>' if answer else "")
    full = html.escape(visible(json.dumps(replay, indent=1, ensure_ascii=False, default=str)))
    return (f'<div class="dabench-replay dabench-box" style="{_BOX}">{_facts(facts)}'
            f"{_attribution(replay) if attribution else ''}{answer_html}"
            f'<details><summary style="cursor:pointer">The whole {schema.REPLAY_FILE}</summary>'
            f'<pre style="max-height:30em;overflow:auto">{full}</pre></details></div>')


def _row_attrs(detail: TaskDetail) -> list[dict[str, str] | None]:
    first, evidence = detail.first_failing_step, set(detail.evidence_steps)
    out: list[dict[str, str] | None] = []
    for step, ok in zip(detail.steps.get("step_id", pd.Series(dtype="Int64")),
                        detail.steps.get("success", pd.Series(pd.NA, index=detail.steps.index)),
                        strict=True):
        kind = (FIRST_FAILURE if first is not None and step == first else
                EVIDENCE if step in evidence else FAILED if pd.notna(ok) and not ok else None)
        out.append(None if kind is None else {"class": kind[0], "title": kind[2],
                                              "style": f"background:{kind[1]}"})
    return out


def _legend(detail: TaskDetail) -> str:
    first = detail.first_failing_step
    marks = ([FIRST_FAILURE[1:]] if first is not None else []) + \
        ([EVIDENCE[1:]] if detail.evidence_steps else []) + [FAILED[1:]]
    text = "".join(f'<span style="background:{c};padding:0 0.5em;margin-right:1em">{t}'
                   + (f" ({first})" if t == FIRST_FAILURE[2] else "") + "</span>"
                   for c, t in marks)
    return f'<p style="font-size:0.9em;margin:0.2em 0">{text}</p>'


def steps_html(detail: TaskDetail) -> str:
    """A task's trajectory steps as one table: the first failing step highlighted, the steps
    the failure attribution names and the other failed steps tinted, long text cut.

    Parameters
    ----------
    detail : TaskDetail

    Returns
    -------
    str
        A legend and one table (never split: :data:`STEP_COLUMNS`, stage and agent in one
        cell), rows marked by class: ``dabench-first-failure`` (the step of
        :attr:`TaskDetail.first_failing_step`), ``dabench-evidence`` (the failure
        attribution's ``evidence_trace_step_ids``), ``dabench-failed`` (other steps whose
        ``success`` is false); a note when thoughts and observations were not loaded.

    Notes
    -----
    The first failing step is the first step whose ``success`` is false (seed 000 §View
    Trajectory).

    Examples
    --------
    >>> from dabench_analysis import load_run
    >>> from dabench_analysis.tables.explore import task_detail
    >>> page = steps_html(task_detail(load_run("data/sample_runs/baseline_react"), "task_24"))
    >>> page.count('class="dabench-first-failure"')
    1
    """
    steps = detail.steps
    if steps.empty:
        return "<p>No trajectory steps recorded for this task.</p>"
    cols = [c for c in STEP_COLUMNS if c in steps]
    if "stage" in cols and "agent" in cols:  # one cell, on two lines where the page is narrow
        steps = steps.assign(stage=steps["stage"].astype("string").fillna("n/a") + " · "
                             + steps["agent"].astype("string").fillna("n/a"))
        cols.remove("agent")
    note = ("" if {"thought", "observation"} <= set(steps) else
            "<p><em>Thoughts and observations are not loaded: "
            "load_run(..., include_text=True).</em></p>")
    labels = {k: v for k, v in LABELS.items() if k in cols}
    if "agent" in steps and "agent" not in cols:
        labels["stage"] = "Stage · agent"
    return (_legend(detail) + table_html(steps, columns=cols, labels=labels, fit=False,
                                         row_attrs=_row_attrs(detail)) + note)


def task_html(detail: TaskDetail) -> str:
    """A :class:`~dabench_analysis.tables.explore.TaskDetail` as HTML: headline metrics, failure
    attribution, steps (:func:`steps_html`), tool calls (failed ones tinted) and replay.

    Parameters
    ----------
    detail : TaskDetail

    Returns
    -------
    str
        HTML: the outcome and the task's :data:`~dabench_analysis.tables.explore.SUMMARY_COLUMNS`
        (labels and numbers by :func:`~dabench_analysis.export.present`), the failure
        attribution, the steps, the tool calls (:data:`CALL_COLUMNS`) and the replay
        (:func:`replay_html`).

    Examples
    --------
    >>> from dabench_analysis import load_run
    >>> from dabench_analysis.tables.explore import task_detail
    >>> page = task_html(task_detail(load_run("data/sample_runs/baseline_react"), "task_24"))
    >>> "Failure attribution" in page and "Tool calls (14)" in page
    True
    """
    shown = present(detail.summary.to_frame().T.infer_objects())
    facts = [("Outcome", f"{detail.outcome} (final_score ≥ {detail.success_threshold:g} is "
                         "correct)"), *zip(shown.columns, shown.iloc[0], strict=True)]
    calls = detail.tool_calls
    failed = calls["success"].astype("boolean").eq(False).fillna(False).tolist() \
        if "success" in calls else [False] * len(calls)
    rows = [{"style": f"background:{FAILED[1]}", "title": "a failed call"} if f else None
            for f in failed]
    cols = [c for c in CALL_COLUMNS if c in calls]
    calls_html = (table_html(calls, columns=cols, labels={k: v for k, v in LABELS.items()
                                                          if k in cols}, row_attrs=rows, fit=False)
                  if len(calls) else "<p>No tool calls.</p>")
    replay = (replay_html(detail.replay, attribution=False) if detail.replay is not None
              else f"<p>No {schema.REPLAY_FILE} for this task.</p>")
    title = f"Task {detail.task_id}" + (f" · run {detail.run_id}" if detail.run_id else "")
    return (f'{STYLE}<div class="dabench-task dabench-box" style="{_BOX}">{_heading(title)}'
            f"{_facts(facts)}"
            f"{_attribution(detail.replay)}"
            f"{_heading(f'Steps ({len(detail.steps)})', 5)}{steps_html(detail)}"
            f"{_heading(f'Tool calls ({len(calls)})', 5)}{calls_html}"
            f"{_heading('Replay', 5)}{replay}</div>")


#: What :func:`register` hands to IPython: type -> HTML function.
DISPLAYS = {Run: run_html, Runs: runs_html, TaskDetail: task_html, Replay: replay_html}


def register(shell=None) -> bool:
    """Show runs, sweeps, tasks and replays as HTML in IPython and Jupyter.

    Parameters
    ----------
    shell : InteractiveShell, optional
        Default: the running one (``IPython.get_ipython()``).

    Returns
    -------
    bool
        True when registered; False outside IPython (nothing to do).

    Examples
    --------
    >>> register()  # plain Python: no IPython shell running
    False
    """
    if shell is None and "IPython" in sys.modules:  # else not inside IPython: no import
        from IPython import get_ipython

        shell = get_ipython()
    if shell is None:
        return False
    formatter = shell.display_formatter.formatters["text/html"]
    for cls, fn in DISPLAYS.items():
        formatter.for_type(cls, fn)
    return True
