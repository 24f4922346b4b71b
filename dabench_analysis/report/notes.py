"""Sentences a report shows beside a table, computed from it (a catalogue part's text)."""

from __future__ import annotations

import pandas as pd


def shared_tasks_note(counts: pd.DataFrame) -> str:
    """Say that the runs of a sweep were evaluated on different task sets (else nothing).

    Parameters
    ----------
    counts : DataFrame
        :func:`dabench_analysis.tables.sweep.task_counts`: one row per run with ``run_id``,
        ``n_own`` (its tasks) and ``n_shared`` (the tasks every run has).

    Returns
    -------
    str
        Markdown, or ``""`` when every run has the shared tasks only.

    Examples
    --------
    >>> counts = pd.DataFrame({"run_id": ["a", "b"], "n_own": [12, 10], "n_shared": [10, 10]})
    >>> shared_tasks_note(counts)
    '**Runs were evaluated on different task sets**: compared on the 10 tasks all 2 runs share (own counts 10–12).'
    >>> shared_tasks_note(counts.assign(n_own=10))
    ''
    """
    n_shared = int(counts["n_shared"].iloc[0])
    if not (counts["n_own"] != n_shared).any():
        return ""
    return (f"**Runs were evaluated on different task sets**: compared on the {n_shared} tasks "
            f"all {len(counts)} runs share (own counts {counts['n_own'].min()}–"
            f"{counts['n_own'].max()}).")
