"""Figures in Jupyter (issue 14): each shows exactly once inline, later plots keep showing, and no
figure function changes pyplot's interactive mode, rcParams or current figure.

The notebook test runs a real kernel (the venv's registered "python3") through nbclient and
counts the ``image/png`` outputs of each cell.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import matplotlib as mpl
import matplotlib.pyplot as plt
import nbformat
import pandas as pd
import pytest
from matplotlib.figure import Figure

from dabench_analysis import figures
from dabench_analysis.judge import _figures as judge_plots
from dabench_analysis.research_eval import figures as re_plots

ROOT = Path(__file__).resolve().parents[1]

TASKS = pd.DataFrame({
    "task_id": ["t1", "t2", "t3", "t4"], "difficulty": ["Easy", "Hard", "Easy", "Medium"],
    "execution_success": [1, 1, 1, 1], "final_score": [0.9, 0.3, 0.6, 1.0],
    "execution_time": [10.0, 20.0, 30.0, 40.0], "total_tokens": [100, 200, 300, 400],
    "failure_category": [None, "PLANNING_FAILURE", "REASONING_FAILURE", None],
    "failure_stage": [None, "PLAN", "VERIFY", None], "confidence_score": [0.9, 0.4, 0.7, 0.95],
    "analyst_score": [0.8, 0.2, 0.5, 0.9], "autonomy_score": [1.0, 2 / 3, 1.0, 1 / 3],
    "tool_efficiency": [0.9, 0.5, 0.7, 1.0], "verification_score": [0.7, 0.1, 0.4, 0.8],
    "data_understanding_score": [0.6, 0.3, 0.2, 0.9]})
CALLS = pd.DataFrame({"task_id": ["a", "b"], "tool_name": ["sql", "py"], "success": [True, False],
                      "latency_seconds": [1.0, 2.0], "tokens": [1, 2]})

CALLS_BY_NAME = {
    "score_distribution": lambda ax: figures.score_distribution(TASKS, hue="difficulty", ax=ax),
    "score_distribution_seconds": lambda ax: figures.score_distribution(
        TASKS, x="execution_time", ax=ax),
    "failure_distribution": lambda ax: figures.failure_distribution(TASKS, ax=ax),
    "difficulty_bars": lambda ax: figures.difficulty_bars(TASKS, ax=ax),
    "failure_by_stage": lambda ax: figures.failure_by_stage(TASKS, ax=ax),
    "reliability_diagram": lambda ax: figures.reliability_diagram(TASKS, ax=ax),
    "paired_difference": lambda ax: figures.paired_difference(
        TASKS, TASKS.assign(final_score=[1.0, 0.5, 0.6, 0.9]), ax=ax),
    "correlation_matrix": lambda ax: figures.correlation_matrix(TASKS, ax=ax),
    "autonomy_vs_efficiency": lambda ax: figures.autonomy_vs_efficiency(TASKS, ax=ax),
    "plot_configurations": lambda ax: judge_plots.plot_configurations(
        pd.DataFrame({"configuration": ["x"], "mcc": [0.2]}), ax=ax),
    "plot_latency": lambda ax: re_plots.plot_latency(
        pd.DataFrame({"run_id": ["a"], "elapsed_ms": [1.0]}), ax=ax),
    "plot_pass_rate": lambda ax: re_plots.plot_pass_rate(
        pd.DataFrame({"run_id": ["a"], "pass_rate": [0.5], "ci_low": [0.2], "ci_high": [0.8]}),
        ax=ax),
    "tool_latency": lambda ax: figures.tool_latency(
        CALLS, ax=None if ax is None else ax.figure.subplots(1, 2)),
}


@pytest.fixture
def interactive():
    """pyplot in interactive mode, as in a notebook; restored afterwards."""
    was = plt.isinteractive()
    plt.ion()
    yield
    plt.interactive(was)


@pytest.mark.parametrize("name", sorted(CALLS_BY_NAME))
def test_figure_leaves_interactive_mode_rcparams_and_current_figure(name, interactive):
    user = plt.figure()  # the user's figure, current
    rc = dict(mpl.rcParams)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # paired_difference: tasks made by hand
        made = CALLS_BY_NAME[name](None)
        assert plt.isinteractive() and dict(mpl.rcParams) == rc and plt.gcf() is user
        assert made is not None and plt.get_fignums() == [user.number, user.number + 1]
        CALLS_BY_NAME[name](Figure().add_subplot())
    assert plt.isinteractive() and dict(mpl.rcParams) == rc and plt.gcf() is user


def test_twenty_five_calls_never_pile_up(interactive):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "More than 20 figures have been opened" would raise
        before = plt.get_fignums()
        for _ in range(25):  # on the caller's Axes: no figure is registered with pyplot
            figures.score_distribution(TASKS, ax=Figure().add_subplot())
            figures.tool_latency(CALLS, ax=Figure().subplots(1, 2))
        assert plt.get_fignums() == before
        for _ in range(25):  # new figures, each closed as the inline backend does after a cell
            plt.close(figures.difficulty_bars(TASKS).figure)
        assert plt.get_fignums() == before


_SETUP = """\
import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns
from dabench_analysis import figures
t = pd.DataFrame({"final_score": [0.1, 0.5, 0.85, 0.95, 1.0],
                  "execution_time": [3.0, 9.0, 20.0, 41.0, 60.0],
                  "difficulty": ["Easy", "Hard", "Easy", "Medium", "Extreme"],
                  "autonomy_score": [1.0, 1.0, 2 / 3, 1.0, 1 / 3],
                  "tool_efficiency": [1.0, 0.5, 0.7, 0.9, 0.2],
                  "failure_category": ["PLANNING_FAILURE", None, None, None, None]})
