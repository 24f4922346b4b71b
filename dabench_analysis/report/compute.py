"""One report section in one call: :func:`section` reads the section's parts from the catalogue
(:data:`dabench_analysis.schema.SECTIONS`), computes each with the function it names, writes it
(tables as ``.csv``/``.tex``/``.md``, figures as ``.png``/``.pdf``, text as ``.md``) and shows it;
a section whose inputs are absent shows its skip note instead (:class:`Sections`).
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np
import pandas as pd

from dabench_analysis import _mplbackend  # noqa: F401 - MPLBACKEND checked before matplotlib

# isort: split
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from dabench_analysis import export
from dabench_analysis.report.context import Context
from dabench_analysis.report.show import show
from dabench_analysis.schema import SECTIONS
from dabench_analysis.schema.parts import Part
from dabench_analysis.schema.sections import Section
from dabench_analysis.stats.recorded import NotComputed


def resolve(name: str) -> Any:
    """The object a catalogue names: ``"tables.failures.root_causes"`` below ``dabench_analysis``.

    Parameters
    ----------
    name : str
        Dotted name relative to the package: modules first, then attributes.

    Returns
    -------
    object
        The function (or other attribute).

    Raises
    ------
    ValueError
        For a name that does not lead to an attribute, naming the part that is missing.

    Examples
    --------
    >>> resolve("tables.main_results").__name__
    'main_results'
    >>> resolve("stats.calibration.calibration_table").__module__
    'dabench_analysis.stats.calibration'
    """
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):  # the longest importable module prefix
        try:
            obj = importlib.import_module(".".join(["dabench_analysis", *parts[:cut]]))
        except ModuleNotFoundError:
            continue
        for i, attr in enumerate(parts[cut:], start=cut):
            if not hasattr(obj, attr):
                raise ValueError(f"{name!r}: dabench_analysis.{'.'.join(parts[:i])} has no "
                                 f"{attr!r}")
            obj = getattr(obj, attr)
        return obj
    raise ValueError(f"{name!r}: no module dabench_analysis.{parts[0]}")


def compute_part(ctx: Context, part: Part) -> Any:
    """The result of one part of a section, without writing or showing it.

    Parameters
    ----------
    ctx : Context
        The report's inputs, parameters and earlier results.
    part : Part
        A part of a section of :data:`dabench_analysis.schema.SECTIONS`.

    Returns
    -------
    object
        What the named function returns for the part's inputs and arguments (a table, a
        figure's Axes, a text), or rows of an earlier result, filtered and sorted as the part
        says.

    Raises
    ------
    KeyError
        An input or earlier result the context does not have.
    ValueError
        From the function (e.g. a column not in the tasks), or a name that does not resolve.

    Examples
    --------
    >>> import dabench_analysis as da
    >>> from pathlib import Path
    >>> from dabench_analysis.report.context import run_context
    >>> ctx = run_context(da.load_run("data/sample_runs/proposed_aat"),
    ...                   {"success_threshold": 0.8}, out=Path("unused"), quiet=True)
    >>> part = SECTIONS["main_results"].parts[0]
    >>> compute_part(ctx, part)["metric"].tolist()[:2]
    ['final_score', 'analyst_score']
    """
    if "." in part.compute:
        func = resolve(part.compute)
        value = func(*(ctx.value(n) for n in part.inputs),
                     **{k: ctx.argument(v) for k, v in part.args})
    else:  # rows of an earlier result
        value = ctx.value(part.compute)
    if part.rows:
        column, wanted = part.rows
        value = value[value[column] == wanted]
    if part.sort:
        keys = [k.strip() for k in part.sort.split(",")]
        value = value.sort_values([k.lstrip("-") for k in keys],
                                  ascending=[not k.startswith("-") for k in keys])
    return value


def _figure(value: Any) -> Figure | None:
    """The figure of a figure function's result (an Axes, a sequence of Axes, a Figure)."""
    if isinstance(value, Figure):
        return value
    if isinstance(value, Axes):
        return value.figure
    if isinstance(value, (list, tuple, np.ndarray)) and len(value):
        first = np.ravel(np.asarray(value, dtype=object))[0]  # panels: the first one's figure
        return first.figure if isinstance(first, Axes) else None
    return None


