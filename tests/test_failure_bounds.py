"""Failure bounds: accuracy with errored trials as failures, as successes, left out (issue 36
item 5). Expected values are computed here from the raw inputs (counts and the Wilson formula in
numpy), never through the package's readers."""

from __future__ import annotations

import json
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

import dabench_analysis as da
from dabench_analysis import schema

HARNESS = Path(__file__).parent / "data" / "harness"
INSPECT = HARNESS / "inspect_ai" / "2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval"
TAU = HARNESS / "tau-bench" / "gpt-4o-airline.json"


def wilson(k: int, n: int, ci: float = 0.95) -> tuple[float, float]:
    """(p + z²/2n ± z sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n); R prop.test(k, n, correct=FALSE)."""
    z, p = norm.ppf((1 + ci) / 2), k / n
    mid, half = p + z * z / (2 * n), z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (mid - half) / (1 + z * z / n), (mid + half) / (1 + z * z / n)


def check_bounds(table: pd.DataFrame, k: int, n: int, e: int) -> None:
    """k correct of n scored-or-errored trials, e of them errored (one trial per task)."""
    b = table.set_index("errors")
    for how, (kk, nn) in {"as_failures": (k, n), "as_successes": (k + e, n),
                          "left_out": (k, n - e)}.items():
        assert b.at[how, "estimate"] == pytest.approx(kk / nn, abs=1e-12)
        lo, hi = wilson(kk, nn)
        assert (b.at[how, "ci_low"], b.at[how, "ci_high"]) == pytest.approx((lo, hi), abs=1e-9)
        assert b.at[how, "n_trials"] == nn and b.at[how, "method"] == "Wilson"
    assert (b["n_errored"] == e).all()


def test_errored_sources():
    t = pd.DataFrame({"error": [None, "Timeout", "", "false", "1"],
                      "status": ["PASS", "pass", "Error", "HALTED", None]})
    assert schema.errored(t).tolist() == [False, True, True, False, True]
    assert schema.errored(pd.DataFrame({"error": [0, 1, np.nan]})).tolist() == [False, True, False]
    assert not schema.errored(pd.DataFrame({"final_score": [1.0]})).any()


def test_hand_built_run_one_trial_per_task():
    scores = [1.0, 0.9, 0.0, None, 0.85, 0.2, None, 1.0]
    error = [None, None, None, "RateLimitError", None, None, "Timeout", None]
    t = pd.DataFrame({"task_id": [f"t{i}" for i in range(8)], "final_score": scores,
                      "error": error})
    k = sum(s is not None and s >= 0.8 for s in scores)  # 4 correct, 2 errored, 8 trials
    check_bounds(da.tables.failure_bounds(t), k, 8, 2)
    key = da.tables.key_numbers(t)
    assert key["n_errored"] == 2
    assert key["answer_accuracy"] == pytest.approx(k / 6)  # the headline: as read (left out)
    assert key["answer_accuracy_errors_as_failures"] == pytest.approx(k / 8)
    assert key["answer_accuracy_errors_as_successes"] == pytest.approx((k + 2) / 8)
    assert (key["answer_accuracy_errors_as_failures_ci_low"],
            key["answer_accuracy_errors_as_failures_ci_high"]) == pytest.approx(wilson(k, 8))
    assert (key["answer_accuracy_errors_as_successes_ci_low"],
            key["answer_accuracy_errors_as_successes_ci_high"]) == pytest.approx(wilson(k + 2, 8))
    assert key["answer_accuracy_errors_note"].startswith("2 of 8 trials errored")
    keys = list(key)  # the range comes right after the headline accuracy and its interval
    assert keys[keys.index("answer_accuracy_ci_method") + 1] == "n_errored"
    from dabench_analysis.report._show import key_numbers_frame
    shown = key_numbers_frame(key).set_index("quantity")["value"]
    assert shown["Answer accuracy, errored trials as failures"] == \
        f"0.500 [{wilson(k, 8)[0]:.3f}, {wilson(k, 8)[1]:.3f}]"


def test_no_error_gives_three_equal_rows_and_no_range():
    t = pd.DataFrame({"task_id": list("abc"), "final_score": [1.0, 0.0, 1.0]})
    b = da.tables.failure_bounds(t)
    assert b["estimate"].tolist() == pytest.approx([2 / 3] * 3) and (b["n_errored"] == 0).all()
    assert "n_errored" not in da.tables.key_numbers(t)


def test_repeated_trials_average_within_a_task():
    t = pd.DataFrame({"task_id": list("aabbcc"), "trial": [1, 2] * 3,
                      "final_score": [1.0, None, 0.0, 1.0, 0.0, 0.0],
                      "error": [None, "x", None, None, None, None]})
    b = da.tables.failure_bounds(t, n_boot=200).set_index("errors")["estimate"]
    # task means: a (1, 0 | 1, 1 | 1), b 0.5, c 0
    assert b["as_failures"] == pytest.approx(np.mean([0.5, 0.5, 0.0]))
    assert b["as_successes"] == pytest.approx(np.mean([1.0, 0.5, 0.0]))
    assert b["left_out"] == pytest.approx(np.mean([1.0, 0.5, 0.0]))


def damaged_inspect_log(path: Path, sample_id: int = 4) -> Path:
    """The shipped Inspect log with one sample turned into an errored one (no score), written
    by inspect_ai's own classes."""
    from inspect_ai.log import EvalError, read_eval_log, write_eval_log
    log = read_eval_log(str(INSPECT))
    s = next(s for s in log.samples if s.id == sample_id)
    s.error = EvalError(message="RateLimitError: 429 Too Many Requests", traceback="",
                        traceback_ansi="")
    s.scores = None
    write_eval_log(log, str(path))
    return path


