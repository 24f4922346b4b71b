"""Judge studies: how well an LLM judge's verdicts agree with human labels, per judge
configuration, and the accuracy corrected by a few human labels.

One folder: the study's files (:mod:`._schema`: ``cases.csv``, ``verdicts.csv``, ...; read by
:mod:`._load`), the configuration table and the judge-corrected accuracy (:mod:`._tables`), the
prediction-powered mean behind it (:mod:`._ppi`) and the figure (:mod:`._figures`). The agreement
statistics themselves (MCC, precision/recall, Gwet, Krippendorff) are shared and live in
:mod:`dabench_analysis.stats`.

>>> import dabench_analysis as da
>>> study = da.judge.read_judge_study("data/judge_study")
>>> len(study.cases), list(study.cases.columns)[:2]
(55, ['test_case_id', 'vertical'])
"""

from typing import TYPE_CHECKING

from dabench_analysis._lazy import attach

if TYPE_CHECKING:
    from dabench_analysis.judge._figures import plot_configurations
    from dabench_analysis.judge._load import JudgeStudy, read_judge_study
    from dabench_analysis.judge._ppi import ppi_mean
    from dabench_analysis.judge._tables import configuration_table, judge_corrected_accuracy

__all__ = ["JudgeStudy", "configuration_table", "judge_corrected_accuracy", "plot_configurations",
           "ppi_mean", "read_judge_study"]

__getattr__, __dir__ = attach(__name__, __file__)
