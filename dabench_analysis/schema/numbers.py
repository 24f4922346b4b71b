"""The package's one rule for numbers a reader sees: tables (.md, .tex, HTML), figure titles
and annotations, ``index.html``, the results paragraph and the command line.

- **Estimates** (means, shares, accuracies, differences, effect sizes, coefficients, test
  statistics, seconds, tokens): 3 significant digits, and never fewer decimals than that
  needs; a value in [−1, 1] (a score, share, proportion, p-value, correlation, most effect
  sizes) always has 3 decimals, so a column of them keeps one number of decimals: ``0.000``,
  ``0.082``, ``0.878``, ``1.000``, ``-0.534``; larger values ``1.50``, ``12.5``, ``118``,
  ``12346`` (whole numbers from 100 on). No scientific notation: a value that rounds to 0
  prints ``0.000``.
- **Intervals** print their bounds with the estimate's decimals, in one cell:
  ``0.082 [0.006, 0.158]``, ``118 [93, 143]``; a bound that could not be computed ``[–]``.
- **p-values**: 3 decimals, ``< 0.001`` below 0.001 (``0.093``, ``0.278``, ``1.000``).
- **Counts** as integers (``80``); **ranks** as integers, or halves when tied ranks are
  averaged (``1``, ``2.5``).
- **Proportions, not percentages**: a share, accuracy or rate prints as a proportion
  everywhere (``0.125``), never as ``12.5 %`` in one place and ``0.125`` in another.
- Parameters (a threshold, a level, α) print as given (``0.8``, ``0.95``).
- Rounding is half-up on the shortest decimal text of the float (``repr``), so 0.0005 prints
  ``0.001`` (binary ``f"{0.0005:.3f}"`` gives ``0.001`` only by luck); missing values (None,
  NaN, <NA>) print ``n/a``; infinities ``inf`` / ``-inf``.

Full precision stays in the CSV files and the result frames; this module only decides what a
reader sees, and every place that shows a number calls it.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import pandas as pd

__all__ = ["ESTIMATE_DIGITS", "NO_INTERVAL", "P_FLOOR", "decimals", "format_count",
           "format_estimate", "format_interval", "format_p", "format_parameter",
           "format_pvalue", "format_rank", "is_missing"]

#: Significant digits of an estimate.
ESTIMATE_DIGITS = 3
#: Decimals of a p-value.
P_DECIMALS = 3
#: p-values below this print as ``< 0.001``.
P_FLOOR = 0.001
#: The interval cell of an estimate whose bounds could not be computed.
NO_INTERVAL = "[–]"


def is_missing(x: Any) -> bool:
    """True for a missing scalar: None, NaN, pandas' NA and NaT (``pandas.isna``); False for
    any other value, a list or an array included.

    Examples
    --------
    >>> is_missing(None), is_missing(float("nan")), is_missing(0.0), is_missing("nan")
    (True, True, False, False)
    """
    return bool(pd.api.types.is_scalar(x) and pd.isna(x))


def decimals(x: float, *, digits: int = ESTIMATE_DIGITS) -> int:
    """Decimals an estimate prints with: ``digits`` for |x| <= 1, else enough for ``digits``
    significant digits (0 from 100 on, with the default 3).

    Parameters
    ----------
    x : float
        A finite number.
    digits : int
        Significant digits (>= 1).

    Returns
    -------
    int

    Examples
    --------
    >>> [decimals(v) for v in (0.0, 0.082, 1.0, 1.5, 9.996, 12.5, 99.96, 118.0, 12345.6)]
    [3, 3, 3, 2, 1, 1, 0, 0, 0]
    """
    if digits < 1:
        raise ValueError(f"digits must be at least 1, got {digits}")
    x = abs(float(x))
    if x <= 1:
        return digits
    d = Decimal(repr(x))
    e = d.adjusted()
    if d.quantize(Decimal(1).scaleb(e - digits + 1), rounding=ROUND_HALF_UP).adjusted() > e:
        e += 1  # 99.96 rounds to 100: whole numbers
    return max(0, digits - 1 - e)


def _fixed(x: float, places: int) -> str:
    q = Decimal(repr(float(x))).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    text = f"{q:f}"
    return text[1:] if q == 0 and text.startswith("-") else text  # no "-0.000"


def format_estimate(x: Any, *, digits: int = ESTIMATE_DIGITS,
                    places: int | None = None) -> str:
    """An estimate by the rule: 3 decimals in [−1, 1], else 3 significant digits.

    Parameters
    ----------
    x : float
        Any finite or missing number.
    digits : int
        Significant digits (default 3).
    places : int, optional
        Decimals to use instead of the rule's (an interval's bounds take their estimate's).

    Returns
    -------
    str
        E.g. ``0.082``, ``0.878``, ``1.000``, ``-0.534``, ``1.50``, ``12.5``, ``12346``;
        ``n/a`` when missing.

    Examples
    --------
    >>> [format_estimate(v) for v in (0.15, 0.0, 1.0, 0.0820, -0.53404, 12.5, 12345.6)]
    ['0.150', '0.000', '1.000', '0.082', '-0.534', '12.5', '12346']
    >>> format_estimate(float("nan")), format_estimate(float("-inf")), format_estimate(-1e-5)
    ('n/a', '-inf', '0.000')
    """
    if is_missing(x):
        return "n/a"
    x = float(x)
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return _fixed(x, decimals(x, digits=digits) if places is None else places)


def format_interval(estimate: Any, low: Any, high: Any, *,
                    digits: int = ESTIMATE_DIGITS) -> str:
    """An estimate with its interval in one cell, the bounds with the estimate's decimals.

    Parameters
    ----------
    estimate, low, high : float
        The point estimate and the interval's bounds, in the same unit.
    digits : int
        Significant digits of the estimate (the rule of :func:`format_estimate`).

    Returns
    -------
    str
        ``estimate [low, high]``; ``n/a`` when the estimate is missing; ``estimate [–]``
        (:data:`NO_INTERVAL`) when either bound is (an interval that is not estimable).

    Examples
    --------
    >>> format_interval(0.8777649, 0.8173711, 0.9201385), format_interval(1, 0.8667, 1)
    ('0.878 [0.817, 0.920]', '1.000 [0.867, 1.000]')
    >>> format_interval(118.2, 92.5, 143.4), format_interval(0.5, float("nan"), 0.7)
    ('118 [93, 143]', '0.500 [–]')
    """
    if is_missing(estimate):
        return "n/a"
    text = format_estimate(estimate, digits=digits)
    if is_missing(low) or is_missing(high):
        return f"{text} {NO_INTERVAL}"
    places = decimals(float(estimate), digits=digits) if math.isfinite(float(estimate)) else 3
    return (f"{text} [{format_estimate(low, places=places)}, "
            f"{format_estimate(high, places=places)}]")


def format_pvalue(p: Any) -> str:
    """A p-value with 3 decimals, ``< 0.001`` below 0.001, ``n/a`` when missing.

    Examples
    --------
    >>> [format_pvalue(v) for v in (0.0928, 0.27845, 0.012726, 0.04999, 0.00099, 0.001, 1.0)]
    ['0.093', '0.278', '0.013', '0.050', '< 0.001', '0.001', '1.000']
    """
    if is_missing(p):
        return "n/a"
    p = float(p)
    if p < P_FLOOR:
        return f"< {P_FLOOR:g}"
    return _fixed(p, P_DECIMALS)


def format_p(p: Any) -> str:
    """p in running text by the rule of :func:`format_pvalue`: ``p = 0.093``, ``p < 0.001``;
    ``p not testable`` for a missing p.

    Examples
    --------
    >>> format_p(0.00004), format_p(0.0123), format_p(0.278), format_p(float("nan"))
    ('p < 0.001', 'p = 0.012', 'p = 0.278', 'p not testable')
    """
    if is_missing(p):
        return "p not testable"
    text = format_pvalue(p)
    return f"p {text}" if text.startswith("<") else f"p = {text}"


def format_count(x: Any) -> str:
    """A count as an integer (``80``); ``n/a`` when missing.

    Examples
    --------
    >>> format_count(80.0), format_count(3), format_count(None)
    ('80', '3', 'n/a')
    """
    return "n/a" if is_missing(x) else str(int(round(float(x))))


def format_rank(x: Any) -> str:
    """A rank as an integer, or with one decimal when tied ranks are averaged (``2.5``).

    Examples
    --------
    >>> format_rank(1.0), format_rank(2.5), format_rank(float("nan"))
    ('1', '2.5', 'n/a')
    """
    if is_missing(x):
        return "n/a"
    x = float(x)
    return str(int(x)) if x.is_integer() else _fixed(x, 1)


def format_parameter(x: Any) -> str:
    """A parameter as given: a threshold ``0.8``, a level ``0.95``, a seed ``0``.

    Examples
    --------
    >>> format_parameter(0.8), format_parameter(2000.0), format_parameter("holm")
    ('0.8', '2000', 'holm')
    """
    if isinstance(x, bool) or not isinstance(x, (int, float)) and \
            type(x).__module__ != "numpy":
        return str(x)
    if is_missing(x):
        return "n/a"
    x = float(x)
    return str(int(x)) if x.is_integer() else f"{x:g}"
