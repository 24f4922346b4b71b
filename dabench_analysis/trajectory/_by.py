"""The abstraction level of the process-mining tables: ``by="auto"`` (stage, else agent, else
tool), the derived level ``"program"`` (an action class: the command's program), and cycle
collapsing of a pattern (A→B→A→B read as (A→B)×2).
"""

from __future__ import annotations

import re

import pandas as pd

from dabench_analysis.load.run import Run
from dabench_analysis.load.sweep import Runs
from dabench_analysis.schema.files import TRAJECTORY_FILE
from dabench_analysis.schema.needs import Skipped, in_file
from dabench_analysis.trajectory import steps as sq

#: What ``by="auto"`` picks: the first of these the trajectory has with a value.
AUTO = ("stage", "agent", "tool")
#: Levels derived from other columns: the step columns each reads.
DERIVED = {"program": ("tool", "action_input")}
_WORD = re.compile(r"^\s*(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*(?:cd\s+\S+\s*&&\s*)?([^\s;|&]+)")


def resolve_by(run: Run | Runs, by: str) -> str:
    """``by`` itself, or for ``"auto"`` the first column of :data:`AUTO` the run's trajectory
    has with at least one value.

    Raises
    ------
    Skipped
        ``"auto"`` and none of them has a value; a column ``by`` (or one a derived level reads)
        that the trajectory lacks.

    Examples
    --------
    >>> import dabench_analysis as da
    >>> resolve_by(da.load_run("data/sample_runs/proposed_aat"), "auto")
    'stage'
    """
    runs = run.runs if isinstance(run, Runs) else [run]
    if by != "auto":
        have = set().union(*(r.columns_of("trajectory") for r in runs))
        absent = [c for c in step_columns(by) if c not in have]
        if absent and have:
            raise Skipped(f"needs {TRAJECTORY_FILE} column(s) {', '.join(absent)} for "
                          f"by={by!r}", missing=list(in_file(TRAJECTORY_FILE, *absent)))
        return by
    for col in AUTO:
        if any(col in r.trajectory and r.trajectory[col].notna().any() for r in runs):
            return col
    raise Skipped("needs one of the trajectory columns stage, agent, tool with a value",
                  missing=list(AUTO))


def step_columns(by: str) -> list[str]:
    """The trajectory columns to read for the level ``by``."""
    return list(DERIVED.get(by, (by,)))


def programs(steps: pd.DataFrame) -> pd.Series:
    """Each step's action class ``program``: for a step with a ``tool``, the first word of its
    ``action_input`` (after ``VAR=value`` assignments and a leading ``cd DIR &&``), written
    ``tool:word``, or the word alone for a shell tool (``bash``, ``sh``, ``shell``,
    ``terminal``; comment lines skipped); the tool alone when the input is empty; <NA> for a
    step without a tool.

    Examples
    --------
    >>> s = pd.DataFrame({"tool": ["bash", "bash", "py", None],
    ...                   "action_input": ["cd /r && python -m pytest", "grep -n x a", "", "x"]})
    >>> programs(s).tolist()
    ['python', 'grep', 'py', <NA>]
    """
    tool = steps["tool"].astype("string")
    text = steps["action_input"].astype("string").str.replace(r"(?m)^\s*#.*(\n|$)", "",
                                                              regex=True)
    word = text.str.extract(_WORD, expand=False)
    shell = tool.str.lower().isin(["bash", "sh", "shell", "terminal"])
    out = (tool + ":" + word).where(~shell, word)
    return out.fillna(tool).where(tool.notna()).astype("string")


def add_level(steps: pd.DataFrame, by: str) -> pd.DataFrame:
    """``steps`` with the derived column ``by`` added (unchanged for a column level)."""
    return steps.assign(program=programs(steps)) if by == "program" else steps


def collapse_cycles(pattern: str, longest: int = 4, counts: bool = True) -> str:
    """A pattern with each run of a repeated cycle of 2 to ``longest`` blocks written once:
    ``A→B→A→B→C`` -> ``(A→B)×2→C``; the cycle covering the most blocks at a position wins.
    ``counts=False`` writes ``×n`` for any count, so runs that differ only in how often they
    went round a cycle share one shape.

    Examples
    --------
    >>> collapse_cycles("find→cat→python→cat→python→cat→python→submit")
    'find→(cat→python)×3→submit'
    >>> collapse_cycles("h→O→W→O→W", counts=False)
    'h→(O→W)×n'
    """
    seq, out, i = pattern.split(sq.ARROW), [], 0
    while i < len(seq):
        best, reps = 1, 1
        for size in range(2, longest + 1):
            k = 1
            while seq[i + k * size:i + (k + 1) * size] == seq[i:i + size]:
                k += 1
            if k > 1 and k * size > best * reps:
                best, reps = size, k
        cycle = sq.ARROW.join(seq[i:i + best])
        out.append(f"({cycle})×{reps if counts else 'n'}" if reps > 1 else cycle)
        i += best * reps
    return sq.ARROW.join(out)
