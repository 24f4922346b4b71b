"""Several loaded runs (a sweep): :class:`Runs`, with their tasks, steps and tool calls stacked.

Made by :func:`~dabench_analysis.load.load_runs`. The trajectories and tool calls of every run
are read on first access of :attr:`Runs.trajectory` / :attr:`Runs.tool_calls`, through the one
pipeline (:func:`dabench_analysis.load._run.load_sides`), after which each run's own attribute is
its slice.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cached_property, partial

import pandas as pd

from dabench_analysis.load import _folders as folders
from dabench_analysis.load._pipeline import concat_frames
from dabench_analysis.load._run import Run, load_sides, rows_per_task

SKIPPED_COLUMNS = ["path", "reason"]


@dataclass
class Runs:
    """Several loaded runs, with their tasks, steps and tool calls stacked.

    Attributes
    ----------
    runs : list of Run
        In the order found (sorted paths for a glob or parent folder).
    skipped : DataFrame
        One row per folder or path not loaded: ``path`` (str), ``reason`` (str: not
        evaluated, does not exist, the load error's first line, duplicate run_id, ...).
    tasks : DataFrame
        ``run.tasks`` of every run stacked (catalogue dtypes; ``run_id`` tells them apart),
        with a fresh RangeIndex. A column absent from a run is missing there.
    trajectory, tool_calls : DataFrame
        Loaded on first access, every run's file at once (each run's own attribute is then
        its slice, with its findings added), and stacked the same way.
    findings : DataFrame
        Every run's findings: ``run_id``, ``severity``, ``file``, ``row``, ``column``,
        ``check``, ``message``.
    """

    runs: list[Run]
    skipped: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=SKIPPED_COLUMNS))
    mapper: Callable = field(default_factory=lambda: folders.mapper(False, False, 1), repr=False)
    stacked: pd.DataFrame | None = field(default=None, repr=False)  # tasks, if built already

    @cached_property
    def tasks(self) -> pd.DataFrame:
        """Every run's tasks stacked (one row per run and task)."""
        if self.stacked is not None:
            return self.stacked
        return concat_frames([r.tasks for r in self.runs])

    @cached_property
    def trajectory(self) -> pd.DataFrame:
        """Every run's ``trajectory.csv`` stacked (text columns only with ``include_text``)."""
        return load_sides(self.runs, "trajectory", mapper=partial(self.mapper, label="trajectory"))\
            if self.runs else pd.DataFrame()

    @cached_property
    def tool_calls(self) -> pd.DataFrame:
        """Every run's ``tool_calls.csv`` stacked."""
        return load_sides(self.runs, "tool_calls", mapper=partial(self.mapper, label="tool_calls"))\
            if self.runs else pd.DataFrame()

    @property
    def findings(self) -> pd.DataFrame:
        """Every run's findings, one row each (see :class:`~dabench_analysis.load.Finding`)."""
        rows = [{"run_id": r.run_id, "severity": f.severity, "file": f.file, "row": f.row,
                 "column": f.column, "check": f.check, "message": f.message}
                for r in self.runs for f in r.findings]
        cols = ["run_id", "severity", "file", "row", "column", "check", "message"]
        return pd.DataFrame(rows, columns=cols).astype({"row": "Int64"})

    @property
    def trials(self) -> int:
        """The most trials of a task: rows per task in one run, or the runs of one declared
        configuration (its repetitions are its trials).

        Examples
        --------
        >>> from dabench_analysis import load_runs
        >>> load_runs(["data/sample_runs/baseline_react", "data/sample_runs/proposed_aat"]).trials
        1
        """
        from dabench_analysis.load._config import run_configs

        per = run_configs(self.runs, self.tasks)["config"].dropna().value_counts() \
            if self.runs else ()
        return max([1, self.row_trials, *([int(per.max())] if len(per) else [])])

    @property
    def row_trials(self) -> int:
        """The most rows of one task in one run (the most of :attr:`Run.trials`), from the
        stacked tasks (:func:`~dabench_analysis.load._run.rows_per_task`; 0 without tasks).

        Examples
        --------
        >>> from dabench_analysis import load_runs
        >>> load_runs(["data/sample_runs/baseline_react", "data/sample_runs/proposed_aat"]).row_trials
        1
        """
        return rows_per_task(self.tasks, ("run_id", "task_id"))

    @property
    def run_ids(self) -> list[str]:
        """The run ids, in order."""
        return [r.run_id for r in self.runs]

    def __len__(self) -> int:
        return len(self.runs)

    def __iter__(self) -> Iterator[Run]:
        return iter(self.runs)

    def __getitem__(self, key: int | str) -> Run:
        if isinstance(key, str):
            for r in self.runs:
                if r.run_id == key:
                    return r
            raise KeyError(f"no run {key!r}; loaded: {', '.join(self.run_ids[:10])}"
                           f"{' ...' if len(self.runs) > 10 else ''}")
        return self.runs[key]

    def __repr__(self) -> str:
        n_tasks = sum(len(r.tasks) for r in self.runs)
        ids = ", ".join(self.run_ids[:3]) + (", ..." if len(self.runs) > 3 else "")
        skip = f", {len(self.skipped)} skipped (see .skipped)" if len(self.skipped) else ""
        return f"<Runs: {len(self.runs)} runs ({ids}), {n_tasks} tasks{skip}>"
