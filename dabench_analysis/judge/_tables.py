"""Judge configurations compared (seed 004, Table 3): MCC, P/R/F1 and tokens per configuration,
with relative changes against a reference configuration.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd

from dabench_analysis._caller import outside_level
from dabench_analysis.schema import require_columns
from dabench_analysis.stats._inputs import as_bool, check_ci
from dabench_analysis.stats.agreement import judge_agreement


def configuration_table(cases: pd.DataFrame, *, by: str = "configuration",
                        reference: Any = None, judge: str = "judge_pass",
                        human: str = "human_pass", tokens: str | None = "tokens",
                        ci: float = 0.95, n_resamples: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Judge configurations compared on agreement with humans and cost (seed 004, Table 3).

    Parameters
    ----------
    cases : DataFrame
        One row per (test case, configuration) with columns ``by``, ``judge``, ``human``
        (booleans) and ``tokens`` (tokens per test case). Rows with a missing verdict are
        dropped with a warning.
    by : str
        Column naming the judge configuration.
    reference : scalar, optional
        Configuration the relative changes are taken against (default: the first one).
    judge, human, tokens : str
        Column names; ``tokens=None`` leaves ``tokens_mean`` NaN.
    ci, n_resamples, seed
        Bootstrap settings as in :func:`judge_agreement` (interval for MCC).

    Returns
    -------
    DataFrame
        One row per configuration (order of appearance): ``by, n, tp, fp, fn, tn, mcc,
        mcc_ci_low, mcc_ci_high, precision, recall, f1, tokens_mean`` and
        ``<metric>_rel_change`` = (x − x_ref)/abs(x_ref) for mcc, precision, recall, f1 and
        tokens_mean (NaN if the reference value is 0 or undefined), and ``reference`` (the
        configuration they are taken against, in every row; a reader's table names it in its
        note).

    Raises
    ------
    ValueError
        Missing columns or an unknown ``reference``.

    Notes
    -----
    The paper reports +29 % MCC (0.427 vs 0.331) and −16 % tokens (24.6k vs 29.2k) against
    the natural-language baseline; abs(x_ref) keeps the sign meaningful for a negative MCC.
    ``tokens_mean`` is over the rows used for agreement.

    Examples
    --------
    >>> c = pd.DataFrame({"configuration": ["a"] * 4 + ["b"] * 4,
    ...                   "judge_pass": [1, 1, 0, 0, 1, 0, 0, 1], "human_pass": [1, 0, 0, 1] * 2,
    ...                   "tokens": [10, 10, 10, 10, 5, 5, 5, 5]})
    >>> configuration_table(c, reference="a", n_resamples=100)[["mcc", "tokens_mean_rel_change"]]
       mcc  tokens_mean_rel_change
    0  0.0                     0.0
    1  1.0                    -0.5
    """
    needed = [c for c in (by, judge, human, tokens) if c is not None]
    require_columns(cases, needed, "cases")
    rows, dropped = [], 0
    for name, g in cases.groupby(by, sort=False, observed=True):
        j, h = as_bool(g[judge], judge), as_bool(g[human], human)
        keep = (j.notna() & h.notna()).to_numpy()
        dropped += int((~keep).sum())
        a = _quiet_agreement(j[keep].to_numpy(bool), h[keep].to_numpy(bool), ci=ci,
                             n_resamples=n_resamples, seed=seed).set_index("metric")
        tok = pd.to_numeric(g.loc[keep, tokens]).mean() if tokens else np.nan
        rows.append({by: name, **a.loc["mcc", ["n", "tp", "fp", "fn", "tn"]].to_dict(),
                     "mcc": a.at["mcc", "estimate"], "mcc_ci_low": a.at["mcc", "ci_low"],
                     "mcc_ci_high": a.at["mcc", "ci_high"],
                     **{k: a.at[k, "estimate"] for k in ("precision", "recall", "f1")},
                     "tokens_mean": float(tok)})
    if dropped:
        warnings.warn(f"{dropped} row(s) with a missing judge or human verdict were dropped",
                      stacklevel=outside_level())
    table = pd.DataFrame(rows)
    names = table[by].tolist()
    reference = names[0] if reference is None else reference
    if reference not in names:
        raise ValueError(f"reference {reference!r} not in {by}; known: {', '.join(map(str, names))}")
    ref = table.loc[names.index(reference)]
    for col in ("mcc", "precision", "recall", "f1", "tokens_mean"):
        base = abs(ref[col]) if np.isfinite(ref[col]) and ref[col] != 0 else np.nan
        table[f"{col}_rel_change"] = (table[col] - ref[col]) / base
    table["reference"] = reference
    undefined = table.loc[table[["mcc", "precision", "recall", "f1"]].isna().any(axis=1), by]
    if len(undefined):
        warnings.warn(f"configuration_table: a metric is undefined (0/0) for "
                      f"{', '.join(map(str, undefined))}; reported as NaN",
                      stacklevel=outside_level())
    return table


