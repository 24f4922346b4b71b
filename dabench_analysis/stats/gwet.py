"""Chance-corrected agreement of raw ratings with Gwet's variance: percent agreement,
Brennan–Prediger, Gwet's AC1/AC2, Fleiss' generalised kappa and Conger's kappa, each with its
standard error, t-interval and p-value; any number of raters, missing ratings allowed.

Written from Gwet (2014) and Gwet's own R implementation (irrCAC, ``agree.coeff3.raw.r``)
because no maintained, permissively licensed package installs beside current scipy and pandas:
irrCAC 0.4.4 (the Python port) pins ``scipy==1.12`` and ``pandas<3``; the registry's
``agreement`` and ``interrater`` are GPL-3.0, the former without variances. Checked against the
values irrCAC's README prints for ``cac.raw4raters`` and ``distrib.6raters`` (``tests/test_gwet.py``).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from dabench_analysis._caller import outside_level

#: Weight schemes (Gwet 2014, ch. 3): names as in irrCAC.
WEIGHT_KINDS = ("identity", "ordinal", "linear", "quadratic")
#: Coefficients :func:`agreement_coefficients` computes, in its row order.
COEFFICIENTS = ("percent_agreement", "brennan_prediger", "gwet", "fleiss", "conger")
_COLUMNS = ["coefficient", "estimate", "se", "ci_low", "ci_high", "p_value", "pa", "pe",
            "n_items", "n_raters", "weights", "method", "note"]
_METHOD = {"percent_agreement": "percent agreement", "brennan_prediger": "Brennan-Prediger",
           "gwet": "Gwet's AC{}", "fleiss": "Fleiss' generalised kappa",
           "conger": "Conger's kappa"}


def weight_matrix(scores: Sequence[float], kind: str = "identity") -> np.ndarray:
    """Agreement weights ``w_kl`` in [0, 1] between the categories of an ordered scale.

    Parameters
    ----------
    scores : sequence of float, length q >= 2
        The category values (distinct; sorted here). Labels without numeric values: pass their
        positions 1..q.
    kind : {"identity", "ordinal", "linear", "quadratic"}
        The weight scheme.

    Returns
    -------
    ndarray, shape (q, q)
        Symmetric, ones on the diagonal, rows and columns in increasing score order.

    Raises
    ------
    ValueError
        Unknown ``kind``; fewer than 2, repeated or non-finite scores.

    Notes
    -----
    With ``x`` the sorted scores and ``k, l`` their positions (Gwet 2014, ch. 3):
    identity ``w = 1[k = l]``; linear ``1 - |x_k - x_l| / (x_max - x_min)``; quadratic
    ``1 - (x_k - x_l)^2 / (x_max - x_min)^2``; ordinal (positions only)
    ``1 - C(M_kl, 2) / C(q, 2)`` with ``M_kl = |k - l| + 1``. Linear and quadratic follow the
    values (as irrCAC's ``linear.weights``/``quadratic.weights``), ordinal the ranks.

    References
    ----------
    Gwet, K. L. (2014). Handbook of Inter-Rater Reliability, 4th ed. Gaithersburg, MD:
    Advanced Analytics, LLC.

    Examples
    --------
    >>> weight_matrix([1, 2, 3], "linear").tolist()
    [[1.0, 0.5, 0.0], [0.5, 1.0, 0.5], [0.0, 0.5, 1.0]]
    >>> weight_matrix([1, 2, 3, 4], "ordinal")[0].round(3).tolist()  # 1 - (0, 1, 3, 6) / 6
    [1.0, 0.833, 0.5, 0.0]
    """
    if kind not in WEIGHT_KINDS:
        raise ValueError(f"weights {kind!r} unknown; known: {', '.join(WEIGHT_KINDS)}")
    x = np.sort(np.asarray(scores, dtype="float64").ravel())
    if x.size < 2 or not np.isfinite(x).all() or np.unique(x).size != x.size:
        raise ValueError(f"scores must be >= 2 distinct finite numbers, got {list(scores)}")
    if kind == "identity":
        return np.eye(x.size)
    if kind == "ordinal":
        m = np.abs(np.subtract.outer(np.arange(x.size), np.arange(x.size))) + 1.0
        d = m * (m - 1) / 2
    else:
        d = np.abs(np.subtract.outer(x, x)) ** (1 if kind == "linear" else 2)
    return 1.0 - d / d.max()


@dataclass(frozen=True)
class _Tally:
    onehot: np.ndarray  # (n, r, q) rating of rater g on item i is category k
    agree: np.ndarray  # (n, q) r_ik: raters who put item i in category k
    ri: np.ndarray  # (n,) ratings of item i
    two: np.ndarray  # (n,) item rated at least twice
    pa_i: np.ndarray  # (n,) weighted agreement of item i (0 when rated once)
    pa: float  # mean of pa_i over items rated at least twice
    pi: np.ndarray  # (q,) mean over items of r_ik / r_i
    w: np.ndarray  # (q, q) weights


def _tally(x: np.ndarray, scores: np.ndarray, w: np.ndarray) -> _Tally:
    rated = ~np.isnan(x)
    idx = np.searchsorted(scores, np.where(rated, x, scores[0]))
    onehot = (idx[..., None] == np.arange(scores.size)) & rated[..., None]
    agree = onehot.sum(axis=1).astype("float64")
    ri = agree.sum(axis=1)
    two = ri >= 2
    sum_q = (agree * (agree @ w.T - 1)).sum(axis=1)
    pa_i = np.where(two, sum_q / np.where(two, ri * (ri - 1), 1.0), 0.0)
    return _Tally(onehot, agree, ri, two, pa_i, float(pa_i[two].mean()),
                  (agree / ri[:, None]).mean(axis=0), w)


def _chance_bp(t: _Tally) -> tuple[float, np.ndarray]:
    q = t.w.shape[0]
    pe = float(t.w.sum() / q**2)
    return pe, np.full(t.ri.size, pe)


def _chance_gwet(t: _Tally) -> tuple[float, np.ndarray]:
    q = t.w.shape[0]
    scale = t.w.sum() / (q * (q - 1))
    return float(scale * (t.pi * (1 - t.pi)).sum()), scale * (t.agree @ (1 - t.pi)) / t.ri


def _chance_fleiss(t: _Tally) -> tuple[float, np.ndarray]:
    pi_w = (t.w + t.w.T) / 2 @ t.pi
    return float(t.pi @ t.w @ t.pi), (t.agree @ pi_w) / t.ri


def _chance_conger(t: _Tally) -> tuple[float, np.ndarray]:
    n, r, _ = t.onehot.shape
    classif = t.onehot.sum(axis=0).astype("float64")  # (r, q) n_gk
    ng = classif.sum(axis=1)
    p = classif / ng[:, None]
    pbar = p.mean(axis=0)
    s2 = (p.T @ p - r * np.outer(pbar, pbar)) / (r - 1)
    pe = float((t.w * (np.outer(pbar, pbar) - s2 / r)).sum())
    rated = t.onehot.any(axis=2).astype("float64")
    a = t.onehot - (rated - ng / n)[..., None] * p[None, :, :]  # (n, r, q)
    lam_k = (n / ng)[None, :, None] * (a @ t.w.T)
    lam = (lam_k * (r * pbar[None, None, :] - p[None, :, :])).sum(axis=2)
    return pe, lam.sum(axis=1) / (r * (r - 1))


_CHANCE: dict[str, Callable[[_Tally], tuple[float, np.ndarray]]] = {
    "percent_agreement": lambda t: (0.0, np.zeros(t.ri.size)), "brennan_prediger": _chance_bp,
    "gwet": _chance_gwet, "fleiss": _chance_fleiss, "conger": _chance_conger}


def _inference(t: _Tally, pe: float, pe_i: np.ndarray, ci: float,
               low: float = -1.0) -> dict[str, Any]:
    """Estimate, Gwet's linearised variance, t-interval truncated to [low, 1], p-value; a zero
    variance leaves the interval NaN with a note (not estimable), never zero-width."""
    n, n2 = t.ri.size, int(t.two.sum())
    coef = (t.pa - pe) / (1 - pe)
    c_i = (n / n2) * (t.pa_i - pe * t.two) / (1 - pe)
    c_i = c_i - 2 * (1 - coef) * (pe_i - pe) / (1 - pe)
    se = float(np.sqrt(((c_i - coef) ** 2).sum() / (n * (n - 1))))
    se = 0.0 if se <= 1e-15 else se
    half = float(stats.t.ppf(0.5 + ci / 2, n - 1)) * se
    p = float(2 * stats.t.sf(abs(coef) / se, n - 1)) if se > 0 else float(coef == 0)
    lo, hi = (max(low, coef - half), min(1.0, coef + half)) if se > 0 else (np.nan, np.nan)
    return {"estimate": float(coef), "se": se, "ci_low": float(lo), "ci_high": float(hi),
            "p_value": p, "pa": t.pa, "pe": pe,
            "note": "" if se > 0 else "zero variance: interval not estimable"}


def _as_codes(ratings: Any, scores: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    s = np.sort(np.asarray(scores, dtype="float64").ravel())
    frame = pd.DataFrame(ratings)
    try:
        x = frame.apply(pd.to_numeric).to_numpy(dtype="float64", na_value=np.nan)
    except (TypeError, ValueError) as err:
        raise ValueError(f"ratings must be numeric scores (map labels to positions 1..q "
                         f"first, as reliability.inter_rater does): {err}") from None
    bad = ~np.isnan(x) & ~np.isin(x, s)
    if bad.any():
        i, g = np.argwhere(bad)[0]
        raise ValueError(f"rating {x[i, g]:g} (row {frame.index[i]!r}, column "
                         f"{frame.columns[g]!r}) not among the scores {s.tolist()}")
    rated = ~np.isnan(x)
    x = x[rated.any(axis=1)][:, rated.any(axis=0)]
    if x.shape[1] < 2:
        raise ValueError(f"ratings must be items x raters with >= 2 raters who rated something, "
                         f"got {x.shape[1]}")
    if x.shape[0] < 2 or ((~np.isnan(x)).sum(axis=1) >= 2).sum() < 1:
        raise ValueError("need >= 2 rated items, at least one of them rated by >= 2 raters")
    return x, s


def agreement_coefficients(ratings: pd.DataFrame | np.ndarray, scores: Sequence[float], *,
                           weights: str = "identity", ci: float = 0.95,
                           coefficients: Sequence[str] = COEFFICIENTS) -> pd.DataFrame:
    """Chance-corrected agreement coefficients of raw ratings with Gwet's standard errors.

    Parameters
    ----------
    ratings : DataFrame or 2-D array, shape (items, raters)
        Numeric scores, each one of ``scores``; NaN/None = not rated. Items nobody rated and
        raters who rated nothing are dropped.
    scores : sequence of float
        The full scale (q >= 2 distinct values), also the categories never used: chance
        agreement depends on q. Labels without values: code them 1..q.
    weights : {"identity", "ordinal", "linear", "quadratic"}
        Agreement weights (:func:`weight_matrix`); "identity" gives the unweighted
        coefficients (AC1), any other Gwet's AC2 and the weighted kappas.
    ci : float in (0, 1)
        Confidence level of the t-interval.
    coefficients : sequence of str
        Any of ``"percent_agreement", "brennan_prediger", "gwet", "fleiss", "conger"``.

    Returns
    -------
    DataFrame
        One row per coefficient: ``coefficient`` (``percent_agreement``, ``brennan_prediger``,
        ``gwet_ac1`` or ``gwet_ac2``, ``fleiss_kappa``, ``conger_kappa``), ``estimate``, ``se``
        (Gwet's linearised standard error), ``ci_low, ci_high`` (t-interval, n_items - 1 df,
        truncated to the coefficient's range: [0, 1] for percent agreement, [−1, 1] for the
        others, as ``method`` says; NaN with a note when the variance is 0), ``p_value`` (two-sided t-test of H0: coefficient = 0), ``pa``
        (weighted percent agreement), ``pe`` (chance agreement), ``n_items``, ``n_raters``,
        ``weights``, ``method``, ``note`` ("" or why the row is NaN).

    Raises
    ------
    ValueError
        Non-numeric ratings or ratings outside ``scores``; fewer than 2 raters, 2 items or one
        item rated twice; unknown weights or coefficient; ``ci`` outside (0, 1).

    Warns
    -----
    UserWarning
        A kappa whose chance agreement is 1 (every rating in one category): NaN row with a note.

    Notes
    -----
    With ``r_ik`` raters putting item i in category k, ``r_i`` its ratings, ``r*_ik =
    sum_l w_kl r_il`` and ``pi_k = mean_i r_ik / r_i`` over the n rated items: ``p_a`` is the
    mean over the n2 items with ``r_i >= 2`` of ``sum_k r_ik (r*_ik - 1) / (r_i (r_i - 1))``;
    coefficient ``= (p_a - p_e) / (1 - p_e)`` with ``p_e`` = 0 (percent agreement),
    ``sum(w) / q^2`` (Brennan–Prediger), ``sum(w) / (q (q - 1)) * sum_k pi_k (1 - pi_k)`` (Gwet),
    ``sum_kl w_kl pi_k pi_l`` (Fleiss), Conger's mean of the pairwise Cohen chance agreements
    (from each rater's own marginals). Variance (Gwet 2014; Gwet 2008 for AC1):
    ``v = sum_i (c*_i - c)^2 / (n (n - 1))`` with ``c_i = (n / n2) (p_a|i - p_e 1[r_i >= 2]) /
    (1 - p_e)`` and ``c*_i = c_i - 2 (1 - c) (p_e|i - p_e) / (1 - p_e)``, ``p_e|i`` each
    coefficient's item-level chance agreement; no finite-population correction. Formulas as in
    Gwet's R irrCAC (``pa.coeff.raw``, ``bp.coeff.raw``, ``gwet.ac1.raw``, ``fleiss.kappa.raw``,
    ``conger.kappa.raw``). The p-value is two-sided, as the irrCAC README prints it and the
    Python port computes it (the R source of August 2021 computes the one-sided
    ``1 - pt(c / se, n - 1)``); with se = 0 it is 0 (1 when the estimate is 0).

    References
    ----------
    Gwet, K. L. (2014). Handbook of Inter-Rater Reliability, 4th ed. Gaithersburg, MD:
    Advanced Analytics, LLC.
    Gwet, K. L. (2008). Computing inter-rater reliability and its variance in the presence of
    high agreement. British Journal of Mathematical and Statistical Psychology 61(1), 29–48.
    Fleiss, J. L. (1971). Measuring nominal scale agreement among many raters. Psychological
    Bulletin 76(5), 378–382.
    Conger, A. J. (1980). Integration and generalization of kappas for multiple raters.
    Psychological Bulletin 88(2), 322–328.
    Brennan, R. L. & Prediger, D. J. (1981). Coefficient kappa: some uses, misuses, and
    alternatives. Educational and Psychological Measurement 41(3), 687–699.

    Examples
    --------
    Gwet's ``cac.raw4raters`` (irrCAC README: AC1 0.77544, se 0.14295, p 0.000208721):

    >>> nan = float("nan")
    >>> raw = [[1, 1, nan, 1], [2, 2, 3, 2], [3, 3, 3, 3], [3, 3, 3, 3], [2, 2, 2, 2],
    ...        [1, 2, 3, 4], [4, 4, 4, 4], [1, 1, 2, 1], [2, 2, 2, 2], [nan, 5, 5, 5],
    ...        [nan, nan, 1, 1], [nan, nan, 3, nan]]
    >>> out = agreement_coefficients(raw, [1, 2, 3, 4, 5], coefficients=["gwet"])
    >>> out[["coefficient", "estimate", "se", "p_value"]].round(5).to_dict("records")
    [{'coefficient': 'gwet_ac1', 'estimate': 0.77544, 'se': 0.14295, 'p_value': 0.00021}]
    """
    unknown = [c for c in coefficients if c not in _CHANCE]
    if unknown:
        raise ValueError(f"coefficient(s) {unknown} unknown; known: {', '.join(COEFFICIENTS)}")
    if not 0 < ci < 1:
        raise ValueError(f"ci must be in (0, 1), got {ci}")
    x, s = _as_codes(ratings, scores)
    w = weight_matrix(s, weights)
    t = _tally(x, s, w)
    rows = [_row(name, t, weights, ci) for name in coefficients]
    return pd.DataFrame(rows, columns=_COLUMNS)


def _row(name: str, t: _Tally, weights: str, ci: float) -> dict[str, Any]:
    n, r, _ = t.onehot.shape
    label = {"gwet": "gwet_ac1" if weights == "identity" else "gwet_ac2",
             "fleiss": "fleiss_kappa", "conger": "conger_kappa"}.get(name, name)
    method = _METHOD[name].format(1 if weights == "identity" else 2)
    low = 0.0 if name == "percent_agreement" else -1.0
    row = {"coefficient": label, "n_items": n, "n_raters": r, "weights": weights,
           "method": f"{method} (Gwet 2014), t-interval on Gwet's variance truncated to "
                     f"[{low:g}, 1]", "note": ""}
    pe, pe_i = _CHANCE[name](t)
    if 1 - pe <= 1e-12:
        warnings.warn(f"{label} undefined: chance agreement is 1 (all ratings in one "
                      "category); reported as NaN", stacklevel=outside_level())
        return row | dict.fromkeys(["estimate", "se", "ci_low", "ci_high", "p_value"], np.nan) | {
            "pa": t.pa, "pe": pe, "note": "undefined: chance agreement is 1"}
    return row | _inference(t, pe, pe_i, ci, low)
