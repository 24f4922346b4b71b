"""Tables for a reader: each estimate and its interval in one cell, human labels with units,
counts as integers and every number by the package's rounding rule (:mod:`.numbers`).

:func:`present` is what the ``.tex`` and ``.md`` files (:mod:`._tables`) and the HTML reports
show; the ``.csv`` files keep full precision and the machine names.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from dabench_analysis.export._text import visible, visible_frame
from dabench_analysis.schema import ALIASES, TASK_COLUMNS, label, require_columns
from dabench_analysis.schema._labels import LABELS, value_label
from dabench_analysis.schema.numbers import (
    ESTIMATE_DIGITS,
    NO_INTERVAL,
    format_count,
    format_estimate,
    format_interval,
    format_parameter,
    format_pvalue,
    format_rank,
    is_missing,
)

#: Estimates a bare ``ci_low``/``ci_high`` pair belongs to, in order of preference.
PLAIN_ESTIMATES = ("estimate", "mean_diff", "delta", "diff", "mean", "proportion", "share",
                   "pass_rate", "success_rate", "accuracy", "mean_time_s", "rate")
#: Text columns that describe the whole table: moved to a note when they hold one value.
NOTE_COLUMNS = re.compile(r"^(method|note|.+_method)$")
#: Parameters of the analysis that made a table: when one holds the same value in every row it
#: becomes part of one note under the table (``Threshold: 0.8; level: 0.95; bootstrap: 2000
#: draws, seed 0``) instead of a column repeating it; ``metric`` only in tables of 2+ rows
#: (a one-row table keeps it as the label of its row).
PARAMETER_COLUMNS = ("metric", "threshold", "ci", "alpha", "correction", "n_boot", "boot_seed",
                     "reference", "profile")
_PARAMETER_NAMES = {"metric": "metric", "threshold": "threshold", "ci": "level",
                    "alpha": "alpha", "correction": "correction",
                    "reference": "relative changes against", "profile": "profile"}
_CI = re.compile(r"^(?:(?P<pre>.+)_)?ci_low(?:_(?P<post>.+))?$")
_NOT_ESTIMATE = re.compile(r"^(n|n_.+|count|.+_count|std|sem|.+_std|.+_sem|se|se_.+|median.*"
                           r"|.+_median|p\d+.*|statistic|p|pvalue|p_.+|lower|upper|threshold|ci"
                           r"|alpha|rank|rank_.+|.+_rank|seed|.+_seed|.*ci_(low|high).*)$")
_COUNT = re.compile(r"^(n|count|n_.+|.+_count|requested|successful|tp|fp|fn|tn|seed|.+_seed)$")
_RANK = re.compile(r"^(rank|rank_low|rank_high|.+_rank)$")  # rank_biserial is an estimate
_P = re.compile(r"^(p|pvalue|p_.+)$")
_MACHINE = re.compile(r"^[a-z][a-z0-9_]*$")
#: Words of generated labels written as readers expect them.
_WORDS = {"mcc": "MCC", "tp": "TP", "fp": "FP", "fn": "FN", "tn": "TN", "se": "SE", "f1": "F1",
          "id": "ID", "na": "NA", "dof": "df", "cohens": "Cohen's", "ece": "ECE", "mce": "MCE"}
_WORD = re.compile(r"\b(" + "|".join(_WORDS) + r")\b", re.IGNORECASE)


def _words(text: str) -> str:
    return _WORD.sub(lambda m: _WORDS[m[1].lower()], text)


def _eligible(df: pd.DataFrame, name: str) -> bool:
    return (not _NOT_ESTIMATE.match(str(name)) and pd.api.types.is_float_dtype(df[name]))


def _estimate_for(df: pd.DataFrame, low: str, stem: str | None, used: set,
                  eligible: dict) -> str | None:
    if df.empty:  # no values, so dtypes say nothing: only an estimate named as such
        names = [c for c in df.columns if c not in used and not _NOT_ESTIMATE.match(str(c))]
        exact = [c for c in (PLAIN_ESTIMATES if stem is None else
                             (stem, f"{stem}_mean", f"mean_{stem}")) if c in names]
        return exact[0] if exact else None
    names = [c for c in df.columns if c not in used and eligible[c]]
    if stem is None:
        preferred = [c for c in PLAIN_ESTIMATES if c in names]
        candidates = preferred[:1] or names
    else:
        exact = [c for c in (stem, f"{stem}_mean", f"mean_{stem}") if c in names]
        candidates = exact[:1] or [c for c in names if f"_{stem}_" in f"_{c}_"]
        candidates = [c for c in candidates if "mean" in c] or candidates
    before = [c for c in candidates if df.columns.get_loc(c) < df.columns.get_loc(low)]
    return (before[-1] if before else candidates[0]) if candidates else None


def find_intervals(df: pd.DataFrame) -> dict[str, tuple[str, str]]:
    """Which estimate each ``ci_low``/``ci_high`` pair of ``df`` belongs to.

    Parameters
    ----------
    df : DataFrame
        A result table of the package (snake_case columns).

    Returns
    -------
    dict
        ``{estimate: (low, high)}``, e.g. ``{"mean": ("ci_low", "ci_high")}``.

    Notes
    -----
    A pair is ``X_ci_low``/``X_ci_high``, ``ci_low_X``/``ci_high_X`` or a bare
    ``ci_low``/``ci_high``. Its estimate is a float column that is not a count, SD, SE,
    median, quantile, statistic or p-value: for a stem ``X`` the column ``X``, ``X_mean`` or
    ``mean_X``, else a column with ``X`` as a word (``failure_rate`` for ``failure_ci_low``),
    ``mean`` ones first; for a bare pair the first of :data:`PLAIN_ESTIMATES`, else the
    nearest column before it. p-values, ranks and parameters (threshold, level, alpha, seeds)
    are never estimates. An empty frame has no values to tell a float column by, so only an
    estimate named as such counts (``X``, ``X_mean``, ``mean_X``; for a bare pair one of
    :data:`PLAIN_ESTIMATES`). A pair without an estimate is left as two columns.

    Examples
    --------
    >>> cols = ["metric", "n", "mean", "std", "sem", "ci_low", "ci_high", "mean_tokens",
    ...         "tokens_ci_low", "tokens_ci_high", "mean_a", "median_a", "ci_low_a", "ci_high_a"]
    >>> found = find_intervals(pd.DataFrame({c: [0.5] if c != "metric" else ["x"] for c in cols}))
    >>> for estimate, (low, high) in found.items():
    ...     print(estimate, low, high)
    mean ci_low ci_high
    mean_tokens tokens_ci_low tokens_ci_high
    mean_a ci_low_a ci_high_a
    """
    found: dict[str, tuple[str, str]] = {}
    used: set = set()
    eligible: dict = {}  # each column's, found once (not once per interval)
    for low in df.columns:
        match = _CI.match(str(low))
        high = str(low).replace("ci_low", "ci_high")
        if not match or high not in df.columns:
            continue
        if not eligible:
            eligible = {c: _eligible(df, c) for c in df.columns}
        estimate = _estimate_for(df, low, match["pre"] or match["post"], used, eligible)
        if estimate is not None:
            found[estimate] = (low, high)
            used.add(estimate)
    return found


def column_label(name: Any) -> str:
    """The human label of a result column, with its unit (``Runtime (s)``, ``Final score``).

    Parameters
    ----------
    name : str
        A column name of a result table (snake_case) or an eval-v2 column.

    Returns
    -------
    str
        The header a reader sees.

    Notes
    -----
    Catalogue labels first (:func:`dabench_analysis.schema.label`, :data:`schema._labels.LABELS`);
    then ``X_mean``/``mean_X`` as ``X``, ``X_std`` as ``X SD`` and ``n_X`` as ``n (X)``.
    A name that is not snake_case is taken to be a label already and kept.

    Examples
    --------
    >>> print(" | ".join(column_label(c) for c in ("final_score_mean", "final_score_std", "n_used",
    ...                                             "mean_runtime_s", "total_tokens", "Tokens")))
    Final score | Final score SD | n (used) | Runtime (s) | Total tokens (tokens) | Tokens
    """
    name = str(name)
    known = set(LABELS) | set(TASK_COLUMNS) | set(ALIASES)
    if name in LABELS or not _MACHINE.match(name):
        return label(name) if name in LABELS else name
    if name in known:
        return _words(label(name))
    for pattern, template in ((r"^mean_(.+)$", "{}"), (r"^(.+)_mean$", "{}"),
                              (r"^(.+)_std$", "{} SD")):
        match = re.match(pattern, name)
        if match and len(match[1]) > 1 and match[1] in known:  # "mean_b" is not a label of "b"
            return _words(template.format(label(match[1])))
    if name.startswith("n_"):
        return _words(f"n ({name[2:].replace('_', ' ')})")
    return _words(label(name))


def _is_integral(series: pd.Series) -> bool:
    values = pd.to_numeric(series, errors="coerce").dropna().to_numpy(dtype=float)
    return bool(np.isfinite(values).all() and (values == np.round(values)).all())


def _is_count(series: pd.Series, name: str) -> bool:
    if pd.api.types.is_bool_dtype(series):
        return False
    if pd.api.types.is_integer_dtype(series):
        return True
    column = TASK_COLUMNS.get(ALIASES.get(str(name), str(name)))
    counted = _COUNT.match(str(name)) or (column is not None and column.kind in ("count", "tokens"))
    return bool(counted and pd.api.types.is_float_dtype(series) and _is_integral(series))


def _kind(series: pd.Series, name: str) -> str:
    """How a column's numbers print: ``count`` (integers), ``rank`` (integers or halves: tied
    ranks are averaged, 1.5), ``p`` or ``estimate``."""
    if _is_count(series, name):
        return "count"
    numeric = pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)
    if _RANK.match(str(name)) and numeric:
        return "rank"
    return "p" if _P.match(str(name)) else "estimate"


def _cell(value: Any, *, digits: int, kind: str = "estimate") -> str:
    if is_missing(value):
        return "n/a"
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)) or (kind == "count" and
                                                 isinstance(value, (float, np.floating))):
        return format_count(value)
    if isinstance(value, (float, np.floating)):
        return {"p": format_pvalue, "rank": format_rank}.get(
            kind, lambda v: format_estimate(v, digits=digits))(value)
    return str(value)


def _format(series: pd.Series, name: str, digits: int) -> pd.Series:
    """The column ``name`` (``series``) as text cells."""
    kind = _kind(series, name)
    shown = series.map(lambda v: _cell(v, digits=digits, kind=kind))
    if name == "metric" and series.dropna().isin(list(TASK_COLUMNS)).all():
        shown = shown.map(lambda v: _words(label(v)) if v in TASK_COLUMNS else v)  # Table 1 rows
    elif kind == "estimate" and not pd.api.types.is_numeric_dtype(series):
        shown = shown.map(lambda v: value_label(str(name), v))  # enums, buckets, measures
    return shown.astype(object)


def _in_seconds(flat: pd.DataFrame, labels: dict) -> pd.DataFrame:
    """Milliseconds as a reader reads times: numeric ``X_ms`` columns in seconds, headed
    ``X (s)`` (labels the caller gave are kept)."""
    ms = [c for c in flat.columns if str(c).endswith("_ms") and
          pd.api.types.is_numeric_dtype(flat[c]) and not pd.api.types.is_bool_dtype(flat[c])]
    if not ms:
        return flat
    for c in ms:
        labels.setdefault(c, column_label(str(c).removesuffix("_ms")) + " (s)")
    return flat.assign(**{c: flat[c].astype("float64") / 1000 for c in ms})


def _plain(value: Any, name: str) -> str:
    """A parameter's value in a note: 0.8, 0.95, 2000, a labelled metric."""
    if name == "metric" and str(value) in TASK_COLUMNS:
        return _words(label(str(value)))
    return format_parameter(value)


