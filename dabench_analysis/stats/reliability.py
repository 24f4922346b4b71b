"""Inter-rater reliability (Table 2 of the judge study): Gwet's AC1/AC2, Fleiss' kappa,
Krippendorff's alpha and Cohen's kappa with their intervals, and annotators aggregated into one
label per item. The Gwet-family coefficients and their variances are in :mod:`.gwet`.
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from dabench_analysis._caller import outside_level
from dabench_analysis.stats import gwet
from dabench_analysis.stats.agreement import _bootstrap

_WEIGHTS = {"identity": "identity", "nominal": "identity", "unweighted": "identity",
            "ordinal": "ordinal", "linear": "linear", "quadratic": "quadratic"}


def aggregate_annotators(ratings: pd.DataFrame, *, rule: str = "majority",
                         pass_threshold: float) -> pd.Series:
    """Human PASS/FAIL reference per item from several annotators' ratings.

    Parameters
    ----------
    ratings : DataFrame
        Items × annotators, numeric ratings (e.g. Likert 1–5 or 0–9 scores); NaN = not rated.
    rule : {"majority", "mean", "median", "unanimous", "any"}
        ``majority``: PASS if more than half of the available ratings are ≥ threshold, FAIL if
        more than half are below, <NA> on a tie. ``mean``/``median``: the statistic of the
        available ratings ≥ threshold. ``unanimous``/``any``: all/any available rating passes.
    pass_threshold : float
        A rating ≥ this counts as PASS, in the units of ``ratings`` (required: no default).

    Returns
    -------
    Series
        ``human_pass`` (pandas ``boolean``), indexed like ``ratings``; <NA> for unrated items
        and majority ties (with a warning).

    Raises
    ------
    ValueError
        Unknown rule or non-numeric ratings.

    Examples
    --------
    >>> r = pd.DataFrame({"a": [5, 2, 4], "b": [4, 1, 2], "c": [1, 2, 5]})
    >>> aggregate_annotators(r, pass_threshold=4).tolist()
    [True, False, True]
    """
    rules = ("majority", "mean", "median", "unanimous", "any")
    if rule not in rules:
        raise ValueError(f"rule {rule!r} unknown; known: {', '.join(rules)}")
    try:
        x = pd.DataFrame(ratings).apply(pd.to_numeric).astype("float64")
    except (TypeError, ValueError) as err:
        raise ValueError(f"ratings must be numeric: {err}") from None
    n = x.notna().sum(axis=1)
    passes = (x >= pass_threshold).sum(axis=1)
    if rule == "majority":
        out = pd.Series(pd.NA, index=x.index, dtype="boolean")
        out[2 * passes > n] = True
        out[2 * (n - passes) > n] = False
    elif rule in ("mean", "median"):
        stat = x.mean(axis=1) if rule == "mean" else x.median(axis=1)
        out = (stat >= pass_threshold).astype("boolean")
    else:
        out = ((passes == n) if rule == "unanimous" else (passes > 0)).astype("boolean")
    out[n == 0] = pd.NA
    if out.isna().any():
        warnings.warn(f"{int(out.isna().sum())} item(s) have no human verdict ({int((n == 0).sum())}"
                      " unrated, the rest majority ties); they are <NA>",
                      stacklevel=outside_level())
    return out.rename("human_pass")


def _prepare_ratings(ratings: Any, categories: Sequence | None) -> tuple[pd.DataFrame, list]:
    frame = pd.DataFrame(ratings)
    if frame.shape[1] < 2:
        raise ValueError(f"ratings must be items x raters with >= 2 rater columns, got "
                         f"{frame.shape[1]}")
    values = [v for v in frame.to_numpy(dtype=object).ravel() if not pd.isna(v)]
    if categories is not None:
        cats = list(categories)
    elif all(isinstance(d, pd.CategoricalDtype) and d.ordered for d in frame.dtypes):
        cats = list(frame.dtypes.iloc[0].categories)
    else:
        cats = sorted(set(values), key=lambda v: (isinstance(v, str), v))
    if len(set(cats)) != len(cats):
        raise ValueError(f"categories must be unique, got {cats}")
    numeric = all(isinstance(c, numbers.Real) and not isinstance(c, bool) for c in cats)
    cats = sorted(cats) if numeric else cats
    scores = [float(c) for c in cats] if numeric else [float(i) for i in range(1, len(cats) + 1)]
    lookup = dict(zip(cats, scores, strict=True))
    unknown = [v for v in values if v not in lookup]
    if unknown:
        raise ValueError(f"rating(s) {unknown[:3]} not among categories {cats}")
    if len(scores) < 2:
        raise ValueError(f"need >= 2 categories, got {cats}; pass categories= with the full scale")
    codes = frame.map(lambda v: np.nan if pd.isna(v) else lookup[v]).astype("float64")
    return codes.dropna(how="all").dropna(axis=1, how="all"), scores


def _gwet_rows(codes: pd.DataFrame, scores: list, weights: str, names: list[str], ci: float,
               base: dict) -> list[dict]:
    # A kappa is undefined when all ratings fall in one category: inter_rater warns once for all.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", ".*undefined: chance agreement is 1", UserWarning)
        out = gwet.agreement_coefficients(codes, scores, weights=weights, ci=ci,
                                          coefficients=names)
    out["note"] = out["note"].where(out["estimate"].notna(), "undefined: all ratings in one "
                                    "category (chance agreement = 1)")
    cols = ["coefficient", "estimate", "se", "ci_low", "ci_high", "weights", "method", "note"]
    return [base | rec for rec in out[cols].to_dict("records")]


def _abs_metric(v1, v2, i1, i2, n_v, dtype=np.float64):  # noqa: ARG001 (krippendorff API)
    return np.abs(v1 - v2).astype(dtype)


def _kripp(arr: np.ndarray, scores: list, weights: str) -> float:
    import krippendorff

    level = {"identity": "nominal", "ordinal": "ordinal", "quadratic": "interval",
             "linear": _abs_metric}[weights]
    with np.errstate(all="ignore"):
        value = float(krippendorff.alpha(arr, value_domain=scores, level_of_measurement=level))
    return value if np.isfinite(value) else np.nan


def _cohen(codes: pd.DataFrame, scores: list, weights: str, ci: float) -> dict:
    from statsmodels.stats.inter_rater import cohens_kappa

    pair = codes.dropna()
    table = pd.crosstab(pair.iloc[:, 0], pair.iloc[:, 1]).reindex(
        index=scores, columns=scores, fill_value=0).to_numpy(float)
    w = None if weights == "identity" else 1 - gwet.weight_matrix(scores, weights)
    with np.errstate(divide="raise", invalid="raise"):
        res = cohens_kappa(table, weights=w)
    half = stats.norm.ppf(0.5 + ci / 2) * res["std_kappa"]
    if not res["std_kappa"] > 0:  # e.g. perfect agreement: not estimable, never zero-width
        return {"estimate": float(res["kappa"]), "se": float(res["std_kappa"]), "ci_low": np.nan,
                "ci_high": np.nan, "n_items": len(pair),
                "note": "zero variance: interval not estimable"}
    return {"estimate": float(res["kappa"]), "se": float(res["std_kappa"]),
            "ci_low": max(-1.0, float(res["kappa"] - half)),
            "ci_high": min(1.0, float(res["kappa"] + half)),
            "n_items": len(pair)}


def inter_rater(ratings: pd.DataFrame, *, weights: str = "ordinal",
                categories: Sequence | None = None, ci: float = 0.95,
                n_resamples: int = 1000, seed: int = 0) -> pd.DataFrame:
    """Inter-rater reliability of an items × raters table, one row per coefficient (Table 2).

    Parameters
    ----------
    ratings : DataFrame
        One row per item, one column per rater; ordinal scores (e.g. Likert 1–5) or category
        labels; NaN/None = not rated (missing ratings allowed).
    weights : {"ordinal", "linear", "quadratic", "identity"}
        Disagreement weights of the weighted coefficients ("nominal"/"unweighted" = identity).
    categories : sequence, optional
        The full scale, e.g. ``[1, 2, 3, 4, 5]``. Default: the observed values (an ordered
        Categorical's categories). Gwet's chance agreement depends on the number of categories,
        so pass the scale. Labels are weighted by position, numbers by value.
    ci : float in [0.90, 0.99]
        Confidence level (the range Gwet's irrCAC allows).
    n_resamples, seed : int
        Bootstrap resamples and seed for Krippendorff's alpha interval.

    Returns
    -------
    DataFrame
        Rows ``percent_agreement``, ``gwet_ac1``, ``gwet_ac2`` (not for identity weights),
        ``fleiss_kappa``, ``krippendorff_alpha`` and ``cohens_kappa`` (2 raters) or
        ``conger_kappa`` (> 2 raters); columns ``coefficient, estimate, se, ci_low, ci_high,
        n_items, n_raters, weights, method, note`` (``n_items``: items the coefficient used).

    Raises
    ------
    ValueError
        Fewer than 2 raters, 2 categories or 2 items rated twice; unknown weights; ratings
        outside ``categories``; ``ci`` outside [0.90, 0.99].

    Notes
    -----
    Percent agreement (unweighted, over the items with ≥ 2 ratings), AC1/AC2, generalised
    Fleiss and Conger: :func:`dabench_analysis.stats.gwet.agreement_coefficients` (Gwet 2014,
    formulas of Gwet's R irrCAC), t-intervals on Gwet's variance (df = items − 1, upper bound
    capped at 1); AC1/AC2 use every rated item for the category prevalences. Krippendorff's alpha: ``krippendorff`` package (ordinal
    metric for "ordinal", interval for "quadratic", abs(a − b) for "linear"), percentile bootstrap
    over items. Cohen: statsmodels ``cohens_kappa`` with 1 − Gwet weights, Wald interval.
    If all ratings fall in one category, kappa-type coefficients and alpha are 0/0: NaN, note,
    warning; AC1/AC2 and percent agreement are 1. Checked against irrCAC's README (raw4raters:
    estimates, SEs, intervals), Krippendorff (2011), the SAS kappa example and the Wikipedia
    Fleiss example.

    References
    ----------
    Gwet, K. L. (2014). Handbook of Inter-Rater Reliability, 4th ed. Advanced Analytics.
    Krippendorff, K. (2011). Computing Krippendorff's Alpha-Reliability. Annenberg School.
    Fleiss, J. L. (1971). Psychological Bulletin 76(5), 378–382.
    Cohen, J. (1968). Psychological Bulletin 70(4), 213–220.

    Examples
    --------
    >>> r = pd.DataFrame({"a": [1, 2, 3, 3, 5, 4], "b": [1, 2, 3, 4, 5, 4], "c": [2, 2, 3, 3, 5, 4]})
    >>> out = inter_rater(r, categories=[1, 2, 3, 4, 5], n_resamples=200)
    >>> out["coefficient"].tolist()
    ['percent_agreement', 'gwet_ac1', 'gwet_ac2', 'fleiss_kappa', 'krippendorff_alpha', 'conger_kappa']
    >>> float(round(out.set_index("coefficient").loc["gwet_ac2", "estimate"], 4))
    0.9245
    """
    if weights not in _WEIGHTS:
        raise ValueError(f"weights {weights!r} unknown; known: {', '.join(_WEIGHTS)}")
    if not 0.90 <= ci <= 0.99:
        raise ValueError(f"ci must be in [0.90, 0.99] (as Gwet's irrCAC), got {ci}")
    w = _WEIGHTS[weights]
    codes, scores = _prepare_ratings(ratings, categories)
    rated = codes.notna().sum(axis=1)
    if (rated >= 2).sum() < 2:
        raise ValueError("need at least 2 items rated by at least 2 raters")
    one_cat = len(np.unique(codes.to_numpy()[~np.isnan(codes.to_numpy())])) == 1
    r = codes.shape[1]
    base = {"n_items": len(codes), "n_raters": r, "note": ""}
    rows = _gwet_rows(codes[rated >= 2], scores, "identity", ["percent_agreement"], ci,
                      base | {"n_items": int((rated >= 2).sum())})
    rows[0]["method"] = "percent agreement over items rated >= 2 times (Gwet 2014), " \
                        "t-interval on Gwet's variance truncated to [0, 1]"
    rows += _gwet_rows(codes, scores, "identity", ["gwet"], ci, base)
    rows += _gwet_rows(codes, scores, w, (["gwet"] if w != "identity" else []) + ["fleiss"]
                       + (["conger"] if r > 2 else []), ci, base)
    rows.insert(len(rows) - (r > 2), _alpha_row(codes, scores, w, ci, n_resamples, seed, base,
                                                one_cat))
    if r == 2:
        row = base | {"coefficient": "cohens_kappa", "weights": w,
                      "method": "statsmodels cohens_kappa, Wald interval truncated to [-1, 1]"}
        rows.append(row | (_nan_row("all ratings in one category (chance agreement = 1)")
                           if one_cat else _cohen(codes, scores, w, ci)))
    cols = ["coefficient", "estimate", "se", "ci_low", "ci_high", "n_items", "n_raters",
            "weights", "method", "note"]
    out = pd.DataFrame(rows)[cols]
    undefined = out.loc[out["estimate"].isna(), "coefficient"].tolist()
    if undefined:
        warnings.warn(f"inter_rater: {', '.join(undefined)} undefined: all ratings fall in one "
                      "category; reported as NaN", stacklevel=outside_level())
    return out


def _nan_row(reason: str) -> dict:
    return {"estimate": np.nan, "se": np.nan, "ci_low": np.nan, "ci_high": np.nan,
            "note": f"undefined: {reason}"}


def _alpha_row(codes, scores, w, ci, n_resamples, seed, base, one_cat) -> dict:
    level = {"identity": "nominal", "ordinal": "ordinal", "quadratic": "interval",
             "linear": "|a-b|"}[w]
    row = base | {"coefficient": "krippendorff_alpha", "weights": w, "n_items": int(
        (codes.notna().sum(axis=1) >= 2).sum()), "method": f"krippendorff package ({level} "
        f"metric), percentile bootstrap over items (B={n_resamples}, seed={seed})"}
    if one_cat:
        return row | _nan_row("all ratings in one category (expected disagreement = 0)")
    arr = codes.to_numpy().T
    res = _bootstrap((np.arange(arr.shape[1]),), lambda i: _kripp(arr[:, i], scores, w), ci,
                     n_resamples, seed, vectorized=False)
    n_nan = int(np.isnan(res.bootstrap_distribution).sum())
    note = f"CI undefined: {n_nan} of {n_resamples} resamples undefined" if n_nan else ""
    return row | {"estimate": _kripp(arr, scores, w), "se": float(res.standard_error),
                  "ci_low": float(res.confidence_interval.low),
                  "ci_high": float(res.confidence_interval.high), "note": note}
