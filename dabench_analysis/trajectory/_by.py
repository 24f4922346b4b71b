"""The abstraction level of the process-mining tables: ``by="auto"`` (stage, else several
agents, else the action class, else tool), the derived levels ``"program"`` (the command's
program) and ``"action_class"`` (localize, patch, validate, submit), cycle collapsing of a
pattern (A→B→A→B read as (A→B)×2) and the coarser shapes of a pattern (its first k blocks,
each value at its first occurrence).
"""

from __future__ import annotations

import re

import pandas as pd

from dabench_analysis.load._run import Run
from dabench_analysis.load._sweep import Runs
from dabench_analysis.schema._files import TRAJECTORY_FILE
from dabench_analysis.schema.needs import Skipped, in_file
from dabench_analysis.trajectory import steps as sq

#: What ``by="auto"`` reads: stage, else agent (two or more), else the action class (tool
#: with action_input), else tool.
AUTO = ("stage", "agent", "tool")
#: Levels derived from other columns: the step columns each reads.
DERIVED = {"program": ("tool", "action_input"), "action_class": ("tool", "action_input")}
#: The action classes of a software-engineering agent's steps (Liu et al. 2025), and "other".
ACTION_CLASSES = ("localize", "patch", "validate", "submit", "other")
#: Tools and programs that only read or search (localize).
_LOCALIZE = frozenset({
    "cat", "sed", "grep", "egrep", "rg", "ag", "nl", "ls", "find", "head", "tail", "wc", "less",
    "more", "tree", "awk", "pwd", "git", "diff", "file", "stat", "which", "open", "goto",
    "scroll_up", "scroll_down", "search_file", "search_dir", "find_file", "view", "read_file",
    "list_dir", "echo", "printf"})
#: Tools and programs that change files (patch).
_PATCH = frozenset({"cp", "mv", "rm", "mkdir", "touch", "patch", "tee", "edit", "create",
                    "insert", "append", "write_file", "apply_patch", "str_replace"})
#: Tools and programs that run code or tests (validate).
_VALIDATE = frozenset({"python", "python3", "pytest", "py.test", "tox", "nox", "make",
                       "nosetests", "node", "npm", "go", "cargo", "mvn", "gradle", "java",
                       "ruby", "bash", "sh", "pip", "sphinx-build", "run"})
_SUBMIT = re.compile(r"COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT|^\s*submit\b")
_WRITES = re.compile(r"(?:^|[^0-9&>])>{1,2}\s*(?!\s*(?:/dev/null|&))[^\s>&|;]|"
                     r"\bsed\s+(?:-[A-Za-z]*\s+)*-[A-Za-z]*i|\bgit\s+(?:apply|checkout|stash|am)\b"
                     r"|\bcommand\s*[:=]?\s*[\"']?(?:create|str_replace|insert)\b")
_WORD = re.compile(r"^\s*(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*(?:cd\s+\S+\s*&&\s*)?([^\s;|&]+)")


def resolve_by(run: Run | Runs, by: str, *, derived: bool = True) -> str:
    """``by`` itself, or for ``"auto"``: ``stage`` where the run's trajectory has a value in it,
    else ``agent`` where it names two or more agents, else ``action_class`` where the steps
    have ``tool`` and ``action_input`` (only with ``derived``), else ``tool``.

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

    def has(col: str, least: int = 1) -> bool:
        return any(col in r.trajectory and r.trajectory[col].nunique() >= least for r in runs)

    if has("stage"):
        return "stage"
    if has("agent", 2):
        return "agent"
    if derived and has("tool") and any("action_input" in r.columns_of("trajectory")
                                       for r in runs):
        return "action_class"
    for col in ("tool", "agent"):
        if has(col):
            return col
    raise Skipped("needs one of the trajectory columns stage, agent, tool with a value",
                  missing=list(AUTO))


def step_columns(by: str) -> list[str]:
    """The trajectory columns to read for the level ``by``."""
    return list(DERIVED.get(by, (by,)))


def programs(steps: pd.DataFrame) -> pd.Series:
    """Each step's ``program``: for a step with a ``tool``, the first word of its
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


