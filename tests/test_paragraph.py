"""export.reporting_paragraph: the direction comes from the test that gives the p-value, both
p-values are labelled, disagreements are said, ties are named, and numbers follow one rule.

Reference values come from R 4.2.2 (Debian r-base-core), run on the same numbers (the frames
below were written to CSV with 17 significant digits and read back with ``read.csv``); the
call and its value stand beside each assertion. ``d = proposed - baseline``.
"""

from __future__ import annotations

import warnings

import pandas as pd
import pytest

from dabench_analysis import export, load_run, schema, stats
from dabench_analysis.schema._labels import value_label

ROOT = "data/sample_runs"


def frame(scores, difficulty="Medium", **cols) -> pd.DataFrame:
    ids = [f"t{i:02d}" for i in range(len(scores))]
    return pd.DataFrame({"task_id": ids, "final_score": [float(s) for s in scores],
                         "difficulty": difficulty, **cols})


def paragraph(base, prop, *, metrics=("final_score",), **kw) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", stats.StatisticsWarning)
        cmp = stats.compare_runs(base, prop, metrics=list(metrics), ci=kw.pop("ci", 0.95),
                                 correction=kw.pop("correction", "holm"))
        return export.reporting_paragraph(base, prop, cmp, **kw)


# 30 tasks, every one better by 0.2 + 0.005 i (no ties, no zeros): a clear win.
WIN_BASE = [round(0.30 + 0.01 * i, 2) for i in range(30)]
WIN_PROP = [round(x + 0.2 + 0.005 * i, 3) for i, x in enumerate(WIN_BASE)]


def test_adversarial_mean_rises_ranks_fall():
    # 70 small losses (0.90 -> 0.88) and 10 large wins (0.30 -> 0.90)
    base = frame([0.90] * 70 + [0.30] * 10)
    prop = frame([0.88] * 70 + [0.90] * 10)
    text = paragraph(base, prop)
    assert "outperforming" not in text
    # R: wilcox.test(p, b, paired=TRUE) -> V = 755, p = 5.702e-06 (normal approx., cc);
    #    nz <- d[d != 0]; r <- rank(abs(nz)); (sum(r[nz > 0]) - sum(r[nz < 0])) / sum(r)
    #    -> -0.5339506; mean(d) / sd(d) -> 0.2786671
    assert ("significantly underperforming the baseline (0.825 ± 0.200; Wilcoxon signed-rank "
            "test on 80 paired tasks, single-test p < 0.001, the only metric tested (no "
            "adjustment), α = 0.05; rank-biserial r = -0.534, paired effect size d_z = 0.279)"
            ) in text  # the rule: 3 decimals for values in [-1, 1] and p-values
    # R: binom.test(0, 10)$p.value -> 0.001953125 (b = 0, c = 10 at final_score >= 0.8);
    #    t.test(p, b, paired=TRUE)$conf.int -> 0.01158142 0.1034186, mean(d) -> 0.0575
    assert ("These analyses disagree: the signed-rank test favours the baseline, McNemar's "
            "exact test on correctness (final_score ≥ 0.8: 10 tasks became correct, 0 became "
            "incorrect; p = 0.002) favours our system, and the 95 % t-interval of the mean "
            "difference (0.057, from 0.012 to 0.103) lies above 0.") in text  # float mean(d):
    # 0.05749999999999999 (R prints 0.0575), so half-up at 3 decimals gives 0.057
    # R: mean(p), sd(p) -> 0.8825 0.00665611
    assert "mean final score of 0.883 ± 0.007 (mean ± std)" in text


def test_clear_win():
    text = paragraph(frame(WIN_BASE), frame(WIN_PROP))
    # R: wilcox.test(p, b, paired=TRUE) -> V = 465, p = 1.863e-09 (exact); r_rb = 1;
    #    mean(d) / sd(d) -> 6.190784
    assert ("significantly outperforming the baseline (0.445 ± 0.088; Wilcoxon signed-rank "
            "test on 30 paired tasks, single-test p < 0.001") in text
    assert "rank-biserial r = 1.000, paired effect size d_z = 6.19" in text
    # R: binom.test(0, 10)$p.value -> 0.001953125; t.test(p, b, paired=TRUE)$conf.int ->
    #    0.2560638 0.2889362, mean(d) -> 0.2725
    assert ("McNemar's exact test on correctness (final_score ≥ 0.8: 10 tasks became correct, "
            "0 became incorrect; p = 0.002) favours our system, and the 95 % t-interval of "
            "the mean difference (0.273, from 0.256 to 0.289) lies above 0: both agree with "
            "the signed-rank test.") in text
    assert "disagree" not in text


def test_clear_loss():
    text = paragraph(frame(WIN_PROP), frame(WIN_BASE))
    # R: wilcox.test(b, p, paired=TRUE) -> V = 0, p = 1.863e-09; t.test(...)$conf.int ->
    #    -0.2889362 -0.2560638; binom.test(10, 10)$p.value -> 0.001953125
    assert "significantly underperforming the baseline (0.718 ± 0.132;" in text
    assert "rank-biserial r = -1.000, paired effect size d_z = -6.19" in text
    assert ("(final_score ≥ 0.8: 0 tasks became correct, 10 became incorrect; p = 0.002) "
            "favours the baseline, and the 95 % t-interval of the mean difference (-0.273, "
            "from -0.289 to -0.256) lies below 0: both agree") in text
    assert "outperforming" not in text