calls = pd.DataFrame({"task_id": ["a", "b"], "tool_name": ["sql", "py"],
                      "success": [True, False], "latency_seconds": [1.0, 2.0], "tokens": [1, 2]})
"""

# (source, images expected); the first plot of the kernel is a toolkit figure
_CELLS = [
    (_SETUP, 0),
    ("ax = figures.score_distribution(t, hue='difficulty')", 1),      # toolkit figure
    ("sns.histplot(data=t, x='final_score')", 1),                       # the user's seaborn plot
    ("ax = figures.failure_distribution(t)", 1),                        # another toolkit figure
    ("t.plot.scatter(x='execution_time', y='final_score')", 1),         # the user's pandas plot
    ("figures.autonomy_vs_efficiency(t)", 1),                           # last line of the cell
    ("figures.score_distribution(t, x='execution_time')", 1),
    ("figures.tool_latency(calls)", 1),                                 # the two-panel figure
    *[("figures.difficulty_bars(t.assign(execution_success=1, total_tokens=1))", 1)] * 25,
    ("print(plt.isinteractive(), plt.get_fignums())", 0),
]


def test_each_figure_shows_once_inline_and_later_plots_keep_showing(monkeypatch):
    import nbclient

    monkeypatch.delenv("MPLBACKEND", raising=False)  # the kernel picks the inline backend
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(src) for src, _ in _CELLS])
    nbclient.NotebookClient(nb, kernel_name="python3", timeout=300,
                            resources={"metadata": {"path": str(ROOT)}}).execute()
    images = [sum("image/png" in out.get("data", {}) for out in cell.outputs)
              for cell in nb.cells]
    assert images == [n for _, n in _CELLS]
    streams = "".join(out.get("text", "") for cell in nb.cells for out in cell.outputs
                      if out.output_type == "stream")
    assert "More than 20 figures" not in streams
    # interactive mode is still on at the end, and the inline backend closed every figure
    assert nb.cells[-1].outputs[-1]["text"] == "True []\n"
    # a figure function as the last line returns an Axes (text), not a second image
    last_line = nb.cells[5].outputs
    assert [o.output_type for o in last_line].count("execute_result") == 1
    assert next(o for o in last_line if o.output_type == "execute_result")["data"][
        "text/plain"].startswith("<Axes:")
