"""What the agents did, from trajectory.csv and tool_calls.csv (seed 000 §Data Model Schema 2
and 3): process mining (:func:`variants`, :func:`conformance`, :func:`transitions`),
step-level debugging (:func:`loops`, :func:`recovery`, :func:`first_failures`), performance
profiling (:func:`step_latency`, :func:`solve_curve`) and tool selection (:func:`tool_fit`);
two runs (:func:`compare`, :func:`variant_changes`) and many (:func:`per_run`).

Every table takes a :class:`~dabench_analysis.load.Run` (or a
:class:`~dabench_analysis.load.Runs`: one table per run, a ``run_id`` column first, never
pooled), reads only the columns it needs (``action_input`` and the other free-text columns
only where a table needs them), takes the analysis' ``threshold`` (default 0.8), and is given pooled
(``difficulty`` "all") and per difficulty where the run has that column. The statistics are
in :mod:`.steps`, :mod:`.step_events` and :mod:`._loop_flags`, the figures in :mod:`.figures`
(``da.trajectory.figures.solve_curve(...)``).

Public modules besides those above (reached as ``da.<folder>.<module>``): ``attribution``
(attribution you can check); ``events`` (step-level debugging of a run); ``failures``
(step-level debugging); ``patterns`` (process mining of a run's trajectories); ``profile``
(performance profiling and tool selection from a run's steps and tool calls).
"""

from typing import TYPE_CHECKING

from dabench_analysis._lazy import attach

if TYPE_CHECKING:
    from dabench_analysis.trajectory import figures, step_events, steps
    from dabench_analysis.trajectory.agents import agent_attribution
    from dabench_analysis.trajectory.attribution import (
        labelled_failures,
        mistake_agreement,
        mistake_offsets,
        with_labels,
    )
    from dabench_analysis.trajectory.events import loop_tasks, loops, recovery
    from dabench_analysis.trajectory.failures import (
        first_failure_agreement,
        first_failure_counts,
        first_failures,
    )
    from dabench_analysis.trajectory.patterns import (
        conformance,
        task_patterns,
        transitions,
        variants,
    )
    from dabench_analysis.trajectory.profile import solve_curve, step_latency, tool_fit
    from dabench_analysis.trajectory.runs import compare, per_run, variant_changes

__all__ = ["agent_attribution", "figures", "step_events", "steps", "compare", "conformance", "first_failure_agreement", "first_failure_counts",
           "first_failures", "labelled_failures", "loop_tasks", "loops", "mistake_agreement",
           "mistake_offsets", "per_run", "recovery", "solve_curve",
           "step_latency", "task_patterns", "tool_fit", "transitions", "variant_changes",
           "variants", "with_labels"]

__getattr__, __dir__ = attach(__name__, __file__)
