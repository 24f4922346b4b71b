"""Degrade, don't die: which report sections a run can feed, and a visible note for the others.

:func:`dabench_analysis.report.section` asks :meth:`Sections.ready` before each section; a section whose inputs are absent
(:data:`dabench_analysis.schema.SECTIONS`: task_metrics columns, optional files, and columns of
those files, which a tool_calls.csv or trajectory.csv from another harness version may lack) is
skipped with a note in the notebook output (and so in the HTML), and listed in ``summary.json``
(``skipped``) and in ``index.html``. A section that fails for any other reason still fails the
report.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from dabench_analysis.load import Run, RunLoadError
from dabench_analysis.schema import (
    OPTIONAL_FILES,
    SECTIONS,
    TOOL_CALLS_FILE,
    TRAJECTORY_FILE,
)
from dabench_analysis.schema.sections import split_qualified

#: The reports whose sections the catalogue lists.
_REPORTS = ("run", "compare", "sweep")
#: The Run attribute holding each optional CSV file's frame.
_FRAMES = {TOOL_CALLS_FILE: "tool_calls", TRAJECTORY_FILE: "trajectory"}


def _files_present(run: Run) -> set[str]:
    return run.side_files


def _show(text: str) -> None:
    """Display ``text`` as Markdown in a notebook, or print it elsewhere."""
    try:
        from IPython import get_ipython
        from IPython.display import Markdown, display
    except ImportError:  # pragma: no cover - IPython is a dependency
        print(text)
        return
    if get_ipython() is None:
        print(text)
    else:
        display(Markdown(text))


class Sections:
    """Which sections of a report the given run(s) can feed.

    Parameters
    ----------
    *runs : Run
        One run (run report) or the two runs of a comparison: a column or file counts as
        present only when every run has it.
    report : {"run", "compare", "sweep"}
        The report whose sections are asked for.
    quiet : bool
        Record without displaying notes (for use outside notebooks).
    trials : int, optional
        The most trials of a task, counting a configuration's runs as its trials (a sweep);
        default: the most rows per task of the runs (:attr:`Run.trials`).
    grouped : bool
        Show no note per skipped or reduced section: :meth:`overview` gives them as a few
        grouped lines (:func:`group_skips`; the run report on another harness's run, which
        lacks most eval-v2 columns).

    Attributes
    ----------
    columns : set of str
        task_metrics columns present (in every run).
    files : set of str
        Optional files present (entries of :data:`dabench_analysis.schema.OPTIONAL_FILES`).
        The columns of a present CSV file are read from the run's frame
        (``run.tool_calls.columns``) when a section asks for them, so a file that no section
        asked about is never parsed here.
    skipped, reduced : list of dict
        What :meth:`ready` refused, and what it allowed on fewer optional columns.

    Examples
    --------
    >>> import dabench_analysis as da
    >>> s = Sections(da.load_run("data/sample_runs/proposed_aat"), quiet=True)
    >>> s.ready("calibration"), s.skipped
    (True, [])
    """

    def __init__(self, *runs: Run, report: str = "run", quiet: bool = False,
                 trials: int | None = None, grouped: bool = False) -> None:
        if not runs:
            raise ValueError("Sections needs at least one run")
        self._setup(set.intersection(*(set(map(str, r.tasks.columns)) for r in runs)),
                    set.intersection(*(_files_present(r) for r in runs)), report, quiet,
                    "in this run" if len(runs) == 1 else "in one of the runs")
        self._runs = runs
        formats = {getattr(r, "format", "eval-v2") for r in runs}
        self.fmt = formats.pop() if len(formats) == 1 else "mixed"
        self.grouped = grouped
        self.row_trials = max(r.trials for r in runs)
        self.trials = max(self.row_trials, trials or 0)

    @classmethod
    def from_columns(cls, columns, files=OPTIONAL_FILES, *, report: str = "run",
                     quiet: bool = True,
                     file_columns: Mapping[str, Collection[str]] | None = None,
                     row_trials: int = 1, trials: int | None = None) -> Sections:
        """Sections for a frame's columns (and the optional files present), without a run.

        ``file_columns`` maps an optional CSV file to the columns it holds (e.g.
        ``{"tool_calls.csv": calls.columns}``); a file not in it counts as complete.
        ``row_trials``: the most rows per task in one run; ``trials``: the most trials of a
        task, counting a configuration's runs (default ``row_trials``).

        Examples
        --------
        >>> s = Sections.from_columns(["task_id", "final_score"])
        >>> s.ready("calibration"), s.skipped[0]["missing"]
        (False, ['confidence_score'])
        >>> s = Sections.from_columns([], file_columns={"tool_calls.csv": ["task_id", "tool"]})
        >>> s.ready("tool_usage"), s.skipped[-1]["missing"][0]
        (False, 'tool_calls.csv:tool_name')
        """
        self = cls.__new__(cls)
        self._setup(set(map(str, columns)), set(files), report, quiet, "in this run")
        self._file_columns = {f: set(map(str, c)) for f, c in (file_columns or {}).items()}
        self.row_trials, self.trials = row_trials, max(row_trials, trials or 0)
        return self

    def _setup(self, columns: set, files: set, report: str, quiet: bool, where: str) -> None:
        if report not in _REPORTS:
            raise ValueError(f"report must be one of {', '.join(map(repr, _REPORTS))}, "
                             f"got {report!r}")
        self.report, self.quiet, self.columns, self.files = report, quiet, columns, files
        self._runs: tuple[Run, ...] = ()
        self._file_columns: dict[str, set[str]] = {}
        self._unreadable: dict[str, str] = {}
        self.skipped: list[dict] = []
        self.reduced: list[dict] = []
        self._decided: dict[str, bool] = {}
        self._where = where
        self.row_trials = self.trials = 1
        self.fmt, self.grouped = "eval-v2", False

    def ready(self, name: str) -> bool:
        """True if section ``name`` can run; otherwise show and record why it is skipped.

        Asked again for the same section (one section over several cells), it answers the same
        without a second note.

        Raises
        ------
        ValueError
            For a section that is not in the catalogue or belongs to another report.
        """
        sec = SECTIONS.get(name)
        if sec is None or sec.report != self.report:
            known = ", ".join(s for s, v in SECTIONS.items() if v.report == self.report)
            raise ValueError(f"no section {name!r} in the {self.report} report; known: {known}")
        if name in self._decided:  # a section spread over several cells: one note, one entry
            return self._decided[name]
        self._decided[name] = answer = self._decide(name, sec)
        return answer

    def _columns_of(self, file: str) -> set[str] | None:
        """Columns of an optional CSV file present in every run (None: not known, unchecked);
        the free-text columns a loaded frame leaves out are read from the file's header.
        A file that cannot be read as a whole (empty, its header damaged) counts as absent:
        the sections that need it are skipped, naming the reason (validation lists it)."""
        if file not in self._file_columns and self._runs and file in _FRAMES:
            try:
                self._file_columns[file] = set.intersection(
                    *(r.columns_of(_FRAMES[file]) for r in self._runs))
            except RunLoadError as exc:
                self.files.discard(file)
                self._unreadable[file] = exc.message.rpartition(f"{file}: ")[2]
        return self._file_columns.get(file)

    def _decide(self, name: str, sec) -> bool:
        for f in dict.fromkeys([*sec.files, *(split_qualified(n)[0] for n in sec.file_needs)]):
            if f in self.files:
                self._columns_of(f)
        bad = [f for f in sec.files if f in self._unreadable]
        if bad:
            self.skipped.append({"section": name, "title": sec.title, "missing": bad})
            self._section_note(f"**Skipped: {sec.title}**. "
                               + " ".join(f"`{f}` cannot be read: {self._unreadable[f]}." for f in bad))
            return False
        side = {f: self._columns_of(f) for f in dict.fromkeys(
            split_qualified(n)[0] for n in sec.file_needs) if f in self.files}
        missing = sec.missing(self.columns, self.files,
                              {f: c for f, c in side.items() if c is not None})
        if not missing and sec.trials == "one" and self.row_trials > 1:
            self.skipped.append({"section": name, "title": sec.title,
                                 "missing": ["one row per task"]})
            self._section_note(f"**Skipped: {sec.title}**. Needs one row per task; {self._where} a "
                       f"task has up to {self.row_trials} trials, which this section would "
                       "average silently (see *Repeated trials*: pass@k, pass^k, flakiness).")
            return False
        if not missing and sec.trials == "several" and self.trials < 2:
            self.skipped.append({"section": name, "title": sec.title,
                                 "missing": ["repeated trials"]})
            self._section_note(f"**Skipped: {sec.title}**. Needs repeated trials of a task (a "
                       "harness's epochs or trials, or runs declaring one configuration and "
                       f"several seeds); {self._where} every task has one.")
            return False
        if missing:
            self.skipped.append({"section": name, "title": sec.title, "missing": missing})
            self._section_note(f"**Skipped: {sec.title}**. Needs {_names(missing)}, "
                               f"absent {self._where}.")
            return False
        absent = sec.absent_uses(self.columns, {f: c for f, c in side.items() if c is not None})
        if absent:
            self.reduced.append({"section": name, "title": sec.title, "absent": absent})
            self._section_note(f"*{sec.title}* is computed without {_names(absent)} "
                       f"(absent {self._where}).")
        return True

    def present(self, columns: Sequence[str]) -> list[str]:
        """The entries of ``columns`` present in the run(s), in the given order."""
        return [c for c in columns if c in self.columns]

    def skip(self, name: str, title: str, missing: Sequence[str], note: str) -> None:
        """Record a section the catalogue does not decide (it depends on more than columns and
        files), and show ``note`` (Markdown) saying why it is skipped.

        Examples
        --------
        >>> s = Sections.from_columns(["task_id"], report="sweep")
        >>> s.skip("repetitions", "Repetitions", ["run_config.json"], "**Skipped.**")
        >>> s.summary()["skipped"]
        [{'section': 'repetitions', 'title': 'Repetitions', 'missing': ['run_config.json']}]
        """
        self.skipped.append({"section": name, "title": title, "missing": list(missing)})
        self._decided[name] = False
        self._note(note)

    def summary(self) -> dict:
        """``report``, ``skipped``, ``reduced`` and ``skipped_lines`` (the two grouped by
        :func:`group_skips`), for a report's ``summary.json``.

        Examples
        --------
        >>> Sections.from_columns(["task_id", "final_score"], report="compare").summary()
        {'report': 'compare', 'skipped': [], 'reduced': [], 'skipped_lines': []}
        """
        return {"report": self.report, "skipped": list(self.skipped),
                "reduced": list(self.reduced),
                "skipped_lines": group_skips(self.skipped, self.fmt, reduced=self.reduced)}

    def overview(self) -> list[str]:
        """Decide every section of this report and return the skipped and reduced ones as a
        few grouped lines (:func:`group_skips`; the run report's context shows them under its
        statement).

        Examples
        --------
        >>> s = Sections.from_columns(["task_id", "final_score"], quiet=True)
        >>> s.fmt = "inspect"
        >>> s.overview()[0][:50]
        '**Not in Inspect logs** (21 sections): Table 2: br'
        """
        for name, sec in SECTIONS.items():
            if sec.report == self.report:
                self.ready(name)
        return group_skips(self.skipped, self.fmt, reduced=self.reduced)

    def _section_note(self, text: str) -> None:
        """A note about one section: shown now, or (grouped) by :meth:`overview` only."""
        if not self.grouped:
            self._note(text)

    def _note(self, text: str) -> None:
        if not self.quiet:
            _show(text)


def _name(item: str) -> str:
    if item.startswith("one of:"):
        return item
    file, col = split_qualified(item)
    return f"`{col}` in {file}" if col else f"`{item}`"


def _names(items: Sequence[str]) -> str:
    return ", ".join(_name(i) for i in items)


#: How a report names where another harness's run came from (:data:`load.formats.FORMATS`).
_SOURCES = {"inspect": "Inspect logs", "tau-bench": "tau-bench results",
            "table": "this per-task table", "eval-v2": "this run", "mixed": "one of the runs"}
#: At most this many inputs are named in a grouped line (all are in summary.json).
_NAMED = 12


def _titles(entries: Sequence[Mapping]) -> str:
    return ", ".join(str(e.get("title") or e.get("section")) for e in entries)


def group_skips(skips: Sequence[Mapping], fmt: str = "eval-v2", *,
                reduced: Sequence[Mapping] = ()) -> list[str]:
    """Skipped (and reduced) sections as a few Markdown lines, one per reason.

    Parameters
    ----------
    skips : sequence of dict
        ``Sections.skipped`` (or ``summary.json``'s ``skipped``): ``section``, ``title``,
        ``missing`` (the inputs it lacks, ``"one row per task"`` or ``"repeated trials"``).
    fmt : str
        The run's format (:data:`dabench_analysis.load.formats.FORMATS`, or ``"mixed"``),
        naming where the inputs are absent ("not in Inspect logs").
    reduced : sequence of dict
        ``Sections.reduced``: ``section``, ``title``, ``absent`` (optional inputs it runs
        without).

    Returns
    -------
    list of str
        At most four lines: the sections whose inputs the source does not hold (their titles,
        then the absent inputs, the first 12 named), those that need one row per task, those
        that need repeated trials, and the sections computed without some optional inputs.
        Empty when nothing was skipped or reduced. The detail per section stays in
        ``summary.json`` (``skipped``, ``reduced``).

    Raises
    ------
    AttributeError
        An entry that is not a mapping.

    Notes
    -----
    The one grouping of skipped sections (issue 33): the run report shows these lines under
    its statement (:meth:`Sections.overview`), ``summary.json`` keeps them as
    ``skipped_lines`` and ``index.html`` lists them; a notebook writer passes a summary's
    ``skipped`` and ``reduced`` lists unchanged.

    Examples
    --------
    >>> skips = [{"section": "calibration", "title": "Calibration",
    ...           "missing": ["confidence_score"]},
    ...          {"section": "tool_usage", "title": "Tool latency and failures",
    ...           "missing": ["tool_calls.csv"]},
    ...          {"section": "pass_k", "title": "pass@k", "missing": ["repeated trials"]}]
    >>> for line in group_skips(skips, "inspect"):
    ...     print(line)
    **Not in Inspect logs** (2 sections): Calibration, Tool latency and failures. They need `confidence_score`, `tool_calls.csv`.
    **Needs repeated trials** (every task has one): pass@k.
    """
    source = _SOURCES.get(fmt, f"this {fmt} run")
    trials = {"one row per task": [], "repeated trials": []}
    absent: list[Mapping] = []
    for entry in skips:
        missing = list(entry.get("missing") or [])
        kind = next((m for m in missing if m in trials), None)
        (trials[kind] if kind else absent).append(entry)
    lines = []
    if absent:
        inputs = list(dict.fromkeys(m for e in absent for m in e.get("missing") or []))
        more = f" and {len(inputs) - _NAMED} more" if len(inputs) > _NAMED else ""
        lines.append(f"**Not in {source}** ({len(absent)} section{'s' * (len(absent) > 1)}): "
                     f"{_titles(absent)}. They need {_names(inputs[:_NAMED])}{more}.")
    if trials["one row per task"]:
        lines.append("**Needs one row per task** (tasks here have repeated trials, which these "
                     "would count as independent; see *Repeated trials*): "
                     f"{_titles(trials['one row per task'])}.")
    if trials["repeated trials"]:
        lines.append("**Needs repeated trials** (every task has one): "
                     f"{_titles(trials['repeated trials'])}.")
    if reduced:
        inputs = list(dict.fromkeys(a for e in reduced for a in e.get("absent") or []))
        lines.append(f"*Computed without* {_names(inputs[:_NAMED])}"
                     f"{f' and {len(inputs) - _NAMED} more' if len(inputs) > _NAMED else ''}"
                     f" (absent in {source}): {_titles(reduced)}.")
    return lines
