"""A run folder holding both task files, ``task_metrics.csv`` and the legacy
``comprehensive_evaluation.csv`` (:data:`dabench_analysis.schema._files.TASK_FILES`): the loader
reads the first, and :func:`second_task_files` says so when the other's scores differ (the
eval-v2 guide writes the legacy file beside the new one for backward compatibility: when the two
agree, as they do in every run the evaluator writes, nothing is said).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pandas as pd

from dabench_analysis.load import _pipeline as pipeline
from dabench_analysis.load._findings import Finding
from dabench_analysis.schema._files import LEGACY_TASK_FILE, LEGACY_TASKS, TASK_FILE

_SHOWN = 3  # differing tasks quoted in the message
SECOND_COLUMNS = ("task_id", "final_score")  # what the legacy file is read for


def read_second(dirs: Sequence[Path], results: Sequence, *, cache: bool = True,
                mapper: Callable = map) -> dict[int, pipeline.FileResult]:
    """The legacy task file of each run folder that holds both, read for
    :func:`second_task_files` (its ``task_id`` and ``final_score``) but not yet through the
    rules (:func:`~dabench_analysis.load._pipeline.finish`). It needs nothing of the task file
    but whether it was read, so the loader reads it while the task files' rules run.

    Parameters
    ----------
    dirs : sequence of Path
        Run folders.
    results : sequence of FileResult or None
        Each folder's task file as
        :func:`~dabench_analysis.load._pipeline.read_unconverted` read it.
    cache, mapper
        As :func:`~dabench_analysis.load._pipeline.read_files`.

    Returns
    -------
    dict of int to FileResult
        By position in ``dirs``, for the folders whose ``task_metrics.csv`` was read and that
        also hold the legacy file (a folder whose task file was not is not read further).
    """
    both = [i for i, (d, r) in enumerate(zip(dirs, results, strict=True))
            if r is not None and r.error is None and r.kind.file == TASK_FILE
            and os.path.lexists(d / LEGACY_TASK_FILE)]
    if not both:
        return {}
    others = pipeline.read_unconverted([dirs[i] / LEGACY_TASK_FILE for i in both],
                                       [LEGACY_TASKS] * len(both), SECOND_COLUMNS,
                                       cache=cache, mapper=mapper)
    return dict(zip(both, others, strict=True))


def second_task_files(results: Sequence, others: Mapping[int, pipeline.FileResult], *,
                      cache: bool = True) -> dict[int, Finding]:
    """For each run folder that holds both task files whose scores differ, a finding naming both.

    Parameters
    ----------
    results : sequence of FileResult or None
        Each folder's task file as :func:`dabench_analysis.load._pipeline.read_files` read it.
    others : mapping of int to FileResult
        :func:`read_second` of the same folders, run through the rules here.
    cache : bool
        As given to :func:`read_second`.

    Returns
    -------
    dict of int to Finding
        By position in ``results``: check ``second_task_file`` on the file not read: a warning
        naming the tasks whose scores differ (or the tasks in one file only), or that it
        cannot be read. A folder whose two files agree on ``task_id`` and ``final_score``, or
        whose task file could not be read, has no entry.

    Examples
    --------
    >>> from dabench_analysis.schema._files import TASKS
    >>> d = Path("data/sample_runs/baseline_react")
    >>> (res,) = pipeline.read_files([d / TASK_FILE], [TASKS], cache=False)
    >>> second_task_files([res], read_second([d], [res], cache=False), cache=False)  # agree
    {}
    """
    pipeline.finish(list(others.values()), SECOND_COLUMNS, cache=cache)
    found = {i: _compare(results[i], o) for i, o in others.items()
             if results[i] is not None and results[i].table is not None}
    return {i: f for i, f in found.items() if f is not None}


def _scores(res) -> pd.Series:
    t = res.table.select(["task_id", "final_score"]).to_pandas()
    return t.drop_duplicates("task_id").set_index("task_id")["final_score"]


def _compare(used, other) -> Finding | None:
    head = (f"{TASK_FILE} and {LEGACY_TASK_FILE} are both in the folder: {TASK_FILE} is used, "
            f"{LEGACY_TASK_FILE} is not read")
    if other.error is not None:
        return Finding("warning", LEGACY_TASK_FILE, None, None, "second_task_file",
                       f"{head}; it cannot be read to compare "
                       f"({other.error.message.splitlines()[0]})")
    if all(used.table.column(c).equals(other.table.column(c))  # the usual case, in O(n)
           for c in ("task_id", "final_score")):
        return None
    a, b = _scores(used), _scores(other)
    common = a.index.intersection(b.index)
    x, y = a[common], b[common]
    differ = common[~((x == y) | (x.isna() & y.isna())).to_numpy()]
    only_a, only_b = a.index.difference(b.index), b.index.difference(a.index)
    if not len(differ) and not len(only_a) and not len(only_b):
        return None
    parts = []
    if len(differ):
        shown = ", ".join(f"{t}: {x[t]} vs {y[t]}" for t in differ[:_SHOWN])
        parts.append(f"final_score differs for {len(differ)} of {len(common)} tasks ({shown}"
                     f"{' ...' if len(differ) > _SHOWN else ''})")
    for n, where in ((len(only_a), TASK_FILE), (len(only_b), LEGACY_TASK_FILE)):
        if n:
            parts.append(f"{n} task(s) only in {where}")
    return Finding("warning", LEGACY_TASK_FILE, None, "final_score", "second_task_file",
                   f"{head}; they differ: {'; '.join(parts)}")