def action_classes(steps: pd.DataFrame) -> pd.Series:
    """Each step's action class (:data:`ACTION_CLASSES`), after the localization, patching and
    validation phases of Liu et al. (2025), from its ``tool`` and ``action_input``.

    Parameters
    ----------
    steps : DataFrame
        Columns ``tool`` (the tool called; <NA> for a step calling none) and ``action_input``
        (the command or the tool's arguments, text).

    Returns
    -------
    Series
        ``string`` dtype, one value per row of ``steps``, in the first rule that holds:
        ``submit`` (mini-swe-agent's ``COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`` or a ``submit``
        tool or command); ``patch`` (writes a file: a ``>``/``>>`` redirection to a file other
        than /dev/null, ``sed -i``, ``git apply``/``checkout``/``stash``/``am``, an editor
        ``command`` create/str_replace/insert, or a program such as ``cp``, ``mv``, ``rm``,
        ``mkdir``, ``touch``, ``tee``, ``edit``, ``create``); ``validate`` (runs code or tests:
        ``python``, ``pytest``, ``make``, a program whose name holds "test" such as
        ``./tests/runtests.py``, ...); ``localize`` (reads or searches: ``cat``, ``sed -n``,
        ``grep``, ``nl``, ``ls``, ``find``, ``head``, ``git diff``, an editor's view, ...);
        ``other``; <NA> for a step without a tool.

    Notes
    -----
    The program is :func:`programs`' word (the last path component of it). A command that
    writes a file counts as ``patch`` whatever the file (a reproduction script too): the rule
    reads the command, not its purpose. Liu et al. find resolved SWE-bench runs mostly follow
    localization → patching → validation.

    References
    ----------
    Liu, S., Chen, Y., Krishna, R., Sinha, S., Ganhotra, J., Jabbarvand, R. (2025).
    Process-Centric Analysis of Agentic Software Systems. arXiv:2512.02393.

    Examples
    --------
    >>> s = pd.DataFrame({"tool": ["bash"] * 5 + [None],
    ...                   "action_input": ["grep -rn Point sympy", "sed -i 's/a/b/' f.py",
    ...                                    "python reproduce.py", "cat <<'EOF' > t.py",
    ...                                    "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT", "x"]})
    >>> action_classes(s).tolist()
    ['localize', 'patch', 'validate', 'patch', 'submit', <NA>]
    """
    prog = programs(steps)
    word = prog.str.rsplit(":", n=1).str[-1].str.rsplit("/", n=1).str[-1].str.lower()
    text = steps["action_input"].astype("string").fillna("")
    out = pd.Series("other", index=steps.index, dtype="string")
    out[word.isin(_LOCALIZE).fillna(False).to_numpy()] = "localize"
    test = (word.isin(_VALIDATE) | word.str.contains("test", regex=False)
            | word.str.startswith("python")).fillna(False)
    out[test.to_numpy()] = "validate"
    patch = (word.isin(_PATCH).fillna(False) | text.str.contains(_WRITES)).to_numpy()
    out[patch] = "patch"
    out[(text.str.contains(_SUBMIT) | word.eq("submit").fillna(False)).to_numpy()] = "submit"
    return out.where(prog.notna())


def add_level(steps: pd.DataFrame, by: str) -> pd.DataFrame:
    """``steps`` with the derived column ``by`` added (unchanged for a column level)."""
    if by == "program":
        return steps.assign(program=programs(steps))
    if by == "action_class":
        return steps.assign(action_class=action_classes(steps))
    return steps


