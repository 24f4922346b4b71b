"""Private helpers behind :mod:`dabench_analysis.stats`, ``calibration`` and ``ablation``.

Input coercion (flags, scores), small interval formulas, the signed-rank and Mann–Whitney engines
(thin policy layers over scipy) and effect sizes. Public functions check input, call these and
assemble tidy frames; helpers return notes instead of warning, so the public function can warn
once with the right ``stacklevel``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
from scipy import special
from scipy import stats as st
from statsmodels.stats.proportion import proportion_confint


class StatisticsWarning(UserWarning):
    """Degenerate or incomplete input: rows dropped, a test not defined, an interval of width 0."""


_TRUE = {"true", "t", "1", "1.0", "yes", "y"}
_FALSE = {"false", "f", "0", "0.0", "no", "n"}


def warn(notes: Sequence[str], stacklevel: int = 3) -> None:
    """Emit one :class:`StatisticsWarning` joining ``notes`` (nothing if empty)."""
    notes = [n for n in notes if n]
    if notes:
        warnings.warn("; ".join(notes), StatisticsWarning, stacklevel=stacklevel)


def check_columns(frame: pd.DataFrame, columns: Sequence[str], what: str = "tasks") -> None:
    """Raise ValueError naming every missing column and the known ones (TypeError for a
    non-DataFrame). The one column check of the package (``tables.require_columns``)."""
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"{what} must be a pandas DataFrame, got {type(frame).__name__}")
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        known = ", ".join(map(str, frame.columns[:30])) + (", …" if frame.shape[1] > 30 else "")
        noun = "column" if len(missing) == 1 else "columns"
        raise ValueError(f"{noun} {', '.join(repr(m) for m in missing)} not in {what}; "
                         f"known: {known}")


def as_bool(values, name: str = "values") -> pd.Series:
    """Coerce a flag to pandas ``boolean`` (True/False/<NA>).

    Accepts bool, ``boolean``, 0/1 numbers (NaN -> <NA>) and the strings true/false/1/0/yes/no.
    Anything else raises ValueError naming the column and the offending values.
    """
    s = values if isinstance(values, pd.Series) else pd.Series(values)
    if isinstance(s.dtype, pd.BooleanDtype):
        return s
    if pd.api.types.is_bool_dtype(s.dtype):
        return s.astype("boolean")
    if pd.api.types.is_numeric_dtype(s.dtype):
        x = s.astype("float64")
        bad = x.notna() & ~x.isin([0.0, 1.0])
        if bad.any():
            raise ValueError(f"flag {name!r} has values other than 0/1: "
                             f"{sorted(set(x[bad].tolist()))[:5]}")
        return x.map(lambda v: pd.NA if np.isnan(v) else bool(v)).astype("boolean")

    def conv(v):
        if v is None or v is pd.NA or (isinstance(v, float) and np.isnan(v)):
            return pd.NA
        if isinstance(v, bool | np.bool_):
            return bool(v)
        t = str(v).strip().lower()
        if t in _TRUE:
            return True
        if t in _FALSE:
            return False
        if t in {"", "nan", "na", "<na>", "none"}:
            return pd.NA
        raise ValueError(f"flag {name!r} has a value that is not a boolean: {v!r}")

    return s.map(conv).astype("boolean")


def as_float(values, name: str = "values") -> pd.Series:
    """Coerce a score to float64 with NaN for missing (flags become 1.0/0.0)."""
    s = values if isinstance(values, pd.Series) else pd.Series(values)
    if pd.api.types.is_bool_dtype(s.dtype):
        s = s.astype("boolean")
    elif not pd.api.types.is_numeric_dtype(s.dtype):
        try:
            s = as_bool(s, name)
        except ValueError:
            try:
                s = pd.to_numeric(s, errors="raise")
            except (TypeError, ValueError):
                raise ValueError(f"column {name!r} is not numeric (dtype {s.dtype})") from None
    return pd.Series(s.to_numpy(dtype="float64", na_value=np.nan), index=s.index, name=s.name)


def t_summary(x: np.ndarray, ci: float = 0.95) -> dict:
    """n, mean, std (ddof=1), sem and the t-interval of the mean, guarded for n < 2."""
    x = np.asarray(x, dtype=float)
    x = x[~np.isnan(x)]
    n = x.size
    out = {"n": n, "mean": np.nan, "std": np.nan, "sem": np.nan, "ci_low": np.nan,
           "ci_high": np.nan}
    if n == 0:
        return out
    out["mean"] = float(x.mean())
    if n < 2:
        return out
    sd = float(x.std(ddof=1))
    sem = sd / np.sqrt(n)
    half = st.t.ppf(0.5 + ci / 2, n - 1) * sem
    out.update(std=sd, sem=sem, ci_low=out["mean"] - half, ci_high=out["mean"] + half)
    return out


def check_ci(ci: float) -> None:
    if not (isinstance(ci, float | int) and 0 < ci < 1):
        raise ValueError(f"ci must be a confidence level in (0, 1), got {ci!r}")


def proportion_interval(k: int, n: int, ci: float = 0.95, method: str = "wilson"):
    """(low, high) for k successes in n; NaN for n = 0. ``wilson_cc`` is Newcombe's method 4."""
    if n == 0:
        return np.nan, np.nan
    if method == "wilson_cc":
        return _wilson_cc(k, n, ci)
    sm = {"wilson": "wilson", "clopper-pearson": "beta", "beta": "beta", "exact": "beta",
          "agresti-coull": "agresti_coull", "jeffreys": "jeffreys", "wald": "normal"}
    lo, hi = proportion_confint(k, n, alpha=1 - ci, method=sm[method])
    return float(np.clip(lo, 0, 1)), float(np.clip(hi, 0, 1))


