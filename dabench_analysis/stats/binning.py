"""The package's one binning rule: which bin a value falls in, exactly, edges included.

Calibration bins and the guide's five confidence buckets (:mod:`.calibration`), histogram bins
(``figures.score_distribution``), the reliability diagram and quantile bins
(``tables.ablation.quantile_bins``) all call :func:`bin_index`.

Why a rule of its own: equal-width edges computed in floating point are not the decimals their
labels print (``np.linspace(0, 1, 11)[7]`` is 0.7000000000000001, ``0.1 * 3`` is
0.30000000000000004), so a comparison against them puts a confidence of exactly 0.3, 0.6 or 0.7
one bin low: the bin labelled [0.60, 0.70) held 0.70. Here equal-width membership is decided on
the scale of bin numbers, ``t = (x - lo) / (hi - lo) * n``, where edge k is the integer k, and
a value within a few units in the last place of an edge is *on* that edge.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

import numpy as np

#: Values within this many units in the last place (of the larger end of the range, or of the
#: largest edge) of an edge count as on the edge.
ULPS = 8
_EPS = float(np.finfo(float).eps)


def equal_edges(n_bins: int, *, range: tuple[float, float] = (0.0, 1.0)) -> np.ndarray:  # noqa: A002
    """Equal-width edges ``lo + k (hi - lo) / n``, each the double nearest its exact value.

    Parameters
    ----------
    n_bins : int
        Number of bins, >= 1.
    range : (lo, hi)
        The interval the bins cover; (0, 1) for scores in [0, 1].

    Returns
    -------
    ndarray of shape (n_bins + 1,)

    Raises
    ------
    ValueError
        ``n_bins`` not a positive integer, or an empty or non-finite range.

    Notes
    -----
    Edge k is ``(lo (n - k) + hi k) / n``: for integer ``lo`` and ``hi`` (0 and 1, 0 and 9) the
    numerator is an exact integer and the division rounds once, so edge k is the correctly
    rounded k/n (``float(Decimal(k) / Decimal(n))``). ``np.linspace(0, 1, n + 1)`` instead gives
    ``lo + k * step`` with the step already rounded (0.30000000000000004 for k/n = 3/10).

    Examples
    --------
    >>> equal_edges(10)[[3, 6, 7]].tolist()
    [0.3, 0.6, 0.7]
    """
    n, lo, hi = _check_bins(n_bins, range)
    k = np.arange(n + 1, dtype=float)
    return (lo * (n - k) + hi * k) / n


def _check_bins(n_bins, range):  # noqa: A002
    if isinstance(n_bins, bool) or not isinstance(n_bins, int | np.integer) or n_bins < 1:
        raise ValueError(f"n_bins must be a positive integer, got {n_bins!r}")
    lo, hi = (float(v) for v in range)
    if not (np.isfinite(lo) and np.isfinite(hi) and hi > lo):
        raise ValueError(f"range must be finite with lo < hi, got {range!r}")
    return int(n_bins), lo, hi


def edge_label(k: int, n_bins: int, *, range: tuple[float, float] = (0.0, 1.0)) -> str:  # noqa: A002
    """Exact text of edge k of ``n_bins`` equal-width bins: "0.70", "0.125", or "1/15".

    Parameters
    ----------
    k, n_bins : int
        Edge number (0..n_bins) and number of bins.
    range : (lo, hi)
        As in :func:`equal_edges`.

    Returns
    -------
    str
        The edge as a decimal with 2 to 4 places when that is exact, else as a reduced fraction,
        so that a label never rounds an edge (2/15 is not 0.13).

    Raises
    ------
    ValueError
        As :func:`equal_edges`.

    Notes
    -----
    Computed in exact rational arithmetic (:class:`fractions.Fraction`) from ``lo``, ``hi`` and
    k/n, so "[0.60, 0.70)" names the bin :func:`bin_index` fills, edge values included.
    ``pd.cut`` and R ``cut`` print rounded float edges instead (``dig.lab = 3``).

    Examples
    --------
    >>> [edge_label(k, 15) for k in (0, 1, 3, 15)]
    ['0.00', '1/15', '0.20', '1.00']
    """
    n, lo, hi = _check_bins(n_bins, range)
    v = Fraction(lo) + (Fraction(hi) - Fraction(lo)) * k / n
    for places in (2, 3, 4):
        if (v * 10**places).denominator == 1:
            return f"{float(v):.{places}f}"
    return f"{v.numerator}/{v.denominator}"


def bin_index(values, bins: int | Sequence[float] | np.ndarray, *, right: bool = False,
              range: tuple[float, float] = (0.0, 1.0)) -> np.ndarray:  # noqa: A002
    """Bin number of each value, with values on an edge in the bin the label says.

    Parameters
    ----------
    values : array-like of float
        Values to bin (e.g. confidences in [0, 1]); NaN allowed.
    bins : int or sequence of float
        An integer: that many equal-width bins over ``range``. A sequence: increasing edges
        (e.g. quantile edges), at least two.
    right : bool
        False (default): bins [lo, hi), the last one closed, [lo, hi] (as ``np.histogram``).
        True: bins (lo, hi], the first one closed (as ``pd.cut(..., include_lowest=True)``, R
        ``cut(right = TRUE, include.lowest = TRUE)`` and scikit-learn's ``calibration_curve``).
    range : (lo, hi)
        Interval covered by integer ``bins``; ignored for explicit edges.

    Returns
    -------
    ndarray of int64, same length as ``values``
        0 .. n_bins - 1; -1 for NaN, ±inf and values outside the outer edges.

    Raises
    ------
    ValueError
        ``bins`` not a positive integer or not strictly increasing edges; an empty range.

    Notes
    -----
    Equal-width bins: with ``t = (x - lo) / (hi - lo) * n`` edge k sits at the integer k. A value
    with ``|x - edge_k| <= ULPS * eps * max(|lo|, |hi|)`` (eps = 2**-52, ULPS = 8; on the t scale
    the same tolerance times n / (hi - lo)) is *on* edge k = round(t) and goes to bin k
    ([lo, hi)) or k - 1 ((lo, hi]); any other value goes to ``floor(t)`` ([lo, hi)) or
    ``ceil(t) - 1`` ((lo, hi]). Why this is exact: the double nearest a decimal edge is off by
    at most ``2**-53 |edge| <= 2**-53 max(|lo|, |hi|)``, and forming t adds at most two more
    roundings of 2**-53 relative size (the subtraction is exact for lo = 0), so the value of an
    edge lands within ``3 * 2**-53 max(|lo|, |hi|)`` of it, well inside the tolerance; a value
    farther than the tolerance from every edge has ``floor(t)`` computed right, because each
    rounding is monotone and too small to cross an integer. Only values within 8 ulps of an
    edge (a band about 2e-15 wide for scores in [0, 1]) are moved onto it; such a value is the
    float image of the edge itself (``0.1 * 7``), never a measured score.

    Explicit edges: a value within ``ULPS * eps * max|edge|`` of an edge is set to that edge
    (quantile edges interpolated by ``np.quantile`` can miss the data value they equal by an ulp),
    then placed by ``np.searchsorted``.

    ``np.digitize``, ``np.histogram``, ``pd.cut`` and R ``cut`` compare against edges as floats,
    so they give the same bins as this function only when the edges are the exact doubles of
    the values on them.

    Examples
    --------
    >>> bin_index([0.3, 0.6, 0.7, 1.0], 10).tolist()
    [3, 6, 7, 9]
    >>> bin_index([0.0, 0.3, 0.7], 10, right=True).tolist()
    [0, 2, 6]
    >>> bin_index([0.0, 1.75, 2.0, float("nan")], [0.0, 1.75, 4.0], right=True).tolist()
    [0, 0, 1, -1]
    """
    x = np.asarray(values, dtype=float).reshape(-1)
    if isinstance(bins, int | np.integer) and not isinstance(bins, bool):
        return _equal_width(x, *_check_bins(bins, range), right)
    edges = np.asarray(bins, dtype=float).reshape(-1)
    if edges.size < 2 or not np.all(np.isfinite(edges)) or np.any(np.diff(edges) <= 0):
        raise ValueError("bins must be a positive integer or at least two strictly increasing "
                         f"finite edges, got {bins!r}")
    return _explicit(x, edges, right)


def _equal_width(x: np.ndarray, n: int, lo: float, hi: float, right: bool) -> np.ndarray:
    out = np.full(x.shape, -1, dtype=np.int64)
    ok = np.isfinite(x)
    t = (x[ok] - lo) / (hi - lo) * n
    k = np.rint(t)
    tol = ULPS * _EPS * max(abs(lo), abs(hi)) * n / (hi - lo)
    on = (np.abs(t - k) <= tol) & (k >= 0) & (k <= n)
    idx = np.where(on, k, np.floor(t) if not right else np.ceil(t)) - (1 if right else 0)
    inside = on | ((t >= 0) & (t <= n))
    idx = np.clip(idx, 0, n - 1)
    out[np.flatnonzero(ok)[inside]] = idx[inside].astype(np.int64)
    return out


def _explicit(x: np.ndarray, edges: np.ndarray, right: bool) -> np.ndarray:
    out = np.full(x.shape, -1, dtype=np.int64)
    ok = np.isfinite(x)
    v = x[ok]
    tol = ULPS * _EPS * max(abs(edges[0]), abs(edges[-1]))
    j = np.clip(np.searchsorted(edges, v), 1, edges.size - 1)
    near = np.where(v - edges[j - 1] <= edges[j] - v, j - 1, j)
    v = np.where(np.abs(v - edges[near]) <= tol, edges[near], v)
    idx = np.searchsorted(edges, v, side="left" if right else "right") - 1
    inside = (v >= edges[0]) & (v <= edges[-1])
    idx = np.clip(idx, 0, edges.size - 2)
    out[np.flatnonzero(ok)[inside]] = idx[inside]
    return out