def collapse_cycles(pattern: str, longest: int | None = None, counts: bool = True) -> str:
    """A pattern with each run of a repeated cycle written once: ``A→B→A→B→C`` ->
    ``(A→B)×2→C``. Cycles of any length from 2 blocks to ``longest`` (default: half the
    pattern) are collapsed, shortest first and again after each collapse, so cycles nest:
    ``O→W→O→W→O→A→O→W→O→W→O→A`` -> ``((O→W)×n→O→A)×n`` with ``counts=False``, which writes
    ``×n`` for any count, so runs that differ only in how often they went round a cycle share
    one shape (with counts, nested cycles match only where the inner counts agree).

    Examples
    --------
    >>> collapse_cycles("find→cat→python→cat→python→cat→python→submit")
    'find→(cat→python)×3→submit'
    >>> collapse_cycles("h→O→W→O→W", counts=False)
    'h→(O→W)×n'
    >>> collapse_cycles("a→b→c→d→e→a→b→c→d→e")
    '(a→b→c→d→e)×2'
    """
    seq = pattern.split(sq.ARROW)
    top = len(seq) // 2 if longest is None else longest
    size = 2
    while size <= min(top, len(seq) // 2):
        out, i, changed = [], 0, False
        while i < len(seq):
            k = 1
            while seq[i + k * size:i + (k + 1) * size] == seq[i:i + size]:
                k += 1
            if k > 1:
                out.append(f"({sq.ARROW.join(seq[i:i + size])})×{k if counts else 'n'}")
                i, changed = i + k * size, True
            else:
                out.append(seq[i])
                i += 1
        seq, size = (out, 2) if changed else (seq, size + 1)
    return sq.ARROW.join(seq)


#: Where the steps' pattern is empty.
NO_STEPS = "(no steps)"
#: Where a group has at least this many variants per task (nearly one each): none is tested.
SINGLETONS = 0.9
#: The shapes of a pattern (:func:`shape_of`); ``"auto"`` picks the first that groups tasks.
SHAPES = ("full", "cycles", "first", "auto")


def shape_of(blocks: list[str], shape: str, *, prefix: int | None = None,
             counts: bool = False) -> str:
    """A task's block sequence written at a coarser shape.

    Parameters
    ----------
    blocks : list of str
        The task's blocks in order (one value each).
    shape : {"full", "cycles", "first"}
        ``"full"``: every block; ``"cycles"``: repeated cycles of any length written once with ``×n``
        (:func:`collapse_cycles`, ``counts=False``); ``"first"``: each value at its first
        occurrence only, the order in which the task first reached each value (A→B→A→C ->
        A→B→C).
    prefix : int, optional
        Only the first ``prefix`` blocks (before the shape is taken); default all.
    counts : bool
        With ``"cycles"``: write the count (×3) instead of ``×n`` (default False).

    Returns
    -------
    str
        The "→"-joined shape; "" for no blocks.

    Raises
    ------
    ValueError
        An unknown ``shape`` or ``prefix`` < 1.

    References
    ----------
    van der Aalst, W. M. P., Rubin, V., Verbeek, H. M. W., van Dongen, B. F., Kindler, E.,
    Günther, C. W. (2010). Process mining: a two-step approach to balance between underfitting
    and overfitting. Software and Systems Modeling 9(1), 87–111 (§4: the horizon, and the
    sequence, multiset and set abstractions of a trace).

    Examples
    --------
    >>> b = ["localize", "patch", "validate", "localize", "patch", "validate", "submit"]
    >>> shape_of(b, "cycles"), shape_of(b, "first"), shape_of(b, "full", prefix=2)
    ('(localize→patch→validate)×n→submit', 'localize→patch→validate→submit', 'localize→patch')
    """
    if shape not in SHAPES[:3]:
        raise ValueError(f"shape must be one of {', '.join(SHAPES)}; got {shape!r}")
    if prefix is not None and prefix < 1:
        raise ValueError(f"prefix must be >= 1, got {prefix!r}")
    seq = list(blocks[:prefix] if prefix else blocks)
    if shape == "first":
        return sq.ARROW.join(dict.fromkeys(seq))
    if shape == "cycles":
        return collapse_cycles(sq.ARROW.join(seq), counts=counts) if seq else ""
    return sq.ARROW.join(seq)


def reshape(pattern: str, shape: str, prefix: int | None, cycles: bool | str) -> str:
    """One task's pattern string at ``shape`` (and ``prefix``), cycles as ``collapse_cycles``."""
    if not pattern:
        return NO_STEPS
    blocks = pattern.split(sq.ARROW)
    if shape == "full":
        out = shape_of(blocks, "full", prefix=prefix)
        return collapse_cycles(out, counts=cycles != "shape") if cycles else out
    return shape_of(blocks, shape, prefix=prefix, counts=False)


def auto_shape(tasks: pd.DataFrame, pat: pd.Series, prefix: int | None) -> str:
    """The first of full (cycles counted), cycles, first with fewer than :data:`SINGLETONS`
    variants per task in every run; else "first"."""
    runs = tasks["run_id"].to_numpy()
    for shape in ("full", "cycles"):
        shaped = pd.Series([reshape(p, shape, prefix, True) for p in pat], dtype=object)
        kinds = shaped.groupby(runs).nunique()
        sizes = pd.Series(runs).value_counts().reindex(kinds.index)
        if ((kinds < SINGLETONS * sizes) | (sizes <= 1)).all():
            return shape
    return "first"
