"""Effect sizes: Cohen's d / d_z, Hedges' g, rank-biserial correlation, Cliff's delta, and their
conventional magnitude labels.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import special

from dabench_analysis.stats._inputs import as_float, warn
from dabench_analysis.stats._nonparametric import mann_whitney, signed_rank


def magnitude_d(d: float) -> str:
    """Cohen (1988) labels for a standardized mean difference; NaN -> "undefined"."""
    if d is None or not np.isfinite(d):
        return "undefined"
    a = abs(d)
    return "negligible" if a < 0.2 else "small" if a < 0.5 else "medium" if a < 0.8 else "large"


def magnitude_delta(delta: float) -> str:
    """Romano et al. (2006) labels for Cliff's delta / rank-biserial; NaN -> "undefined"."""
    if delta is None or not np.isfinite(delta):
        return "undefined"
    a = abs(delta)
    return ("negligible" if a < 0.147 else "small" if a < 0.33 else "medium" if a < 0.474
            else "large")


def hedges_j(df: float, kind: str = "approx") -> float:
    """Small-sample correction J: ``approx`` 1 - 3/(4 df - 1), ``exact`` the gamma-function form."""
    if df <= 1:
        return np.nan
    if kind == "exact":
        return float(np.exp(special.gammaln(df / 2) - np.log(np.sqrt(df / 2))
                            - special.gammaln((df - 1) / 2)))
    if kind != "approx":
        raise ValueError(f"hedges_correction must be 'approx' or 'exact', got {kind!r}")
    return 1 - 3 / (4 * df - 1)


def _sign_word(diff: float) -> str:
    if not np.isfinite(diff) or diff == 0:
        return "no difference in means"
    return "difference positive" if diff > 0 else "difference negative"


def standardized_effects(x: np.ndarray, y: np.ndarray, *, paired: bool,
                         hedges_correction: str = "approx") -> tuple[dict, list[str]]:
    """Cohen's d (pooled SD), Hedges' g and (paired) d_z of ``x - y``; NaN when undefined.

    Pooled SD uses (n - 1) weights: sqrt(((nx-1)sx² + (ny-1)sy²)/(nx+ny-2)); for equal n this is
    the seed's sqrt((sx² + sy²)/2). J uses df = nx + ny - 2 (pingouin, Lakens 2013).
    """
    nx, ny = x.size, y.size
    out = {"cohens_d": np.nan, "hedges_g": np.nan, "cohens_d_z": np.nan}
    notes: list[str] = []
    if nx < 2 or ny < 2:
        notes.append(f"effect sizes undefined: insufficient n ({nx} and {ny}; need >= 2 per side)")
        return out, notes
    diff = float(x.mean() - y.mean())
    sx2, sy2 = float(x.var(ddof=1)), float(y.var(ddof=1))
    pooled = np.sqrt(((nx - 1) * sx2 + (ny - 1) * sy2) / (nx + ny - 2))
    if pooled > 0:
        out["cohens_d"] = diff / pooled
        out["hedges_g"] = out["cohens_d"] * hedges_j(nx + ny - 2, hedges_correction)
    else:
        notes.append(f"cohens_d undefined: zero variance in both groups ({_sign_word(diff)})")
    if paired:
        d = x - y
        sd = float(d.std(ddof=1))
        if sd > 0:
            out["cohens_d_z"] = float(d.mean()) / sd
        elif np.all(d == 0):
            notes.append("cohens_d_z undefined: all paired differences are zero")
        else:
            notes.append(f"cohens_d_z undefined: zero variance of the paired differences "
                         f"(every difference = {d[0]:g})")
    return out, notes


def effect_sizes(x, y, *, paired: bool = False,
                 hedges_correction: str = "approx") -> pd.DataFrame:
    """Standardized and rank effect sizes of ``x`` relative to ``y`` (positive: x larger).

    Parameters
    ----------
    x, y : array-like of float
        Two samples (equal length and position-paired when ``paired``). NaN is dropped
        (pairwise when paired); so is ±inf, with a warning naming how many.
    paired : bool
        Adds ``cohens_d_z`` and uses the matched-pairs rank-biserial.
    hedges_correction : {"approx", "exact"}
        J = 1 − 3/(4(nx+ny) − 9) (Hedges & Olkin; pingouin, Lakens 2013), or the exact
        gamma-function J (R ``effectsize``). They differ by < 1e-3 for n >= 10.

    Returns
    -------
    DataFrame
        One row: ``n_x``, ``n_y``, ``mean_diff``, ``cohens_d``, ``hedges_g``, ``cohens_d_z``
        (NaN unless paired), ``rank_biserial``, ``cles`` (unpaired: P(X>Y) + ½P(X=Y)),
        ``magnitude`` (Cohen 1988 label of d_z when paired, else of d), ``note``.

    Raises
    ------
    ValueError
        Paired samples of different length, unknown ``hedges_correction``.

    Notes
    -----
    d = (x̄ − ȳ)/s_p with s_p² = ((nx−1)s_x² + (ny−1)s_y²)/(nx+ny−2); for equal n this is the
    seed's sqrt((s_x² + s_y²)/2). d_z = mean(x − y)/sd(x − y) (Lakens 2013). Zero variance or
    n < 2 gives NaN (never inf) with a note and magnitude "undefined". Note that pingouin's paired
    ``eftype="cohen"`` is this pooled d, not d_z.

    References
    ----------
    Lakens, D. (2013). Calculating and reporting effect sizes to facilitate cumulative science.
    Frontiers in Psychology 4:863. doi:10.3389/fpsyg.2013.00863.
    Cohen, J. (1988). Statistical Power Analysis for the Behavioral Sciences (2nd ed.). Erlbaum.

    Examples
    --------
    >>> x = [9, 7, 8, 9, 8, 9, 9, 10, 9, 9]
    >>> y = [9, 6, 7, 8, 7, 9, 8, 8, 8, 7]
    >>> round(float(effect_sizes(x, y).loc[0, "cohens_d"]), 4)  # Lakens (2013): d_s = 1.13
    1.1259
    """
    xs, ys = as_float(x, "x").to_numpy(), as_float(y, "y").to_numpy()
    n_inf = int(np.isinf(xs).sum() + np.isinf(ys).sum())
    if paired:
        if xs.size != ys.size:
            raise ValueError(f"paired samples differ in length: {xs.size} vs {ys.size}")
        keep = np.isfinite(xs) & np.isfinite(ys)
        xs, ys = xs[keep], ys[keep]
    else:
        xs, ys = xs[np.isfinite(xs)], ys[np.isfinite(ys)]
    eff, notes = standardized_effects(xs, ys, paired=paired, hedges_correction=hedges_correction)
    if n_inf:
        notes.insert(0, f"{n_inf} infinite value{'s' if n_inf != 1 else ''} dropped "
                        f"({'pairwise' if paired else 'per sample'})")
    if paired:
        rb = signed_rank(xs - ys)["rank_biserial"] if xs.size else np.nan
        cles = np.nan
    else:
        mw = mann_whitney(xs, ys)
        rb, cles = mw["rank_biserial"], mw["cles"]
    diff = float(xs.mean() - ys.mean()) if xs.size and ys.size else np.nan
    row = {"n_x": xs.size, "n_y": ys.size, "mean_diff": diff, **eff, "rank_biserial": rb,
           "cles": cles, "magnitude": magnitude_d(eff["cohens_d_z" if paired else "cohens_d"]),
           "note": "; ".join(notes)}
    warn(notes)
    return pd.DataFrame([row])
