"""Figures of trajectories: the directly-follows graph (:mod:`._graph`), variants, the share
solved within k steps and step latency (:mod:`._plots`), each on ``ax=`` as the core figures
(:mod:`dabench_analysis.figures`) are."""

from typing import TYPE_CHECKING

# MPLBACKEND checked before matplotlib is first imported (by any module of this folder)
from dabench_analysis import _mplbackend  # noqa: F401
from dabench_analysis._lazy import attach

if TYPE_CHECKING:
    from dabench_analysis.trajectory.figures._graph import transition_graph
    from dabench_analysis.trajectory.figures._plots import (
        solve_curve,
        step_latency,
        trajectory_variants,
    )

__all__ = ["solve_curve", "step_latency", "trajectory_variants", "transition_graph"]

__getattr__, __dir__ = attach(__name__, __file__)