def test_inspect_log_with_an_errored_sample(tmp_path):
    pytest.importorskip("inspect_ai")
    log = damaged_inspect_log(tmp_path / "errored.eval")
    with zipfile.ZipFile(log) as z:  # expected values from the written file itself
        samples = [json.loads(z.read(n)) for n in z.namelist() if n.startswith("samples/")]
    errs = [s for s in samples if s.get("error")]
    k = sum(s["scores"]["match"]["value"] == "C" for s in samples if s.get("scores"))
    assert (len(samples), len(errs), k) == (10, 1, 7)
    run = da.load_run(log)  # strict: the errored sample's missing score is not an error
    assert [f.check for f in run.findings if f.column == "final_score"] == ["errored_trial"]
    check_bounds(da.tables.failure_bounds(run), k, 10, 1)
    key = da.tables.key_numbers(run)
    assert (key["answer_accuracy"], key["answer_accuracy_errors_as_failures"],
            key["answer_accuracy_errors_as_successes"]) == pytest.approx((k / 9, k / 10, 0.8))
    # docs/guide/reliability.md, "Failure bounds": the worked example's numbers
    shown = da.tables.failure_bounds(run)[["estimate", "ci_low", "ci_high"]].round(3)
    assert shown.values.tolist() == [[0.7, 0.397, 0.892], [0.8, 0.49, 0.943],
                                     [0.778, 0.453, 0.937]]
    assert round(key["answer_accuracy"], 3) == 0.778
    assert key["answer_accuracy_errors_note"] == ("1 of 10 trials errored: accuracy 0.70 if "
                                                  "they failed, 0.80 if they succeeded")


def test_taubench_record_whose_info_holds_an_error(tmp_path):
    records = json.loads(TAU.read_text())
    records[0]["info"] = {"error": "litellm.RateLimitError", "traceback": "..."}
    records[0]["reward"] = 0.0  # what tau-bench writes for a task that raised
    (tmp_path / "gpt-4o-airline.json").write_text(json.dumps(records))
    run = da.load_run(tmp_path / "gpt-4o-airline.json")
    assert schema.errored(run.tasks).sum() == 1
    b = da.tables.failure_bounds(run, n_boot=200).set_index("errors")
    tasks = pd.DataFrame({"task": [r["task_id"] for r in records],
                          "ok": [float(r["reward"] >= 0.8) for r in records]})
    err = pd.Series([i == 0 for i in range(len(records))])
    as_fail = tasks.groupby("task", sort=False)["ok"].mean().mean()
    as_succ = tasks.assign(ok=tasks["ok"].where(~err, 1.0)).groupby("task")["ok"].mean().mean()
    left = tasks[~err].groupby("task")["ok"].mean().mean()
    assert (b.at["as_failures", "estimate"], b.at["as_successes", "estimate"],
            b.at["left_out", "estimate"]) == pytest.approx((as_fail, as_succ, left))
    assert b.at["as_failures", "method"].startswith("BCa bootstrap over tasks")


def test_table_with_a_status_column(tmp_path):
    f = tmp_path / "cases.csv"
    f.write_text("task_id,final_score,status\na,1,PASS\nb,,ERROR\nc,0,FAIL\nd,1,PASS\ne,1,PASS\n")
    run = da.load_run(f)
    check_bounds(da.tables.failure_bounds(run), 3, 5, 1)


def test_leaderboard_columns():
    t = pd.DataFrame({"run_id": ["a"] * 5 + ["b"] * 5, "task_id": list("vwxyz") * 2,
                      "final_score": [1, 1, 0, 1, None, 1, 0, 0, 0, 1.0],
                      "error": [None] * 4 + ["Timeout"] + [None] * 5})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # no tokens or runtime columns
        lb = da.tables.sweep.leaderboard(t, n_boot=200).set_index("run_id")
        plain = da.tables.sweep.leaderboard(t.drop(columns="error").fillna(0.0), n_boot=50)
    assert lb.at["a", "n_errored"] == 1 and lb.at["b", "n_errored"] == 0
    assert lb.at["a", "answer_accuracy_errors_as_failures"] == pytest.approx(3 / 5)
    assert lb.at["a", "answer_accuracy_errors_as_successes"] == pytest.approx(4 / 5)
    assert lb.at["a", "answer_accuracy_errors_as_failures_ci_low"] == pytest.approx(wilson(3, 5)[0])
    assert lb.at["a", "answer_accuracy_errors_as_successes_ci_high"] == \
        pytest.approx(wilson(4, 5)[1])
    assert lb.at["b", "answer_accuracy_errors_as_failures"] == pytest.approx(2 / 5)
    assert lb.at["a", "answer_accuracy"] == pytest.approx(3 / 4)  # shared tasks v..y
    assert "n_errored" not in plain.columns


def test_eval_v2_file_with_a_status_column(tmp_path):
    """An eval-v2 task file with a ``status`` column (not in the catalogue: read as a table's)."""
    import csv
    src = Path(__file__).parents[1] / "data" / "sample_runs" / "baseline_react" / "task_metrics.csv"
    with open(src, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    errored_rows = {0, 5}
    for i, r in enumerate(rows):
        r["status"] = "ERROR" if i in errored_rows else "OK"
        if i == 0:
            r["final_score"] = ""  # an errored task without a score; task 5 keeps its score
    (tmp_path / "run").mkdir()
    with open(tmp_path / "run" / "task_metrics.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=[*rows[0]])
        w.writeheader()
        w.writerows(rows)
    run = da.load_run(tmp_path / "run")
    k = sum(float(r["final_score"]) >= 0.8 for i, r in enumerate(rows) if i not in errored_rows)
    check_bounds(da.tables.failure_bounds(run), k, len(rows), 2)