PROPORTION_METHODS = ("wilson", "wilson_cc", "clopper-pearson", "beta", "exact",
                      "agresti-coull", "jeffreys", "wald")


def _wilson_cc(k: int, n: int, ci: float):
    # Newcombe (1998), method 4; equals R prop.test(k, n, correct = TRUE)$conf.int.
    z = st.norm.ppf(0.5 + ci / 2)
    p = k / n
    lo = 0.0 if k == 0 else (2 * n * p + z**2 - 1 - z * np.sqrt(
        z**2 - 2 - 1 / n + 4 * p * (n * (1 - p) + 1))) / (2 * (n + z**2))
    hi = 1.0 if k == n else (2 * n * p + z**2 + 1 + z * np.sqrt(
        z**2 + 2 - 1 / n + 4 * p * (n * (1 - p) - 1))) / (2 * (n + z**2))
    return float(max(lo, 0.0)), float(min(hi, 1.0))


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


def signed_rank(d: np.ndarray, *, zero_method: str = "wilcox", correction: bool = True,
                alternative: str = "two-sided", method: str = "auto",
                decimals: int | None = None) -> dict:
    """Wilcoxon signed-rank test of differences ``d`` (no NaN) with an R-like policy.

    ``method="auto"``: exact null distribution only when there are no zeros, no ties among |d|
    and fewer than 50 non-zero differences (R's rule), else the normal approximation with tie
    correction (and continuity correction when ``correction``). ``method="exact"`` falls back to the
    approximation with a note when ties or zeros make the exact distribution invalid. Statistic is
    T+ (R's V). p = 1.0 when no difference is non-zero.
    """
    if zero_method not in ("wilcox", "pratt", "zsplit"):
        raise ValueError(f"zero_method must be 'wilcox', 'pratt' or 'zsplit', got {zero_method!r}")
    if method not in ("auto", "exact", "approx"):
        raise ValueError(f"method must be 'auto', 'exact' or 'approx', got {method!r}")
    if alternative not in ("two-sided", "less", "greater"):
        raise ValueError(f"alternative must be 'two-sided', 'less' or 'greater', got {alternative!r}")
    d = np.asarray(d, dtype=float)
    if decimals is not None:
        d = np.round(d, decimals)
    nz = d[d != 0]
    n_nonzero, n_zero = nz.size, d.size - nz.size
    out = {"n_nonzero": n_nonzero, "statistic": np.nan, "p_value": np.nan,
           "rank_biserial": np.nan, "wilcoxon_method": "", "note": ""}
    if d.size == 0:
        out.update(wilcoxon_method="not testable (0 pairs)", note="no complete pairs")
        return out
    r = st.rankdata(np.abs(nz))
    t_plus, t_minus = float(r[nz > 0].sum()), float(r[nz < 0].sum())
    out["rank_biserial"] = (t_plus - t_minus) / (t_plus + t_minus) if n_nonzero else np.nan
    if zero_method == "wilcox":
        out["statistic"] = t_plus
    else:
        ra = st.rankdata(np.abs(d))
        out["statistic"] = float(ra[d > 0].sum() + (ra[d == 0].sum() / 2 if
                                                      zero_method == "zsplit" else 0))
    if n_nonzero == 0:
        out.update(p_value=1.0, wilcoxon_method="not testable (0 non-zero differences)",
                   note=f"all {d.size} paired differences are zero: no evidence of a "
                        "difference, p set to 1.0")
        return out
    ties = np.unique(np.abs(nz)).size < n_nonzero
    exact_ok = n_zero == 0 and not ties
    use_exact = exact_ok and n_nonzero < 50 if method == "auto" else method == "exact" and exact_ok
    if method == "exact" and not exact_ok:
        out["note"] = "exact p not available with ties or zeros; normal approximation used"
    if use_exact:
        res = st.wilcoxon(nz, method="exact", alternative=alternative)
        out["wilcoxon_method"] = "exact"
    else:
        res = st.wilcoxon(d, zero_method=zero_method, correction=correction, method="approx",
                          alternative=alternative)
        out["wilcoxon_method"] = ("normal approximation, tie-corrected"
                                  + (", continuity-corrected" if correction else ""))
    out["p_value"] = float(min(1.0, res.pvalue))
    return out