def test_tie_no_significant_difference():
    base = [0.6, 0.5, 0.7, 0.4, 0.65, 0.55, 0.45, 0.35, 0.62, 0.52, 0.42, 0.72, 0.58, 0.48,
            0.38, 0.68, 0.3, 0.6, 0.5, 0.4]
    d = [0.05, -0.04, 0.03, -0.06, 0.02, -0.01, 0.07, -0.08, 0.09, -0.03, 0.04, -0.05, 0.06,
         -0.07, 0.01, -0.02, 0.08, -0.09, 0.11, -0.1]
    prop = [round(x + y, 2) for x, y in zip(base, d, strict=True)]
    text = paragraph(frame(base), frame(prop))
    # R: wilcox.test(p, b, paired=TRUE) -> V = 107.5, p = 0.9404550942 (ties: normal approx.,
    #    cc); r_rb -> 0.02380952; t.test(p, b, paired=TRUE)$conf.int -> -0.02969652 0.03069652
    assert ("not significantly different from the baseline (0.520 ± 0.123; Wilcoxon "
            "signed-rank test on 20 paired tasks, single-test p = 0.940") in text
    # No task crosses 0.8: McNemar has no discordant pair (R mcnemar.test gives NaN; the
    # package's documented rule is p = 1.0, stats._proportions.mcnemar_discordant).
    assert ("McNemar's exact test on correctness (final_score ≥ 0.8: no task changed "
            "correctness, p set to 1.0) finds no significant difference, and the 95 % "
            "t-interval of the mean difference (0.001, from -0.030 to 0.031) includes 0: "
            "both agree with the signed-rank test.") in text


def test_interval_level_and_correction_are_named_from_the_arguments():
    base, prop = frame(WIN_BASE), frame(WIN_PROP)
    text = paragraph(base, prop, ci=0.9)
    # R: t.test(p, b, paired=TRUE, conf.level=0.9)$conf.int -> 0.2588452 0.2861548
    assert "the 90 % t-interval of the mean difference (0.273, from 0.259 to 0.286)" in text
    assert "95 %" not in text


@pytest.fixture(scope="module")
def sample_pair():
    base = load_run(f"{ROOT}/baseline_react").tasks
    prop = load_run(f"{ROOT}/proposed_aat").tasks
    return base, prop


def test_sample_pair_sentences(sample_pair):
    base, prop = sample_pair
    text = paragraph(base, prop, metrics=("final_score", "analyst_score", "answer_f1",
                                          "autonomy_score", "tool_efficiency"))
    # R (80 tasks): mean(p), sd(p) -> 0.877765 0.227951; mean(b), sd(b) -> 0.7957838 0.3135669
    # wilcox.test(p, b, paired=TRUE) -> V = 1254, p = 0.09282 (normal approx., cc);
    # p.adjust(c(0.09281568, 6.753416e-06, 0.09708303, 0.2347368, 0.02704174), "holm")[1]
    # -> 0.2784470; r_rb -> 0.2440476; mean(d) / sd(d) -> 0.2403315
    assert ("Our system achieves a mean final score of 0.878 ± 0.228 (mean ± std), not "
            "significantly different from the baseline (0.796 ± 0.314; Wilcoxon signed-rank "
            "test on 80 paired tasks, single-test p = 0.093, Holm-adjusted p = 0.278 over 5 "
            "metrics, α = 0.05; rank-biserial r = 0.244, paired effect size d_z = 0.240).") in text
    # b = 3, c = 14: R binom.test(3, 17)$p.value -> 0.01272583;
    # t.test(p, b, paired=TRUE)$conf.int -> 0.006069288 0.157893212, mean(d) -> 0.08198125
    assert ("These analyses disagree: the signed-rank test finds no significant difference, "
            "McNemar's exact test on correctness (final_score ≥ 0.8: 14 tasks became correct, "
            "3 became incorrect; p = 0.013) favours our system, and the 95 % t-interval of the "
            "mean difference (0.082, from 0.006 to 0.158) lies above 0.") in text
    # R: table(difficulty); mean/sd by level -> Medium 0.964776 0.05369581, Extreme 0.6888538
    # 0.3631347; mean(analyst_score), sd -> 0.7982847 0.1234781
    assert "containing 80 tasks of varying difficulty (Easy: 20, Medium: 25, Hard: 22, " \
           "Extreme: 13)." in text
    assert "- Medium: 0.965 ± 0.054 (n=25)" in text and "- Extreme: 0.689 ± 0.363 (n=13)" in text
    # the analyst score's mean and SD, from the data (pandas; 3 decimals in [-1, 1])
    a = prop["analyst_score"]
    assert f"reaches {a.mean():.3f} ± {a.std():.3f}." in text
    # 67 of 80 first-try successes, 12 replans in 80 tasks (0.15 must not print 0.1),
    # 69 of 80 verifications triggered; shares as proportions with their counts, never %
    assert ("Our multi-agent architecture demonstrates a first-try success rate of 0.838 (67 of "
            "80) and an average of 0.150 replanning operations per task.") in text
    found = int(prop["verification_failures_detected"].sum())  # from the data
    assert ("Verification mechanisms trigger in 69 of 80 executions (a share of 0.863) and "
            f"detect {found} failures.") in text
    # the failed tasks' categories, counted with pandas: ranks by count until 3 categories are
    # named, ties named together in the catalogue's order by their labels, shares of the
    # failed tasks
    failed = prop.loc[prop["final_score"] < 0.8, "failure_category"].astype(str)
    counts = failed.value_counts()
    lines, named = [], 0
    for rank, n in enumerate(sorted(set(counts), reverse=True), start=1):
        names = [value_label("failure_category", c) for c in schema.columns.FAILURE_CATEGORIES
                 if counts.get(c) == n]
        joined = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
        each = " each" if len(names) > 1 else ""
        lines.append(f"{rank}. {joined} ({n} of {len(failed)}, a share of "
                     f"{n / len(failed):.3f}{each})")
        named += len(names)
        if named >= 3:
            break
    assert "\n".join(lines) in text, text
    assert "(Answer accuracy, final_score ≥ 0.8: 0.900 (72 of 80).)" in text  # R: 0.9
    assert "%" not in text.replace("95 %", "")