def _display(obj: Any) -> None:
    from IPython import get_ipython
    from IPython.display import display

    if get_ipython() is not None:
        display(obj)


def _table(ctx: Context, sec: Section, part: Part, value: pd.DataFrame) -> None:
    shown = [c for c in part.columns if c in value] or None
    labels = {c: h for c, h in part.labels if c in value and (shown is None or c in shown)}
    if part.stem:
        export.save_table(value, ctx.out / part.stem, caption=part.caption or sec.title,
                          columns=shown, labels=labels)
    if part.show == "table":  # a caption of its own labels a table that shares its section
        show(value, columns=shown, max_rows=part.max_rows, caption=part.caption or None,
             labels=labels)
    elif part.show.startswith("counts:"):
        column = part.show.removeprefix("counts:")
        show(value[column].value_counts(), caption=f"Tasks by {export.column_label(column).lower()}")
    elif part.show != "none":
        raise ValueError(f"section {sec.name!r}: show must be 'table', 'none' or "
                         f"'counts:<column>', got {part.show!r}")


def _emit(ctx: Context, sec: Section, part: Part, value: Any) -> None:
    """Write and show one part's result; keep tables and text for later parts."""
    fig = _figure(value)
    if fig is not None:
        saved = export.save_and_show(fig, ctx.out / part.stem)
        _display(saved)
        return
    ctx.results[part.result_key] = value
    if isinstance(value, str):
        if part.stem:
            export.write_text(value + "\n", ctx.out / part.stem)
        if value and part.show != "none":
            from IPython.display import Markdown

            _display(Markdown(value))
    elif isinstance(value, (pd.DataFrame, pd.Series)):
        _table(ctx, sec, part, value)
    else:
        raise TypeError(f"section {sec.name!r}: {part.compute} returned "
                        f"{type(value).__name__}, not a table, figure or text")


def section(ctx: Context, name: str) -> None:
    """Compute, write and show one section of the report, or show why it is skipped.

    Parameters
    ----------
    ctx : Context
        The report's context (:func:`run_context`, :func:`compare_context`,
        :func:`sweep_context`).
    name : str
        A section of the catalogue of this report (:data:`dabench_analysis.schema.SECTIONS`).

    Returns
    -------
    None
        Each part of the section is computed with the function it names; tables are written
        to ``out/tables/<name>.{csv,tex,md}`` (the ``.tex``/``.md`` with the part's columns),
        figures to ``out/<name>.{png,pdf}``, text to ``out/<name>.md``; each is displayed in
        the notebook and tables and text are kept in ``ctx.results``. A section whose inputs
        are absent displays its note and is listed in the summary's ``skipped``.

    Raises
    ------
    ValueError
        For a section not in this report's catalogue, or a function name that does not
        resolve.

    Notes
    -----
    A table that the data cannot give raises :class:`~dabench_analysis.stats.recorded.
    NotComputed` (a frontier with fewer than two costed runs); the section is then skipped as
    for an absent column: its reason shown, listed in the summary's ``skipped``, nothing
    written (the frontier's table is its first part).

    Examples
    --------
    >>> import tempfile, dabench_analysis as da
    >>> from pathlib import Path
    >>> from dabench_analysis.report.context import run_context
    >>> run = da.load_run("data/sample_runs/proposed_aat")
    >>> ctx = run_context(run, {"success_threshold": 0.8}, out=Path(tempfile.mkdtemp()),
    ...                   quiet=True)
    >>> section(ctx, "outcome_status")  # doctest: +ELLIPSIS
    Outcome status  ...
    >>> sorted(p.name for p in (ctx.out / "tables").iterdir())
    ['outcome_status.csv', 'outcome_status.md', 'outcome_status.tex']
    >>> ctx.results["outcome_status"]["count"].tolist()  # correct, partial, failed: 80 tasks
    [72, 6, 2]
    """
    if not ctx.sections.ready(name):  # refuses a section of another report
        return
    sec = SECTIONS[name]
    for part in sec.parts:  # later parts read earlier results: computed and written in turn
        try:
            value = compute_part(ctx, part)
        except NotComputed as exc:
            ctx.sections.skip(name, sec.title, exc.missing or [exc.reason],
                              f"**Skipped: {sec.title}**. Not computed: {exc.reason}.")
            return
        _emit(ctx, sec, part, value)