def _parameter_note(df: pd.DataFrame, keep: Sequence[str]) -> tuple[list[str], list[str]]:
    """The constant :data:`PARAMETER_COLUMNS` of ``df`` (not in ``keep``) and their one note."""
    found = {}
    for name in PARAMETER_COLUMNS:
        if name not in df.columns or name in keep or df.empty or df[name].isna().any():
            continue
        values = pd.unique(df[name].astype(object))
        if len(values) == 1 and (name != "metric" or len(df) > 1):
            found[name] = _plain(values[0], name)
    parts = [f"{_PARAMETER_NAMES[k]}: {v}" for k, v in found.items() if k in _PARAMETER_NAMES]
    boot = ([f"{found['n_boot']} draws"] if "n_boot" in found else []) + \
        ([f"seed {found['boot_seed']}"] if "boot_seed" in found else [])
    text = "; ".join(parts + (["bootstrap: " + ", ".join(boot)] if boot else []))
    return list(found), [text[:1].upper() + text[1:]] if text else []


def _notes(df: pd.DataFrame, keep: Sequence[str]) -> tuple[list[str], list[str]]:
    """Columns to drop (empty or constant method/note columns, constant parameters) and the
    notes they become."""
    drop, notes = _parameter_note(df, keep)
    for name in df.columns:
        if name in keep or not NOTE_COLUMNS.match(str(name)):
            continue
        values = df[name].dropna().astype(str).str.strip()
        values = values[values != ""]
        if values.empty:
            drop.append(name)
        elif values.nunique() == 1 and len(values) == len(df):
            drop.append(name)
            notes.append(f"{column_label(name)}: {values.iloc[0]}")
    return drop, notes


