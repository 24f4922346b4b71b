"""The bootstrap of :mod:`dabench_analysis.tables.reliability_profile`: resamples of tasks drawn
in blocks (the same draws as one ``rng.integers(0, n, n)`` per resample) and the pooled
predictability statistics of every resample from how often each task is drawn, each equal, to
the last bit, to the statistic computed on the drawn trials themselves (every sum it takes is
of whole or half numbers, exact in floating point)."""

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


def pooled_reps(codes: np.ndarray, conf: np.ndarray, ok: np.ndarray, *, n_boot: int,
                 seed: int) -> dict[str, np.ndarray]:
    """AUROC, AuRC and excess AuRC of the trials pooled over each resample of tasks (``codes``:
    each trial's task, 0..n-1), from how often each task is drawn and its trials' counts by
    confidence level; every sum is of whole (AUROC: half) numbers, exact in floating point,
    so each value is the one :func:`dabench_analysis.stats.consistency.auroc` and ``aurc`` give for the drawn trials."""
    n = int(codes.max()) + 1
    levels, level = np.unique(-conf, return_inverse=True)  # most confident first
    won = np.zeros((n, len(levels)))
    lost = np.zeros((n, len(levels)))
    np.add.at(won, (codes, level), ok)
    np.add.at(lost, (codes, level), 1 - ok)
    out: dict[str, list] = {"confidence_auroc": [], "aurc": [], "excess_aurc": []}
    for idx in draws(n, n_boot, seed, width=len(codes)):
        drawn = counts(idx, n)
        w1, w0 = drawn @ won, drawn @ lost  # per resample and level
        n1, n0 = w1.sum(axis=1), w0.sum(axis=1)
        u = (w1 * (np.cumsum(w0[:, ::-1], axis=1)[:, ::-1] - w0 / 2)).sum(axis=1)
        both = (n1 > 0) & (n0 > 0)
        out["confidence_auroc"].append(np.where(both, u / np.where(both, n1 * n0, 1), np.nan))
        aurc, excess = aurc_rows((w1 + w0).astype(np.int64), w0)
        out["aurc"].append(aurc)
        out["excess_aurc"].append(excess)
    return {m: np.concatenate(v) for m, v in out.items()}


def aurc_rows(size: np.ndarray, err: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """AuRC and excess AuRC of each row of trial counts by level (most confident first):
    the risk at each coverage computed as :func:`dabench_analysis.stats.consistency.risk_coverage` does (a level's errors
    spread evenly over its positions), averaged over rows of one length at a time."""
    total = size.sum(axis=1)
    aurc, excess = np.empty(len(size)), np.empty(len(size))
    for n in np.unique(total):
        rows = np.flatnonzero(total == n)
        s, e = size[rows], err[rows]
        lev = np.repeat(np.tile(np.arange(s.shape[1]), len(rows)), s.ravel()).reshape(len(rows), n)
        r = np.arange(len(rows))[:, None]
        start = (np.cumsum(s, axis=1) - s)[r, lev]
        before = (np.cumsum(e, axis=1) - e)[r, lev]
        i = np.arange(1, n + 1)
        share = e / np.where(s > 0, s, 1)  # a level's errors per position (levels drawn: s > 0)
        risk = (before + (i - start) * share[r, lev]) / i
        best = np.maximum(i - (n - e.sum(axis=1, keepdims=True)), 0) / i
        aurc[rows] = risk.mean(axis=1)
        excess[rows] = aurc[rows] - best.mean(axis=1)
    return aurc, excess
