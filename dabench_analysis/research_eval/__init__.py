"""Research-eval sessions: pass rates, profiles, tool mix and failures of research agents.

One folder: the loader (:mod:`._load`), the tables (:mod:`.tables`) and the figures
(:mod:`.figures`).

>>> import dabench_analysis as da
>>> rev = da.research_eval.load_research_eval("data/research_eval")
>>> type(rev).__name__
'ResearchEval'
"""

from typing import TYPE_CHECKING

from dabench_analysis._lazy import attach

if TYPE_CHECKING:
    from dabench_analysis.research_eval._load import ResearchEval, load_research_eval
    from dabench_analysis.research_eval.figures import plot_latency, plot_pass_rate
    from dabench_analysis.research_eval.tables import (
        describe_profiles,
        failures,
        mcnemar_profiles,
        pass_rate,
        tool_mix,
        tool_mix_test,
    )

__all__ = ["ResearchEval", "describe_profiles", "failures", "load_research_eval",
           "mcnemar_profiles", "pass_rate", "plot_latency", "plot_pass_rate", "tool_mix",
           "tool_mix_test"]

__getattr__, __dir__ = attach(__name__, __file__)
