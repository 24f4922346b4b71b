"""The package's one rounding rule for numbers shown to a reader (paragraphs, rounded tables).

- Estimates (means, differences, interval bounds, effect sizes, shares): 3 significant digits
  in plain decimals; numbers with 3 or more integer digits are rounded to whole numbers
  (12345.6 prints ``12346``, not ``12300``); magnitudes below 1e-4 use scientific notation
  (``1.23e-5``).
- p-values: 2 significant digits; below 0.001 ``< 0.001``.
- Rounding is half-up on the shortest decimal text of the float (``repr``), so 0.15 prints
  ``0.150`` at 3 digits and ``0.15`` at 2 (binary ``f"{0.15:.1f}"`` gives ``0.1``).
- Missing values (None, NaN, <NA>) print ``n/a``; infinities ``inf`` / ``-inf``.

Full precision stays in the CSV files; this module only decides what a reader sees.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import pandas as pd

#: Significant digits of an estimate.
ESTIMATE_DIGITS = 3
#: Significant digits of a p-value.
P_DIGITS = 2
#: p-values below this print as ``< 0.001``.
P_FLOOR = 0.001


def _missing(x: Any) -> bool:
    if x is None or x is pd.NA:
        return True
    try:
        return math.isnan(float(x))
    except (TypeError, ValueError):
        return False


def _significant(x: float, digits: int) -> str:
    if x == 0:
        return "0"
    d = Decimal(repr(float(x)))
    exp = d.adjusted()
    q = d.quantize(Decimal(1).scaleb(min(0, exp - digits + 1)), rounding=ROUND_HALF_UP)
    if q != 0 and q.adjusted() > exp:  # 0.09996 -> 0.1000: one digit too many, requantize
        q = q.quantize(Decimal(1).scaleb(min(0, q.adjusted() - digits + 1)),
                       rounding=ROUND_HALF_UP)
    if q.adjusted() < -4:
        return f"{q:.{digits - 1}e}"
    return f"{q:f}"


def format_estimate(x: Any, *, digits: int = ESTIMATE_DIGITS) -> str:
    """An estimate with ``digits`` significant digits (default 3), as plain decimal text.

    Parameters
    ----------
    x : float
        Any finite or missing number.
    digits : int
        Significant digits (>= 1).

    Returns
    -------
    str
        E.g. ``0.881``, ``0.0820``, ``-0.534``, ``12.5``, ``12346``; ``n/a`` when missing.

    Examples
    --------
    >>> [format_estimate(v) for v in (0.15, 0.8812, -0.53404, 0.082, 12.5, 12345.6, 0.0)]
    ['0.150', '0.881', '-0.534', '0.0820', '12.5', '12346', '0']
    >>> format_estimate(float("nan")), format_estimate(float("-inf")), format_estimate(1.2345e-5)
    ('n/a', '-inf', '1.23e-5')
    """
    if _missing(x):
        return "n/a"
    x = float(x)
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return _significant(x, digits)


def format_percent(share: Any, *, digits: int = ESTIMATE_DIGITS) -> str:
    """A share in [0, 1] as a percentage with the estimate rule and a spaced ``%``.

    Examples
    --------
    >>> format_percent(0.125), format_percent(0.8375), format_percent(0.25), format_percent(1)
    ('12.5 %', '83.8 %', '25.0 %', '100 %')
    """
    if _missing(share):
        return "n/a"
    return f"{format_estimate(100 * float(share), digits=digits)} %"


def format_interval(estimate: Any, low: Any, high: Any, *,
                    digits: int = ESTIMATE_DIGITS) -> str:
    """An estimate with its interval as one cell: ``0.878 [0.817, 0.920]``.

    Parameters
    ----------
    estimate, low, high : float
        The point estimate and the interval bounds, in the same unit.
    digits : int
        Significant digits of each number (the rule of :func:`format_estimate`).

    Returns
    -------
    str
        ``estimate [low, high]``; ``n/a`` when the estimate is missing; ``estimate [n/a]`` when
        either bound is (an interval that could not be computed, e.g. from one value).

    Examples
    --------
    >>> format_interval(0.8777649, 0.8173711, 0.9201385)
    '0.878 [0.817, 0.920]'
    >>> format_interval(3886.25, 3767.05, 4005.45), format_interval(0.5, float("nan"), 0.7)
    ('3886 [3767, 4005]', '0.500 [n/a]')
    """
    if _missing(estimate):
        return "n/a"
    text = format_estimate(estimate, digits=digits)
    if _missing(low) or _missing(high):
        return f"{text} [n/a]"
    return (f"{text} [{format_estimate(low, digits=digits)}, "
            f"{format_estimate(high, digits=digits)}]")


def format_pvalue(p: Any) -> str:
    """A p-value with 2 significant digits, ``< 0.001`` below 0.001, ``n/a`` when missing.

    Examples
    --------
    >>> [format_pvalue(v) for v in (0.0928, 0.27845, 0.012726, 0.04999, 0.00099, 0.001, 1.0)]
    ['0.093', '0.28', '0.013', '0.050', '< 0.001', '0.0010', '1.0']
    """
    if _missing(p):
        return "n/a"
    p = float(p)
    if p < P_FLOOR:
        return f"< {P_FLOOR:g}"
    return _significant(p, P_DIGITS)


def format_p(p: Any) -> str:
    """APA-style p text with the rule of :func:`format_pvalue`.

    Returns ``p < 0.001``, ``p = 0.012`` (2 significant digits), or ``p not testable`` for a
    missing p.

    Examples
    --------
    >>> format_p(0.00004), format_p(0.0123), format_p(0.278), format_p(float("nan"))
    ('p < 0.001', 'p = 0.012', 'p = 0.28', 'p not testable')
    """
    if _missing(p):
        return "p not testable"
    text = format_pvalue(p)
    return f"p {text}" if text.startswith("<") else f"p = {text}"
