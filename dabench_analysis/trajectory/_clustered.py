"""Intervals of the solve curve and of tool fit on repeated trials (another harness's: each
trial its own trace): a percentile bootstrap over tasks, every trace of a drawn task with it
(:func:`dabench_analysis.stats._clustered.cluster_bootstrap_ratio`). With one row per task the
tables keep their Wilson and Newcombe intervals.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dabench_analysis.stats._clustered import cluster_bootstrap_ratio
from dabench_analysis.trajectory._inputs import Inputs, difference, shares


def curve_intervals(s: pd.DataFrame, codes: np.ndarray, group: np.ndarray, at: np.ndarray,
                    inp: Inputs, ci: float) -> tuple[np.ndarray, np.ndarray]:
    """The solve curve's interval bounds, one per point (``group``, ``at``; the points of
    each group together, groups in ascending order): the share of the group's traces (rows
    of ``s``: ``task_index``, ``end``, ``solved``; ``codes`` their groups) solved by ``at``,
    resampling tasks."""
    per_group = np.bincount(group, minlength=int(codes.max(initial=-1)) + 1)
    reps = per_group[codes]  # each trace is counted at each point of its group
    trace = np.repeat(np.arange(len(s)), reps)
    row = np.repeat(np.cumsum(per_group)[codes] - reps, reps) + (
        np.arange(len(trace)) - np.repeat(np.cumsum(reps) - reps, reps))
    hit = s["solved"].to_numpy(dtype=bool)[trace] & (
        s["end"].to_numpy(dtype="float64")[trace] <= at[row])
    r = cluster_bootstrap_ratio(hit, np.ones(len(trace)), row,
                                inp.clusters[s["task_index"].to_numpy()][trace], ci=ci,
                                n_boot=inp.n_boot, seed=inp.seed)
    lo, hi = np.full(len(at), np.nan), np.full(len(at), np.nan)
    lo[:len(r)], hi[:len(r)] = r["ci_low"].to_numpy(), r["ci_high"].to_numpy()
    return lo, hi


def fit_intervals(per_task: pd.DataFrame, fams: list, run: np.ndarray, run_names,
                  tool_names, ok: np.ndarray, scored: np.ndarray, inp: Inputs,
                  ci: float) -> pd.DataFrame:
    """Tool fit's intervals per (``run_id``, ``group_by``, ``group``, ``tool``): accuracy of
    the traces using the tool and of the group's others, their difference, and the failure
    rate of its calls, resampling tasks."""
    parts, calls = [], []
    uses = set(zip(per_task["task"], per_task["tool"], strict=True))
    for fam, group, names in fams:
        traces = np.flatnonzero(group >= 0)
        for j in range(len(tool_names)):
            using = np.array([(t, j) in uses for t in traces], dtype=bool)
            parts.append(pd.DataFrame({
                "run_id": np.asarray(run_names, dtype=object)[run[traces]], "group_by": fam,
                "group": names[group[traces]], "tool": tool_names[j], "task_index": traces,
                "k1": ok[traces] & using, "n1": scored[traces] & using,
                "k2": ok[traces] & ~using, "n2": scored[traces] & ~using}))
        t = per_task["task"].to_numpy()
        calls.append(per_task[group[t] >= 0].assign(
            run_id=np.asarray(run_names, dtype=object)[run[t[group[t] >= 0]]], group_by=fam,
            group=names[group[t[group[t] >= 0]]],
            tool=np.asarray(tool_names, dtype=object)[per_task["tool"][group[t] >= 0]],
            task_index=t[group[t] >= 0]))
    keys = ["run_id", "group_by", "group", "tool"]
    cross = pd.concat(parts, ignore_index=True)
    acc = shares(cross, keys, {"accuracy_using": ("k1", "n1"),
                               "accuracy_not_using": ("k2", "n2")}, inp, ci)
    acc = difference(cross, keys, ("k1", "n1"), ("k2", "n2"), inp, ci,
                     acc.assign(ci_low=np.nan, ci_high=np.nan))
    fail = shares(pd.concat(calls, ignore_index=True), keys,
                  {"failure_rate": ("n_failed", "n_calls")}, inp, ci)
    return acc.merge(fail, on=keys, how="left")


def variant_intervals(s: pd.DataFrame, g: pd.DataFrame, inp: Inputs,
                      ci: float) -> dict[str, np.ndarray]:
    """The variants' interval bounds on repeated trials, one per row of ``g`` (``run_id``,
    ``difficulty``, ``pattern``, ``is_other``): ``share`` (the row's traces among its group's)
    and ``accuracy`` (correct among the row's scored traces), resampling tasks. ``s``: one row
    per trace and group (``run_id``, ``difficulty``, ``pattern``, ``task_index``, ``ok``,
    ``scored``); a trace whose pattern has no row of its own is in its group's pooled row."""
    keys = ["run_id", "difficulty"]
    rows = g[[*keys, "pattern", "is_other"]].reset_index(drop=True).assign(
        row=np.arange(len(g)))
    own = s[[*keys, "pattern"]].merge(rows[~rows["is_other"]], on=[*keys, "pattern"],
                                      how="left")["row"]
    rest = s[keys].merge(rows[rows["is_other"]].drop(columns="pattern"), on=keys,
                         how="left")["row"]
    mine = own.fillna(rest).to_numpy(dtype="float64")  # each trace's row
    trace = s.assign(mine=mine, ok=s["ok"].to_numpy(dtype=bool),
                     scored=s["scored"].to_numpy(dtype=bool))[[*keys, "mine", "task_index",
                                                                "ok", "scored"]]
    cross = trace.merge(rows[[*keys, "row"]], on=keys)  # every trace against its group's rows
    hit = cross["mine"].to_numpy() == cross["row"].to_numpy()
    task = inp.clusters[cross["task_index"].to_numpy()]
    out = {}
    for name, num, den in (("share", hit, np.ones(len(cross))),
                           ("accuracy", hit & cross["ok"].to_numpy(),
                            hit & cross["scored"].to_numpy())):
        r = cluster_bootstrap_ratio(num, den, cross["row"].to_numpy(), task, ci=ci,
                                    n_boot=inp.n_boot, seed=inp.seed)
        lo, hi = np.full(len(g), np.nan), np.full(len(g), np.nan)
        lo[:len(r)], hi[:len(r)] = r["ci_low"].to_numpy(), r["ci_high"].to_numpy()
        out[f"{name}_ci_low"], out[f"{name}_ci_high"] = lo, hi
    return out


def quantile_intervals(values: np.ndarray, groups: np.ndarray, clusters: np.ndarray,
                       quantiles: tuple[float, ...], inp: Inputs,
                       ci: float) -> tuple[np.ndarray, np.ndarray]:
    """Percentile-bootstrap bounds over clusters (tasks) of each group's quantiles, shape
    (groups, quantiles): replicate b takes every value of cluster c ``counts[b, c]`` times
    (:func:`dabench_analysis.stats.ranking.bootstrap_counts` over the clusters with a value,
    in label order; ``inp.n_boot`` draws, ``inp.seed``) and the quantile is numpy's linear one of
    that sample; NaN values left out; NaN bounds for a group with fewer than 2 clusters."""
    from dabench_analysis.stats.ranking import bootstrap_counts

    v, g = np.asarray(values, dtype="float64"), np.asarray(groups, dtype=np.int64)
    n_g = int(g.max(initial=-1)) + 1
    lo, hi = np.full((n_g, len(quantiles)), np.nan), np.full((n_g, len(quantiles)), np.nan)
    keep = ~np.isnan(v)
    v, g = v[keep], g[keep]
    c = np.unique(np.asarray(clusters, dtype=np.int64)[keep], return_inverse=True)[1].ravel()
    if not v.size:
        return lo, hi
    counts = bootstrap_counts(int(c.max()) + 1, inp.n_boot, inp.seed)
    order = np.lexsort((v, g))
    v, g, c = v[order], g[order], c[order]
    edges = np.searchsorted(g, np.arange(n_g + 1))
    for k in range(n_g):
        part = slice(edges[k], edges[k + 1])
        if len(np.unique(c[part])) < 2:
            continue
        reps = np.full((inp.n_boot, len(quantiles)), np.nan)
        for start in range(0, inp.n_boot, 256):  # (draws × values) weights, a block at a time
            w = counts[start:start + 256][:, c[part]]
            reps[start:start + len(w)] = _weighted_quantiles(v[part], w, quantiles)
        q = np.nanquantile(reps, [(1 - ci) / 2, (1 + ci) / 2], axis=0)
        lo[k], hi[k] = q[0], q[1]
    return lo, hi


def _weighted_quantiles(v: np.ndarray, w: np.ndarray, quantiles: tuple[float, ...]) -> np.ndarray:
    """numpy's linear quantiles of the sorted values ``v``, each taken ``w[r, i]`` times, for
    each row r of ``w`` (shape (rows, quantiles); NaN for a row of zero weights): the value at
    position x of row r's sample is the first whose cumulative weight exceeds x."""
    out = np.full((len(w), len(quantiles)), np.nan)
    cw = np.cumsum(w, axis=1)
    total = cw[:, -1]
    rows = np.flatnonzero(total > 0)
    if not rows.size:
        return out
    big = float(total.max()) + 1  # rows laid end to end, each offset past the previous one
    shift = np.arange(len(rows))
    flat = (cw[rows] + big * shift[:, None]).ravel()
    n_v = cw.shape[1]
    for j, p in enumerate(quantiles):
        h = (total[rows] - 1) * p
        low, high = (v[np.minimum(np.searchsorted(flat, x + big * shift, side="right")
                                  - n_v * shift, n_v - 1)] for x in (np.floor(h), np.ceil(h)))
        out[rows, j] = low + (h - np.floor(h)) * (high - low)
    return out