def _quiet_agreement(j, h, **kwargs) -> pd.DataFrame:
    """:func:`judge_agreement` without its undefined-metric warning (the table carries the note)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return judge_agreement(j, h, **kwargs)


#: Fewest labelled and unlabelled cases for which the PPI intervals are given without a warning.
MIN_SIDE = 10


def _budget(h: pd.Series, n_labelled: int | None, seed: int) -> pd.Series:
    """Human labels kept: all, or a seeded random ``n_labelled`` of them (the others unlabelled)."""
    known = np.flatnonzero(h.notna().to_numpy())
    if n_labelled is None:
        return h
    if not 2 <= n_labelled <= len(known):
        raise ValueError(f"n_labelled={n_labelled}: between 2 and the {len(known)} labelled cases")
    keep = np.random.default_rng(seed).choice(known, size=n_labelled, replace=False)
    out = pd.Series(pd.NA, index=h.index, dtype="boolean")
    out.iloc[keep] = h.iloc[keep]
    return out


def _corrected(j: pd.Series, h: pd.Series, ci: float) -> list[dict]:
    from dabench_analysis.judge._ppi import ppi_mean
    from dabench_analysis.stats import proportion_ci
    lab = h.notna().to_numpy()
    y, yh = h[lab].to_numpy(float), j[lab].to_numpy(float)
    yu = j[~lab].to_numpy(float)
    n, N = len(y), len(yu)
    rows = []
    for name, k, m, how in (("judge_only", int(j.sum()), len(j), "Wilson on the judge's "
                             "verdicts of every case (the judge's pass rate, uncorrected)"),
                            ("human_only", int(y.sum()), n, "Wilson on the human labels")):
        w = proportion_ci(k, m, ci=ci).iloc[0] if m else {"ci_low": np.nan, "ci_high": np.nan}
        rows.append({"estimator": name, "estimate": k / m if m else np.nan,
                     "ci_low": float(w["ci_low"]), "ci_high": float(w["ci_high"]),
                     "lam": np.nan, "method": how})
    if 2 <= min(n, N) < MIN_SIDE:
        warnings.warn(f"judge-corrected accuracy: {n} labelled and {N} unlabelled case(s); the "
                      f"PPI intervals are CLT intervals and need more (>= {MIN_SIDE} each)",
                      stacklevel=outside_level())
    for name, lam in (("ppi", 1.0), ("ppi_plus_plus", None)):
        if n >= 2 and N >= 1:
            p = ppi_mean(y, yh, yu, lam=lam, ci=ci).iloc[0]
            rows.append({"estimator": name, **p[["estimate", "ci_low", "ci_high", "lam",
                                                  "method"]].to_dict()})
        else:
            rows.append({"estimator": name, "estimate": np.nan, "ci_low": np.nan,
                         "ci_high": np.nan, "lam": np.nan, "method": "undefined: needs >= 2 "
                         "labelled and >= 1 unlabelled case"})
    return [r | {"n_labelled": n, "n_unlabelled": N} for r in rows]


def judge_corrected_accuracy(cases: pd.DataFrame, *, judge: str = "judge_pass",
                             human: str = "human_pass", by: str | None = None,
                             n_labelled: int | None = None, ci: float = 0.95,
                             seed: int = 0) -> pd.DataFrame:
    """Accuracy measured by an LLM judge, corrected with a subset of human labels
    (prediction-powered inference), beside the judge-only and human-only estimates.

    Parameters
    ----------
    cases : DataFrame
        One row per case (per case and configuration with ``by``): ``judge`` (the judge's
        verdict, bool or 0/1, on every case) and ``human`` (the human verdict; missing where
        the case was not labelled). Rows without a judge verdict are dropped with a warning.
    judge, human : str
        Column names.
    by : str, optional
        Column naming the judge configuration: one block of rows per value.
    n_labelled : int, optional
        Keep the human labels of only this many labelled cases (a seeded random subset, the
        rest treated as unlabelled): what a smaller labelling budget would give. Default: all.
    ci : float
        Level of every interval.
    seed : int
        Seed of the ``n_labelled`` subset.

    Returns
    -------
    DataFrame
        Four rows (per ``by`` value, ``by`` first): ``estimator`` = ``judge_only``,
        ``human_only``, ``ppi``, ``ppi_plus_plus``; ``estimate``, ``ci_low``, ``ci_high``,
        ``lam`` (PPI's λ: 1, PPI++'s tuned; NaN otherwise), ``method`` (the interval's),
        ``n_labelled`` (cases with a human label), ``n_unlabelled`` (cases with only the
        judge's).

    Raises
    ------
    ValueError
        Missing columns, verdicts that are not booleans, ``n_labelled`` outside
        [2, labelled cases].

    Notes
    -----
    ``judge_only`` is the judge's pass rate over every case (Wilson): it estimates the
    judge's accuracy, biased by its errors. ``human_only`` is Wilson on the labelled cases:
    valid, wide. ``ppi`` and ``ppi_plus_plus`` are :func:`dabench_analysis.judge.ppi_mean`
    (λ = 1 and the power-tuned λ̂; CLT intervals, as ``ppi_py.ppi_mean_ci``): the judge's
    rate on the unlabelled cases plus the mean human − judge difference on the labelled
    ones. The human labels must be a random subset of the cases (PPI's assumption). Fewer
    than :data:`MIN_SIDE` (10) labelled or unlabelled cases: a warning (the CLT interval is
    not to be trusted; the estimate can leave [0, 1]).

    References
    ----------
    Angelopoulos, A. N. et al. (2023). Prediction-powered inference. Science 382, 669–674.
    Angelopoulos, A. N., Duchi, J. C., Zrnic, T. (2023). PPI++. arXiv:2311.01453.

    Examples
    --------
    12 cases labelled by humans and the judge, 30 by the judge only:

    >>> c = pd.DataFrame({
    ...     "judge_pass": [1, 1, 0, 1, 1, 1, 0, 0, 1, 1, 1, 1] + [1, 0, 1, 1, 1, 0, 1, 1, 1, 0] * 3,
    ...     "human_pass": [1, 1, 0, 1, 0, 1, 1, 0, 1, 1, 0, 1] + [None] * 30})
    >>> judge_corrected_accuracy(c)[["estimator", "estimate", "ci_low", "lam"]].round(3)
           estimator  estimate  ci_low    lam
    0     judge_only     0.714   0.564    NaN
    1     human_only     0.667   0.391    NaN
    2            ppi     0.617   0.293  1.000
    3  ppi_plus_plus     0.652   0.401  0.285
    """
    check_ci(ci)
    require_columns(cases, [c for c in (judge, human, by) if c is not None], "cases")
    j_all = as_bool(cases[judge], judge)
    if j_all.isna().any():
        warnings.warn(f"{int(j_all.isna().sum())} case(s) without a judge verdict were dropped",
                      stacklevel=outside_level())
    frame = cases[j_all.notna().to_numpy()]
    groups = frame.groupby(by, sort=False, observed=True) if by else [(None, frame)]
    out = []
    for name, g in groups:
        j = as_bool(g[judge], judge).astype(bool)
        h = _budget(as_bool(g[human], human), n_labelled, seed)
        out += [({by: name} if by else {}) | r for r in _corrected(j, h, ci)]
    cols = [*([by] if by else []), "estimator", "estimate", "ci_low", "ci_high", "lam",
            "n_labelled", "n_unlabelled", "method"]
    return pd.DataFrame(out)[cols]