def mann_whitney(x: np.ndarray, y: np.ndarray, *, alternative: str = "two-sided",
                 method: str = "auto", correction: bool = True) -> dict:
    """Mann–Whitney U of x vs y with R's policy (exact if both n < 50 and no ties).

    Statistic is U_x (R's W). All values equal -> p = 1.0 (scipy; R gives NaN). An empty side
    -> NaN (untestable).
    """
    if alternative not in ("two-sided", "less", "greater"):
        raise ValueError(f"alternative must be 'two-sided', 'less' or 'greater', got {alternative!r}")
    if method not in ("auto", "exact", "asymptotic"):
        raise ValueError(f"method must be 'auto', 'exact' or 'asymptotic', got {method!r}")
    nx, ny = x.size, y.size
    out = {"statistic": np.nan, "p_value": np.nan, "rank_biserial": np.nan, "cles": np.nan,
           "mwu_method": "", "note": ""}
    if nx == 0 or ny == 0:
        out.update(mwu_method="not testable (empty group)",
                   note=f"Mann-Whitney not testable: group sizes {nx} and {ny}")
        return out
    both = np.concatenate([x, y])
    u_x = float(st.rankdata(both)[:nx].sum() - nx * (nx + 1) / 2)
    out["statistic"] = u_x
    out["cles"] = u_x / (nx * ny)
    out["rank_biserial"] = 2 * u_x / (nx * ny) - 1
    if np.all(both == both[0]):
        out.update(p_value=1.0, mwu_method="not testable (all values equal)",
                   note="all values are equal: no evidence of a difference, p set to 1.0")
        return out
    ties = np.unique(both).size < both.size
    exact_ok = not ties
    use_exact = (exact_ok and nx < 50 and ny < 50) if method == "auto" else \
        (method == "exact" and exact_ok)
    if method == "exact" and not exact_ok:
        out["note"] = "exact p not available with ties; normal approximation used"
    kind = "exact" if use_exact else "asymptotic"
    res = st.mannwhitneyu(x, y, alternative=alternative, method=kind, use_continuity=correction)
    out["p_value"] = float(min(1.0, res.pvalue))
    out["mwu_method"] = "exact" if use_exact else (
        "normal approximation, tie-corrected" + (", continuity-corrected" if correction else ""))
    return out


def welch_interval(x: np.ndarray, y: np.ndarray, ci: float = 0.95) -> tuple[float, float]:
    """Welch t-interval of mean(x) - mean(y); NaN when a side has n < 2 or both SDs are 0."""
    nx, ny = x.size, y.size
    if nx < 2 or ny < 2:
        return np.nan, np.nan
    vx, vy = x.var(ddof=1) / nx, y.var(ddof=1) / ny
    diff = float(x.mean() - y.mean())
    se = np.sqrt(vx + vy)
    if se == 0:
        return diff, diff
    df = (vx + vy) ** 2 / (vx**2 / (nx - 1) + vy**2 / (ny - 1))
    half = st.t.ppf(0.5 + ci / 2, df) * se
    return diff - half, diff + half


def pair_runs(baseline, proposed, metric: str, on: str, convert: Callable):
    """Align two runs on ``on``; return (frame with baseline/proposed, counts, notes)."""
    notes = []
    if isinstance(baseline, pd.DataFrame) or isinstance(proposed, pd.DataFrame):
        for name, fr in (("baseline", baseline), ("proposed", proposed)):
            check_columns(fr, [on, metric], name)
            dup = fr[on][fr[on].duplicated()]
            if len(dup):
                raise ValueError(f"{on!r} is not unique in {name}: {dup.iloc[0]!r} repeats "
                                 f"({len(dup)} duplicate rows)")
        b = pd.Series(convert(baseline[metric], metric).to_numpy(), index=baseline[on].to_numpy())
        p = pd.Series(convert(proposed[metric], metric).to_numpy(), index=proposed[on].to_numpy())
    elif isinstance(baseline, pd.Series) and isinstance(proposed, pd.Series):
        b, p = convert(baseline, "baseline"), convert(proposed, "proposed")
        for name, ser in (("baseline", b), ("proposed", p)):
            if ser.index.has_duplicates:
                raise ValueError(f"the index of {name} is not unique; pairing two Series needs "
                                 "one entry per task")
    else:
        b, p = convert(baseline, "baseline"), convert(proposed, "proposed")
        if len(b) != len(p):
            raise ValueError(f"paired samples differ in length: {len(b)} vs {len(p)}; pass task "
                             f"frames with an {on!r} column to pair by task")
        b.index = p.index = pd.RangeIndex(len(b))
    common = b.index.intersection(p.index, sort=False)
    n_unpaired = int(len(b.index.difference(common)) + len(p.index.difference(common)))
    pairs = pd.DataFrame({"baseline": b.loc[common], "proposed": p.loc[common]})
    incomplete = pairs.isna().any(axis=1)
    counts = {"n_pairs": int((~incomplete).sum()), "n_unpaired": n_unpaired,
              "n_dropped_na": int(incomplete.sum())}
    if n_unpaired:
        notes.append(f"{n_unpaired} tasks present in only one run were not paired")
    if incomplete.any():
        notes.append(f"{int(incomplete.sum())} pairs dropped: {metric} missing in either run")
    return pairs[~incomplete], counts, notes
