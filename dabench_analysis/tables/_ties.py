"""Tie groups of a leaderboard: the runs a paired test cannot tell from the top run, then from
the best run left, and so on (issue "statistically tied with #1"). Exposed as
:func:`dabench_analysis.tables.sweep.tie_groups` and as the leaderboard's ``tie_group``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dabench_analysis import schema
from dabench_analysis.stats._proportions import discordant_counts, mcnemar_discordant
from dabench_analysis.stats.multicomp import adjust_pvalues
from dabench_analysis.tables._common import takes_run
from dabench_analysis.tables.sweep_items import _as_tasks, _correct_matrix, _run_order

__all__ = ["tie_groups"]

_COLUMNS = ["run_id", "tie_group", "group_leader", "p_vs_leader_holm", "alpha", "method"]


def _holm_mcnemar(correct: np.ndarray) -> np.ndarray:
    """Holm-adjusted exact McNemar p of every pair of runs (the pairwise table's
    ``p_mcnemar_holm``), as a symmetric run × run matrix.

    Parameters
    ----------
    correct : numpy.ndarray, shape (n_tasks, n_runs)
        1, 0 or NaN per task and run.

    Returns
    -------
    numpy.ndarray, shape (n_runs, n_runs)
        Adjusted p (diagonal 1; NaN for a pair without a shared task).

    Examples
    --------
    >>> float(_holm_mcnemar(np.array([[1, 0]] * 6, dtype=float))[0, 1])  # binom.test(6, 6)
    0.03125
    """
    n, b, c = discordant_counts(correct)
    k = correct.shape[1]
    a_idx, b_idx = np.triu_indices(k, 1)
    raw = [mcnemar_discordant(int(round(b[i, j])), int(round(c[i, j])), n=int(round(n[i, j])))
           .p_value for i, j in zip(a_idx, b_idx, strict=True)]
    out = np.ones((k, k))
    if raw:
        adj = adjust_pvalues(np.asarray(raw, dtype=float), method="holm").p_adjusted
        out[a_idx, b_idx] = out[b_idx, a_idx] = adj
    return out


@takes_run(pools=False)
def tie_groups(tasks, *, threshold: float = schema.SUCCESS_THRESHOLD, alpha: float = 0.05,
               order: list[str] | None = None) -> pd.DataFrame:
    """Group the runs of a sweep into tie groups: 1 = not distinguishable from the top run.

    Parameters
    ----------
    tasks : DataFrame or Runs
        Stacked task rows with ``run_id``, ``task_id``, ``final_score`` ([0, 1]); one row per
        run and task.
    threshold : float
        A task succeeds when ``final_score >= threshold``; default 0.8.
    alpha : float
        Family-wise error rate of the Holm-adjusted tests.
    order : list of str, optional
        The runs best first (a leaderboard's order); default: by mean ``final_score``.

    Returns
    -------
    DataFrame
        One row per run in ``order``: ``run_id``, ``tie_group`` (1, 2, ...), ``group_leader``
        (the group's first run), ``p_vs_leader_holm`` (Holm-adjusted McNemar p against the
        leader; 1 for the leader), ``alpha``, ``method``.

    Raises
    ------
    ValueError
        Missing columns, a task twice in one run, ``alpha`` outside (0, 1), ``order`` not
        naming the runs.

    Notes
    -----
    The test is the sweep's pairwise one (:func:`dabench_analysis.tables.sweep.pairwise`'s
    ``p_mcnemar_holm``): McNemar's exact test of success on the tasks the two runs share,
    Holm-adjusted over all k(k − 1)/2 pairs, so a group can be read off the pairwise table.
    The leader of group 1 is the first run; group 1 holds the runs whose adjusted p against
    it is at least ``alpha`` (not shown to differ; a pair without a shared task is untested
    and counts as tied). The first run not yet grouped leads group 2, which takes the
    ungrouped runs not distinguishable from it, and so on. A tie is "no evidence of a
    difference", not evidence of equality.

    References
    ----------
    McNemar, Q. (1947). Psychometrika 12:153–157. Holm, S. (1979). Scand. J. Statist. 6:65–70.

    Examples
    --------
    >>> t = pd.DataFrame({"run_id": ["a"] * 8 + ["b"] * 8 + ["c"] * 8,
    ...                   "task_id": [f"t{i}" for i in range(8)] * 3,
    ...                   "final_score": [1.0] * 8 + [1.0] * 7 + [0.0] + [0.0] * 8})
    >>> tie_groups(t)[["run_id", "tie_group", "group_leader"]]
      run_id  tie_group group_leader
    0      a          1            a
    1      b          1            a
    2      c          2            c
    """
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    t = _as_tasks(tasks, ["final_score"])
    runs = _run_order(t, "final_score")
    if order is not None:
        order = [str(r) for r in order]
        if sorted(order) != sorted(runs):
            raise ValueError(f"order must name the runs {runs}, got {order}")
        runs = order
    return _tie_table(t, runs, threshold, alpha)


def _tie_table(t: pd.DataFrame, runs: list[str], threshold: float,
               alpha: float) -> pd.DataFrame:
    """:func:`tie_groups` on a checked task frame with the runs best first."""
    p = _holm_mcnemar(_correct_matrix(t, runs, threshold))
    group, leader = _groups(p, alpha)
    return pd.DataFrame({"run_id": runs, "tie_group": group,
                         "group_leader": [runs[i] for i in leader],
                         "p_vs_leader_holm": p[leader, np.arange(len(runs))], "alpha": alpha,
                         "method": f"McNemar exact on success (final_score >= {threshold:g}), "
                                   f"Holm over {len(runs) * (len(runs) - 1) // 2} pairs"}
                        )[_COLUMNS]


def _groups(p: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Greedy groups in run order from the adjusted p matrix: each group's leader is the first
    ungrouped run; it takes the ungrouped runs whose p against it is not below alpha."""
    group = np.zeros(len(p), dtype=int)
    leader = np.zeros(len(p), dtype=int)
    g = 0
    while (group == 0).any():
        g += 1
        lead = int(np.flatnonzero(group == 0)[0])
        tied = (group == 0) & ~(p[lead] < alpha)  # NaN (untested) counts as tied
        group[tied], leader[tied] = g, lead
    return group, leader
