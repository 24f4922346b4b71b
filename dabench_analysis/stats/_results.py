"""Named results of the statistics that return one value or one interval rather than a table.

Each is a :class:`typing.NamedTuple`: fields read by name (``res.low``, ``res.p_value``), the
method always named, and a ``note`` that says why a value is NaN when it is. Tables of results
are DataFrames (one row per test or group); these are for the building blocks the tables use.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class Interval(NamedTuple):
    """A confidence interval: ``low``, ``high``, the ``method`` that made it and a ``note``
    (empty, or why the bounds are NaN: e.g. "n = 0", "zero variance: not estimable").

    Examples
    --------
    >>> Interval(0.2, 0.5, "Wilson")
    Interval(low=0.2, high=0.5, method='Wilson', note='')
    """

    low: float
    high: float
    method: str
    note: str = ""


class TestResult(NamedTuple):
    """One test: ``statistic``, ``p_value``, ``method`` and a ``note`` (empty, or why the test
    is degenerate: "no discordant pairs: p set to 1.0").

    Examples
    --------
    >>> TestResult(3.0, 0.0127, "McNemar exact (binomial)").p_value
    0.0127
    """

    __test__ = False  # not a pytest test class

    statistic: float
    p_value: float
    method: str
    note: str = ""


class StandardError(NamedTuple):
    """A standard error with what it rests on: ``se``, ``n`` (values used), ``n_clusters``
    (independent units; ``n`` when there are no clusters), ``method`` and a ``note``.

    Examples
    --------
    >>> StandardError(0.178, 12, 4, "CR1").n_clusters
    4
    """

    se: float
    n: int
    n_clusters: int
    method: str
    note: str = ""


class AdjustedPValues(NamedTuple):
    """Adjusted p-values in the input's order (NaN where the input was NaN), ``m`` (the number
    of tests counted: the non-missing p-values) and the ``method``.

    Examples
    --------
    >>> AdjustedPValues(np.array([0.03, 0.06]), 2, "Holm").m
    2
    """

    p_adjusted: np.ndarray
    m: int
    method: str


class Score(NamedTuple):
    """A summary score (ECE, MCE, Brier): ``estimate``, ``n`` (tasks with both values),
    ``method`` (the score and its binning) and a ``note``.

    Examples
    --------
    >>> Score(0.139, 9, "ECE, 3 equal-width bins, [lo, hi)").estimate
    0.139
    """

    estimate: float
    n: int
    method: str
    note: str = ""
