"""The bootstrap of :mod:`dabench_analysis.tables.reliability_profile`: resamples of tasks drawn
in blocks (the same draws as one ``rng.integers(0, n, n)`` per resample), how often each task
is drawn in each, and percentile intervals of the resampled values. The pooled predictability
statistics of a resample are computed from those counts by
:func:`dabench_analysis.stats.consistency._by_level`."""

from __future__ import annotations

import numpy as np

#: Most index cells one block of resamples holds (the draws of a large run come in blocks).
_BLOCK_CELLS = 2_000_000


def draws(n: int, n_boot: int, seed: int, width: int = 0):
    """Blocks of resampled task indices, ``(rows, n)`` each, ``n_boot`` rows in all: the draws
    of ``rng.integers(0, n, n)`` once per resample, in order (one call per resample, as a
    single call of every index would draw other numbers); ``width``: cells a resample takes
    downstream (default ``n``)."""
    rng = np.random.default_rng(seed)
    rows = max(1, _BLOCK_CELLS // max(n, width, 1))
    for start in range(0, n_boot, rows):
        yield np.stack([rng.integers(0, n, n) for _ in range(min(rows, n_boot - start))])


def counts(idx: np.ndarray, n: int) -> np.ndarray:
    """How often each of the ``n`` tasks is drawn in each resample (rows of ``idx``)."""
    flat = (idx + n * np.arange(len(idx))[:, None]).ravel()
    return np.bincount(flat, minlength=n * len(idx)).reshape(len(idx), n)


def interval(stat, n: int, *, n_boot: int, seed: int, ci: float) -> tuple[float, float, str]:
    """Percentile interval of ``stat`` over ``n_boot`` resamples of ``n`` task indices;
    ``stat`` takes a block of resamples (one row of indices each) and gives one value a row."""
    if n < 2:
        return np.nan, np.nan, "interval not estimable: fewer than 2 tasks"
    return bounds(np.concatenate([np.asarray(stat(idx), dtype=float)
                                   for idx in draws(n, n_boot, seed)]), n_boot, ci)


def bounds(reps: np.ndarray, n_boot: int, ci: float) -> tuple[float, float, str]:
    """The percentile interval of the resampled values (undefined ones left out)."""
    reps = reps[np.isfinite(reps)]
    if len(reps) < 2 or np.ptp(reps) == 0:
        return np.nan, np.nan, "interval not estimable: every resample gives the same value"
    lo, hi = np.quantile(reps, [(1 - ci) / 2, (1 + ci) / 2])
    dropped = n_boot - len(reps)
    note = f"{dropped} of {n_boot} resamples undefined, left out" if dropped else ""
    return float(lo), float(hi), note


def ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``num / den`` where ``den > 0``, else NaN."""
    pos = den > 0
    return np.where(pos, num / np.where(pos, den, 1), np.nan)