def present(
    df: pd.DataFrame,
    *,
    columns: Sequence[str] | None = None,
    labels: Mapping[str, str] | None = None,
    intervals: Mapping[str, tuple[str, str]] | None = None,
    digits: int = ESTIMATE_DIGITS,
    ci_level: float | None = 0.95,
) -> pd.DataFrame:
    """A result table as a reader sees it: estimate and interval in one cell, human labels.

    Parameters
    ----------
    df : DataFrame
        A result table (snake_case columns; a named index becomes leading columns).
    columns : sequence of str, optional
        Machine names of the columns to show, in order (default: all). An interval is merged
        when its estimate and both bounds are shown. A ``note`` column holding one text
        becomes the note under the table even when not named.
    labels : mapping, optional
        Header for a machine name, overriding :func:`column_label`.
    intervals : mapping, optional
        ``{estimate: (low, high)}`` to merge; default :func:`find_intervals`.
    digits : int
        Significant digits of estimates (:func:`schema.numbers.format_estimate`, default 3).
    ci_level : float or None
        Level named in the header of a merged column (``Mean [95% CI]``); None: ``[CI]``.

    Returns
    -------
    DataFrame
        Text cells (object dtype), one column per shown column, an interval's three merged
        into ``estimate [low, high]`` (:func:`schema.numbers.format_interval`); an estimate
        whose interval has a missing bound prints ``0.859 [–]`` (:data:`NO_INTERVAL`, with
        the note "Interval [–]: not computable (too few values)"), a missing estimate ``n/a``.
        Integer columns (and float columns of counts: ``n``, ``n_*``, ``count``, seeds,
        catalogue counts and tokens holding whole numbers) print as integers; ranks (``rank``, ``rank_*``,
        ``*_rank``) as integers when every rank is whole, else with one decimal (tied ranks
        are averaged: ``1.5``, ``2.0``); p-values (``p``, ``p_*``) by :func:`format_pvalue`;
        other numbers, test statistics included, by :func:`format_estimate`; booleans as
        yes/no, missing values as ``n/a``; catalogue names in a ``metric`` column are labelled,
        category values (enums, buckets, measures, coefficients) by
        :func:`dabench_analysis.schema._labels.value_label`; times in milliseconds (``X_ms``)
        in seconds, headed ``X (s)``.
        ``method``/``note`` columns holding one value in every row are dropped into
        ``attrs["notes"]`` (``"Method: Wilson"``), empty ones dropped; so are the
        :data:`PARAMETER_COLUMNS` holding one value in every row (not those named in
        ``labels``), all in one note first (``"Metric: Final score; threshold: 0.8; level:
        0.95; bootstrap: 2000 draws, seed 0"``). ``attrs["align"]`` holds ``l``/``r`` per
        column (numbers right).

    Raises
    ------
    ValueError
        A column of ``columns``, ``labels`` or ``intervals`` not in ``df`` (or not shown), or
        two columns of ``df`` with the same name.

    Examples
    --------
    >>> t = pd.DataFrame({"metric": ["final_score"], "n": [80], "mean": [0.8777649],
    ...                   "ci_low": [0.8173711], "ci_high": [0.9201385], "method": ["logit t"]})
    >>> shown = present(t)
    >>> shown.to_dict("records")
    [{'Metric': 'Final score', 'n': '80', 'Mean [95% CI]': '0.878 [0.817, 0.920]'}]
    >>> shown.attrs["notes"], shown.attrs["align"]
    (['Method: logit t'], 'lrr')
    >>> board = pd.DataFrame({"run_id": ["a", "b"], "rank": [1.0, 2.0], "threshold": 0.8,
    ...                       "ci": 0.95, "n_boot": 2000, "boot_seed": 0})
    >>> shown = present(board)
    >>> shown.to_dict("list")
    {'Run ID': ['a', 'b'], 'Rank': ['1', '2']}
    >>> print(*shown.attrs["notes"])
    Threshold: 0.8; level: 0.95; bootstrap: 2000 draws, seed 0
    """
    flat = df.reset_index() if any(n is not None for n in df.index.names) else df
    repeated = sorted({str(c) for c in flat.columns[flat.columns.duplicated()]})
    if repeated:
        raise ValueError(f"the table has more than one column named {', '.join(repeated)}: a "
                         "presented table names each column once")
    if columns is not None:
        require_columns(flat, columns, "the table")
        # a table's ``note`` (one text for every row) stays a note under a chosen selection
        flat = flat[list(columns) + [c for c in ("note",) if c in flat and c not in columns
                                     and flat[c].astype(str).nunique() == 1]]
    require_columns(flat, list(labels or {}), "the table's shown columns (labels=)")
    flat = visible_frame(flat, names=False)  # control characters as \x00 (export._text)
    labels = dict(labels or {})
    flat = _in_seconds(flat, labels)
    pairs = find_intervals(flat) if intervals is None else dict(intervals)
    require_columns(flat, [c for e, b in pairs.items() for c in (e, *b)], "the table")
    drop, notes = _notes(flat, keep=[*pairs, *(labels or {})])
    bounds = {c for b in pairs.values() for c in b}
    suffix = f" [{ci_level:.0%} CI]" if ci_level is not None else " [CI]"
    out, align, seen = {}, [], set()
    for name in flat.columns:
        if name in bounds or name in drop:
            continue
        header, column = labels.get(name) or column_label(name), flat[name]
        if name in pairs:
            low, high = pairs[name]
            cells = [format_interval(e, lo, hi, digits=digits)
                     for e, lo, hi in zip(column, flat[low], flat[high], strict=True)]
            values, header = pd.Series(cells, index=flat.index, dtype=object), header + suffix
        else:
            values = _format(column, name, digits)
        header = header if header not in seen else str(name).replace("_", " ")
        seen.add(header)
        out[header] = values
        numeric = pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column)
        align.append("r" if numeric else "l")
    shown = pd.DataFrame(out, index=flat.index).reset_index(drop=True)
    if any(NO_INTERVAL in str(v) for h in out if h.endswith(suffix) for v in out[h]):
        notes.append(f"Interval {NO_INTERVAL}: not estimable (fewer than 2 values, or no "
                     "variation)")
    shown.columns = [visible(c) for c in shown.columns]
    shown.attrs.update(notes=[visible(n) for n in notes], align="".join(align))
    return shown
