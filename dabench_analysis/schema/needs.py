# Over 400 lines (<= 500): the declaration, the check of a call's inputs (columns, files, trials,
# duck-typed so that this layer imports no reader) and the lookups validation and the README read
# are one mechanism; split, the check and what it reports would drift apart.
"""What an analysis needs, declared on the function that computes it, and the one typed skip.

A table or figure function that reads task_metrics columns, optional files or columns of those
files declares them with :func:`needs`::

    @needs("difficulty", "final_score", uses=("analyst_score",))
    def difficulty_breakdown(tasks, ...): ...

Called with inputs that lack one (a column absent in the frame, a file absent in the run, a task
tried several times where one row per task is needed), the function raises :class:`Skipped`
("skipped: needs difficulty") before computing anything; the report's writer shows it as a note
and lists it in ``summary.json``. Optional columns it ``uses`` that are absent are recorded for
the writer (:func:`collect_reduced`). The declarations are the one source of what each analysis
needs: :func:`dabench_analysis.validate_run` (which analyses an absent column disables) and the
README's table of inputs read them (:func:`declared`, :func:`needing`, :func:`using`).
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace

from dabench_analysis.schema._files import (
    OPTIONAL_FILES,
    REPLAY_FILES,
    TOOL_CALLS_FILE,
    TRAJECTORY_FILE,
)
from dabench_analysis.schema.columns import (
    TOOL_CALL_COLUMNS,
    TRAJECTORY_COLUMNS,
    Column,
)

#: What each optional file feeds besides the analyses that declare it.
FILE_USES: dict[str, str] = {
    TRAJECTORY_FILE: "validation: token conservation, time accounting, missing trajectories; "
                     "the explore notebook's steps",
    TOOL_CALLS_FILE: "validation: tool-call rows and failures per task",
    REPLAY_FILES: "validation: replay fields and their agreement with task_metrics; the explore "
                  "notebook's replay view",
}
#: The column catalogue of each optional CSV file.
FILE_CATALOGUES: dict[str, dict[str, Column]] = {TRAJECTORY_FILE: TRAJECTORY_COLUMNS,
                                                 TOOL_CALLS_FILE: TOOL_CALL_COLUMNS}
#: The Run attribute holding each optional CSV file's frame.
FRAMES = {TOOL_CALLS_FILE: "tool_calls", TRAJECTORY_FILE: "trajectory"}
#: What a skip for repeated trials lists as missing.
ONE_ROW, REPEATED = "one row per task", "repeated trials"


class Skipped(ValueError):
    """An analysis its inputs cannot feed (not a fault of the input), with the reason.

    Raised by a function declared with :func:`needs` when a needed column or file is absent,
    and by a table whose data cannot give a result (a frontier with fewer than two costed runs).
    The report's writer shows it as a skipped section and lists ``missing`` in ``summary.json``.

    Parameters
    ----------
    reason : str
        What is missing, as a sentence.
    missing : sequence of str
        The absent inputs (columns, files, ``"<file>:<column>"``, ``"one row per task"``,
        ``"repeated trials"``).

    Examples
    --------
    >>> e = Skipped("only run a records total_tokens", missing=["total_tokens in two runs"])
    >>> str(e), e.missing
    ('only run a records total_tokens', ['total_tokens in two runs'])
    """

    def __init__(self, reason: str, *, missing: Sequence[str] = ()) -> None:
        super().__init__(reason)
        self.reason, self.missing = reason, list(missing)


def in_file(file: str, *columns: str) -> tuple[str, ...]:
    """Qualified names ``"<file>:<column>"`` of columns of an optional CSV file.

    Raises
    ------
    ValueError
        For a file without a catalogue or a column not in it.

    Examples
    --------
    >>> in_file("tool_calls.csv", "tool_name", "latency_seconds")
    ('tool_calls.csv:tool_name', 'tool_calls.csv:latency_seconds')
    """
    if file not in FILE_CATALOGUES:
        raise ValueError(f"no column catalogue for {file!r}; known: {', '.join(FILE_CATALOGUES)}")
    unknown = [c for c in columns if c not in FILE_CATALOGUES[file]]
    if unknown:
        raise ValueError(f"column(s) {unknown} not in the {file} catalogue")
    return tuple(f"{file}:{c}" for c in columns)


def split_qualified(name: str) -> tuple[str, str]:
    """``"tool_calls.csv:tool_name"`` -> ``("tool_calls.csv", "tool_name")``.

    Examples
    --------
    >>> split_qualified("trajectory.csv:tokens")
    ('trajectory.csv', 'tokens')
    """
    file, _, col = name.partition(":")
    return file, col


@dataclass(frozen=True)
class Needs:
    """The inputs one analysis declares (see :func:`needs` for the fields)."""

    columns: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    file_needs: tuple[str, ...] = ()
    uses: tuple[str, ...] = ()
    uses_at_least: int = 0
    trials: str = "one"
    inputs: int = 1
    #: ``(parameter, template)`` pairs: the columns a keyword argument names
    #: (``("by", "{}")``: the column ``by`` names; ``("specialists", "{}_agent_used")``: one
    #: column per entry): a call giving the parameter is not held to those of its default.
    by_argument: tuple[tuple[str, str], ...] = ()

    def for_call(self, defaults: Mapping[str, object], kwargs: Mapping[str, object]) -> Needs:
        """The declaration for one call: a keyword argument of :attr:`by_argument` that the
        call gives frees the columns its default names (the function checks the columns it is
        given itself, naming the known ones).

        Examples
        --------
        >>> d = Needs(("final_score", "failure_category"), by_argument=(("by", "{}"),))
        >>> d.for_call({"by": "failure_category"}, {"by": "failure_stage"}).columns
        ('final_score',)
        """
        columns = list(self.columns)
        for param, template in self.by_argument:
            if param in kwargs and kwargs[param] is not None:
                old = _named(defaults.get(param), template)
                columns = [c for c in columns if c not in old or c in _named(kwargs[param],
                                                                             template)]
        return replace(self, columns=tuple(columns)) if self.by_argument else self

    def missing(self, columns: Collection[str], files: Collection[str] | None = None,
                file_columns: Mapping[str, Collection[str]] | None = None) -> list[str]:
        """The inputs absent (empty: it can run); ``files`` None: not known, not checked.

        Examples
        --------
        >>> Needs(("final_score", "failure_stage")).missing(["final_score"])
        ['failure_stage']
        >>> Needs(("final_score",), uses=("a", "b"), uses_at_least=1).missing(["final_score"])
        ['one of: a, b']
        """
        out = [c for c in self.columns if c not in columns]
        out += [f for f in self.files if files is not None and f not in files]
        file_columns = file_columns or {}
        for name in self.file_needs:
            file, col = split_qualified(name)
            if file in file_columns and col not in file_columns[file]:
                out.append(name)
        if sum(c in columns for c in self.uses) < self.uses_at_least:
            out.append("one of: " + ", ".join(c for c in self.uses if c not in columns))
        return out

    def absent_uses(self, columns: Collection[str],
                    file_columns: Mapping[str, Collection[str]] | None = None) -> list[str]:
        """Optional columns of ``uses`` that are absent (it runs without them).

        Examples
        --------
        >>> Needs(uses=in_file("tool_calls.csv", "latency_seconds", "tokens")).absent_uses(
        ...     [], {"tool_calls.csv": ["tool_name"]})
        ['tool_calls.csv:latency_seconds', 'tool_calls.csv:tokens']
        """
        file_columns, out = file_columns or {}, []
        for name in self.uses:
            file, col = split_qualified(name)
            if not col:
                out += [name] if name not in columns else []
            elif file in file_columns and col not in file_columns[file]:
                out.append(name)
        return out


@dataclass
class _Present:
    """What the inputs of one call hold."""

    columns: set
    files: set | None
    file_columns: dict
    unreadable: dict
    row_trials: int
    trials: int
    where: str


def _row_trials(frame) -> int:
    keys = [k for k in ("run_id", "task_id") if k in frame.columns]
    if "task_id" not in keys or not len(frame):
        return 1
    return int(frame.groupby(keys, dropna=False, observed=True).size().max())


def _present(args: Sequence, decl: Needs) -> _Present | None:
    """Columns, files and trials of the inputs (task frames, runs, a sweep's runs), duck-typed
    so that this layer imports none of the readers."""
    cols, files, fcols, bad, rows, trials = [], [], {}, {}, 1, 1
    for arg in args:
        if hasattr(arg, "runs") and hasattr(arg, "tasks"):  # a sweep: Runs
            # files not checked: a table of runs notes a run without one; the trials from the
            # stacked tasks (no run's own slice of them is built)
            rows = max(rows, int(arg.row_trials))
            trials = max(trials, rows, int(getattr(arg, "trials", 1) or 1))
            cols.append(set(map(str, arg.tasks.columns)))
            continue
        if hasattr(arg, "has_file") and hasattr(arg, "tasks"):  # one Run
            wanted = dict.fromkeys([*decl.files, *(split_qualified(n)[0]
                                                   for n in decl.file_needs)])
            # only the files declared: a run's replay index is built only when they are
            have = {f for f in wanted if f in OPTIONAL_FILES and arg.has_file(f)}
            for file in wanted:
                if file in have and file in FRAMES:
                    try:
                        got = set(map(str, arg.columns_of(FRAMES[file])))
                    except Exception as exc:  # a file that cannot be read as a whole
                        have.discard(file)
                        text = getattr(exc, "message", str(exc))
                        bad[file] = text.rpartition(f"{file}: ")[2]
                        continue
                    fcols[file] = fcols[file] & got if file in fcols else got
            files.append(have)
            rows = max(rows, int(arg.trials or 1))
            cols.append(set(map(str, arg.tasks.columns)))
            continue
        frame_of = next((f for f in decl.files if f in FRAMES), None)
        if frame_of is not None and hasattr(arg, "columns"):
            fcols[frame_of] = set(map(str, arg.columns))  # the file's own frame
            files.append({frame_of})
            continue
        if hasattr(arg, "columns"):  # a task frame
            cols.append(set(map(str, arg.columns)))
            rows = max(rows, _row_trials(arg))
    if not cols and not files:
        return None  # no frame or run among the inputs (arrays): nothing to check
    trials = max(trials, rows)
    return _Present(set.intersection(*cols) if cols else set(),
                    set.intersection(*files) if files else None, fcols, bad, rows, trials,
                    "in this run" if len(args) < 2 else "in one of the runs")


def _names(items: Sequence[str]) -> str:
    def one(item: str) -> str:
        if item.startswith("one of:"):
            return item
        file, col = split_qualified(item)
        return f"`{col}` in {file}" if col else f"`{item}`"
    return ", ".join(one(i) for i in items)


#: The optional columns a call ran without, collected while a report section runs.
_REDUCED: ContextVar[list | None] = ContextVar("dabench_reduced", default=None)


@contextmanager
def collect_reduced() -> Iterator[list[str]]:
    """Collect the optional inputs that declared functions called inside run without.

    Examples
    --------
    >>> with collect_reduced() as absent:
    ...     pass
    >>> absent
    []
    """
    found: list[str] = []
    token = _REDUCED.set(found)
    try:
        yield found
    finally:
        _REDUCED.reset(token)


def in_report() -> bool:
    """Whether the caller runs inside a report section (:func:`collect_reduced`).

    A table whose result would only repeat another number (failure bounds of a run without an
    errored trial) raises :class:`Skipped` there; called directly, it returns its rows.

    Examples
    --------
    >>> in_report()
    False
    >>> with collect_reduced():
    ...     in_report()
    True
    """
    return _REDUCED.get() is not None


def check(decl: Needs, args: Sequence) -> None:
    """Raise :class:`Skipped` when the inputs ``args`` cannot feed an analysis declaring
    ``decl``; record the optional inputs it runs without (:func:`collect_reduced`).

    Absent columns and files are checked on every call. What a function needs of repeated
    trials (``trials``) is a report's rule (never average trials silently, pass@k only on
    repeated trials) and is checked inside a report section (:func:`collect_reduced`); called
    directly, such a function pools trials with its own warning.

    Examples
    --------
    >>> import pandas as pd
    >>> check(Needs(("final_score", "difficulty")), [pd.DataFrame({"final_score": [1.0]})])
    Traceback (most recent call last):
    ...
    dabench_analysis.schema.needs.Skipped: needs `difficulty`, absent in this run
    """
    got = _present(list(args)[:decl.inputs], decl)
    if got is None:
        return
    if got.unreadable and any(f in got.unreadable for f in decl.files):
        bad = [f for f in decl.files if f in got.unreadable]
        raise Skipped(" ".join(f"`{f}` cannot be read: {got.unreadable[f]}." for f in bad),
                      missing=bad)
    missing = decl.missing(got.columns, got.files, got.file_columns)
    if missing:
        raise Skipped(f"needs {_names(missing)}, absent {got.where}", missing=missing)
    sink = _REDUCED.get()  # None: called outside a report section
    if decl.trials == "one" and got.row_trials > 1 and sink is not None:
        raise Skipped(f"needs one row per task; {got.where} a task has up to {got.row_trials} "
                      "trials, which this analysis would average silently (see *Repeated "
                      "trials*: pass@k, pass^k, flakiness)", missing=[ONE_ROW])
    if decl.trials == "several" and got.trials < 2 and sink is not None:
        raise Skipped("needs repeated trials of a task (a harness's epochs or trials, or runs "
                      f"declaring one configuration and several seeds); {got.where} every task "
                      "has one", missing=[REPEATED])
    absent = decl.absent_uses(got.columns, got.file_columns)
    if absent and sink is not None:
        sink.extend(a for a in absent if a not in sink)


def skips(func: Callable, *inputs) -> list[str]:
    """What ``inputs`` lack for the declared function ``func`` in a report (empty: it can
    run), without computing it.

    Examples
    --------
    >>> import pandas as pd, dabench_analysis as da
    >>> skips(da.tables.failures.failure_stages, pd.DataFrame({"final_score": [1.0]}))
    ['failure_stage']
    """
    try:
        with collect_reduced():  # as in a report section: repeated trials checked too
            check(func.needs, inputs)
    except Skipped as exc:
        return exc.missing
    return []


def _named(value, template: str) -> list[str]:
    """The columns an argument names through a template (a name, or a sequence of names)."""
    if value is None:
        return []
    values = [value] if isinstance(value, str) else list(value)
    return [template.format(v) for v in values]


#: Every declared function, in the order their modules were imported.
_DECLARED: list[Callable] = []


def needs(*columns: str, files: Sequence[str] = (), file_needs: Sequence[str] = (),
          uses: Sequence[str] = (), uses_at_least: int = 0, trials: str = "one",
          inputs: int = 1, by_argument: Mapping[str, str] | None = None
          ) -> Callable[[Callable], Callable]:
    """Declare the inputs a table or figure function needs; calls lacking one raise
    :class:`Skipped`.

    Parameters
    ----------
    *columns : str
        task_metrics columns without which it cannot be computed.
    files : sequence of str
        Optional files of a run it reads (:data:`~dabench_analysis.schema._files.OPTIONAL_FILES`);
        checked when an input is a run (a bare frame says nothing about files).
    file_needs : sequence of str
        Columns of those files it needs, ``"<file>:<column>"`` (:func:`in_file`).
    uses : sequence of str
        Optional columns used when present (it runs on those present).
    uses_at_least : int
        How many of ``uses`` must be present.
    trials : {"one", "any", "several"}
        In a report section: ``"one"``: one row per task (skipped on repeated trials, which it
        would average); ``"any"``; ``"several"``: only with repeated trials (pass@k,
        flakiness).
    inputs : int
        How many leading positional arguments are inputs (task frames, runs): two for a
        comparison of two runs.
    by_argument : mapping of str to str, optional
        Keyword parameters that name columns, each with a template (``{"by": "{}"}``,
        ``{"specialists": "{}_agent_used"}``): ``columns`` lists those of the parameter's
        default (what a report's call needs); a call giving the parameter is not held to them
        (the function checks the columns it is given, naming the known ones). A keyword parameter whose default is a declared column (``metric=
        "final_score"``) or a tuple holding one (``metrics=(...)``) is taken as ``"{}"``.

    Returns
    -------
    callable
        The decorator; the function it returns has the attribute ``needs`` (a :class:`Needs`)
        and is listed by :func:`declared`.

    Examples
    --------
    >>> import pandas as pd
    >>> @needs("final_score", trials="any")
    ... def mean_score(tasks):
    ...     return float(tasks["final_score"].mean())
    >>> mean_score.needs.columns
    ('final_score',)
    >>> mean_score(pd.DataFrame({"final_score": [0.5, 1.0]}))
    0.75
    >>> mean_score(pd.DataFrame({"x": [1]}))
    Traceback (most recent call last):
    ...
    dabench_analysis.schema.needs.Skipped: needs `final_score`, absent in this run
    """
    if trials not in ("one", "any", "several"):
        raise ValueError(f"trials must be 'one', 'any' or 'several', got {trials!r}")
    decl = Needs(tuple(columns), tuple(files), tuple(file_needs), tuple(uses), uses_at_least,
                 trials, inputs, tuple((by_argument or {}).items()))

    def decorate(func: Callable) -> Callable:
        test = check

        defaults = {k: p.default for k, p in inspect.signature(func).parameters.items()
                    if p.default is not p.empty}
        named = dict(decl.by_argument)  # a default that names declared columns names them
        for k, v in defaults.items():
            values = [v] if isinstance(v, str) else list(v) if isinstance(v, tuple) else []
            if k not in named and any(isinstance(x, str) and x in decl.columns for x in values):
                named[k] = "{}"
        this = replace(decl, by_argument=tuple(named.items()))

        def wrapper(*args, **kwargs):  # only closure names: rebuilt in func's module below
            test(this.for_call(defaults, kwargs), args)
            return func(*args, **kwargs)

        # in the declaring module's namespace, so that doctest finds the docstring's examples
        out = types.FunctionType(wrapper.__code__, func.__globals__, func.__name__,
                                 None, wrapper.__closure__)
        for attr in ("__doc__", "__module__", "__qualname__", "__annotations__"):
            setattr(out, attr, getattr(func, attr))
        out.__dict__.update(func.__dict__)
        out.__wrapped__, out.needs = func, this
        _DECLARED.append(out)
        return out
    return decorate