def test_sample_pair_other_correction_is_named(sample_pair):
    base, prop = sample_pair
    text = paragraph(base, prop, correction="bh",
                     metrics=("final_score", "analyst_score", "answer_f1", "autonomy_score",
                              "tool_efficiency"))
    # R: p.adjust(<the five p-values above>, "BH")[1] -> 0.1213538
    assert "single-test p = 0.093, Benjamini–Hochberg-adjusted p = 0.121 over 5 metrics" in text
    assert "Holm" not in text


def test_failure_ties_and_process_numbers():
    n = 20
    base = frame([0.9] * n)
    cats = ["PLANNING_FAILURE", "AGGREGATION_FAILURE"] * 2 + [None] * (n - 4)
    prop = frame([0.5] * 4 + [0.9] * (n - 4), failure_category=pd.Categorical(cats),
                 replan_count=[1, 2] + [0] * (n - 2), first_try_success=[False] * 3 + [True] * 17)
    text = paragraph(base, prop)
    # 4 failed tasks, 2 + 2: a tie, named as such (never one picked)
    assert "1. Planning and Aggregation (2 of 4, a share of 0.500 each)" in text
    assert "2." not in text
    # 3 replans / 20 tasks = 0.15 exactly as a mean; 17 / 20 = 0.85
    assert "a first-try success rate of 0.850 (17 of 20) and an average of 0.150 replanning" in text
    assert "Tool efficiency" not in text and "Verification" not in text  # columns absent


def test_required_columns_only():
    base, prop = frame([0.5, 0.6, 0.7]), frame([0.6, 0.7, 0.9])
    text = paragraph(base, prop)
    assert "Breakdown by difficulty:\n- Medium:" in text
    assert "analyst score" not in text and "Failure analysis" not in text
    with pytest.raises(ValueError, match="difficulty"):
        export.reporting_paragraph(base, prop.drop(columns="difficulty"),
                                   stats.compare_runs(base, prop, metrics=["final_score"]))
    with pytest.raises(ValueError, match="no row for final_score"):
        export.reporting_paragraph(base, prop, pd.DataFrame({"metric": ["answer_f1"]}))


@pytest.mark.parametrize("value, text", [
    (0.15, "0.150"), (0.8812, "0.881"), (-0.53395, "-0.534"), (0.0820, "0.082"),
    (12345.6, "12346"), (0.09996, "0.100"), (2.5e-5, "0.000"), (float("nan"), "n/a")])
def test_estimate_rule(value, text):
    # 3 decimals in [-1, 1], else 3 significant digits; half-up; no scientific notation
    assert export.format_estimate(value) == text


@pytest.mark.parametrize("p, text", [
    (0.09282, "0.093"), (0.278447, "0.278"), (0.0125, "0.013"), (0.00099, "< 0.001"),
    (0.001, "0.001"), (0.04999, "0.050"), (1.0, "1.000"), (float("nan"), "n/a")])
def test_pvalue_rule(p, text):
    # 3 decimals, "< 0.001" below 0.001 (0.0125 half-up on its decimal text: 0.013)
    assert export.format_pvalue(p) == text


def test_no_shared_task_is_an_error():
    base = frame([0.5, 0.6])
    prop = frame([0.9]).assign(task_id=["other"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", stats.StatisticsWarning)
        cmp = stats.compare_runs(base, prop, metrics=["final_score"])
    with pytest.raises(ValueError, match="share no task_id"):
        export.reporting_paragraph(base, prop, cmp)
