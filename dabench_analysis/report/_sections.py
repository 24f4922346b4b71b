"""Degrade, don't die: the sections a report skipped or computed on fewer inputs, and their notes.

A report notebook runs each section inside ``with out.section(name, title):``
(:meth:`dabench_analysis.report._context.Context.section`); a function declared with
:func:`dabench_analysis.schema.needs` raises :class:`~dabench_analysis.schema.Skipped` when its
inputs are absent (task_metrics columns, optional files, columns of those files, repeated
trials), and the section is recorded here (:class:`Sections`): shown as a note in the notebook
(and so in the HTML), listed in ``summary.json`` (``skipped``, ``reduced``, and grouped by
:func:`group_skips` as ``skipped_lines``) and in ``index.html``. A section that fails for any
other reason still fails the report.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from dabench_analysis.schema.needs import split_qualified

#: The reports whose sections are recorded.
_REPORTS = ("run", "compare", "sweep")


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
    """The sections of one report that were skipped or computed without some optional inputs.

    Parameters
    ----------
    report : {"run", "compare", "sweep"}
        The report.
    fmt : str
        The run's format (``"eval-v2"``, ``"inspect"``, ..., ``"mixed"``), naming where absent
        inputs are absent in the grouped lines (:func:`group_skips`).
    quiet : bool
        Record without displaying notes (outside notebooks).
    grouped : bool
        Show no note per section: the report shows them as a few grouped lines at its end
        (another harness's run, which lacks most eval-v2 columns).

    Attributes
    ----------
    skipped, reduced : list of dict
        ``{section, title, missing}`` and ``{section, title, absent}``.

    Examples
    --------
    >>> s = Sections("run", quiet=True)
    >>> s.skip("calibration", "Calibration", ["confidence_score"], "**Skipped.**")
    >>> s.summary()["skipped_lines"][0][:40]
    '**Not in this run** (1 section): Calibra'
    """

    def __init__(self, report: str = "run", *, fmt: str = "eval-v2", quiet: bool = False,
                 grouped: bool = False) -> None:
        if report not in _REPORTS:
            raise ValueError(f"report must be one of {', '.join(map(repr, _REPORTS))}, "
                             f"got {report!r}")
        self.report, self.fmt, self.quiet, self.grouped = report, fmt, quiet, grouped
        self.skipped: list[dict] = []
        self.reduced: list[dict] = []

    def skip(self, name: str, title: str, missing: Sequence[str], note: str) -> None:
        """Record a skipped section and show ``note`` (Markdown) saying why.

        Examples
        --------
        >>> s = Sections("sweep", quiet=True)
        >>> s.skip("repetitions", "Repetitions", ["run_config.json"], "**Skipped.**")
        >>> s.summary()["skipped"]
        [{'section': 'repetitions', 'title': 'Repetitions', 'missing': ['run_config.json']}]
        """
        self.skipped.append({"section": name, "title": title, "missing": list(missing)})
        self._section_note(note)

    def reduce(self, name: str, title: str, absent: Sequence[str], where: str = "in this run"
               ) -> None:
        """Record a section computed without the optional inputs ``absent``, with a note."""
        self.reduced.append({"section": name, "title": title, "absent": list(absent)})
        self._section_note(f"*{title}* is computed without {_names(absent)} (absent {where}).")

    def summary(self) -> dict:
        """``report``, ``skipped``, ``reduced`` and ``skipped_lines`` (the two grouped by
        :func:`group_skips`), for a report's ``summary.json``.

        Examples
        --------
        >>> Sections("compare").summary()
        {'report': 'compare', 'skipped': [], 'reduced': [], 'skipped_lines': []}
        """
        return {"report": self.report, "skipped": list(self.skipped),
                "reduced": list(self.reduced), "skipped_lines": self.lines()}

    def lines(self) -> list[str]:
        """The skipped and reduced sections as a few grouped lines (:func:`group_skips`)."""
        return group_skips(self.skipped, self.fmt, reduced=self.reduced)

    def _section_note(self, text: str) -> None:
        """A note about one section: shown now, or (grouped) only in the grouped lines."""
        if not self.grouped and not self.quiet:
            _show(text)


def _name(item: str) -> str:
    if item.startswith("one of:"):
        return item
    file, col = split_qualified(item)
    return f"`{col}` in {file}" if col else f"`{item}`"


def _names(items: Sequence[str]) -> str:
    return ", ".join(_name(i) for i in items)


#: How a report names where another harness's run came from (:func:`load._readers.formats`).
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
        The run's format (:func:`dabench_analysis.load._readers.formats`, or ``"mixed"``),
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
    The one grouping of skipped sections (issue 33): every report notebook shows these lines
    before its key numbers, ``summary.json`` keeps them as
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
