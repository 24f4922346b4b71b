"""The parse cache trusts a file's stamp only when it may (git's racily clean rule), and the
sweep-level entry of ``load_runs``: an unchanged stamp is served unread; a changed stamp (also
within the same second, with the same size and the modification time set back), or a file
written within 2 s of its read, is read and hashed; damaged entries are refused.

Expected values are the files' own bytes, read with :mod:`csv` here."""

from __future__ import annotations

import csv
import json
import os
import time
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

from dabench_analysis import load
from dabench_analysis.load import _csv as load_csv
from dabench_analysis.load import _pipeline as pipeline
from dabench_analysis.load import cache
from dabench_analysis.schema._files import LEGACY_TASK_FILE, REPLAY_FILE
from dabench_analysis.synthetic import generate_run

TASKS = "task_metrics.csv"


@pytest.fixture
def cache_env(tmp_path, monkeypatch):
    """An empty cache directory of our own (never the user's)."""
    root = tmp_path / "cache"
    monkeypatch.setenv(cache.ENV_VAR, str(root))
    monkeypatch.setattr(cache, "_warned", set())
    return root


@pytest.fixture
def trusting(monkeypatch):
    """No racily clean margin: files written before a load count as clean (as files written
    more than 2 s before it do), so that a test need not wait 2 s."""
    monkeypatch.setattr(cache, "RACY_NS", 0)


@pytest.fixture
def sweep(tmp_path):
    root = tmp_path / "sweep"
    dirs = [generate_run(root, run_id=f"run_{i}", n_tasks=12, seed=20 + i, replays=False)
            for i in range(3)]
    for d in dirs:  # one task file each: counts below are of task files
        (d / LEGACY_TASK_FILE).unlink()
    return root


@pytest.fixture
def counts(monkeypatch):
    """Files read and hashed (``scan``) and files parsed (``csv.parse``)."""
    n = {"scan": 0, "parse": 0}
    real_scan, real_parse = pipeline.scan, load_csv.parse

    def scan(*a, **k):
        n["scan"] += 1
        return real_scan(*a, **k)

    def parse(*a, **k):
        n["parse"] += 1
        return real_parse(*a, **k)

    monkeypatch.setattr(pipeline, "scan", scan)
    monkeypatch.setattr(load_csv, "parse", parse)
    return n


def _scores(path: Path) -> list[float]:
    with path.open(newline="", encoding="utf-8") as fh:
        return [float(r["final_score"]) for r in csv.DictReader(fh)]


def _rewrite_score(path: Path, row: int = 0) -> float:
    """Change one final_score in place, same file size, modification time set back; the new
    value."""
    st = path.stat()
    with path.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    j = rows[0].index("final_score")
    old = rows[row + 1][j]
    new = "0." + ("1" if old[-1] != "1" else "2") * (len(old) - 2) if len(old) >= 3 \
        else ("1" if old != "1" else "0")
    rows[row + 1][j] = new
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh, lineterminator="\n").writerows(rows)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns
    return float(new)


def _sweep_entry(root: Path) -> Path:
    found = []
    for p in (root / "v2").glob("*/*.arrow"):
        data = p.read_bytes()
        length = int.from_bytes(data[-16:-8], "little")
        meta = pa.ipc.open_file(pa.py_buffer(data[:length])).schema.metadata[b"dabench.cache"]
        if json.loads(meta)["request"].get("kind") == "sweep":
            found.append(p)
    assert len(found) == 1
    return found[0]


def test_unchanged_stamp_is_served_without_reading(cache_env, trusting, sweep, counts):
    run = sweep / "run_0"
    cold = load.load_run(run).tasks
    assert counts == {"scan": 1, "parse": 1}
    hit = load.load_run(run).tasks
    assert counts == {"scan": 1, "parse": 1}  # neither read nor parsed
    pd.testing.assert_frame_equal(cold, hit, check_exact=True)
    assert hit["final_score"].tolist() == _scores(run / TASKS)


def test_racily_clean_entry_is_read_and_hashed(cache_env, sweep, counts):
    run = sweep / "run_0"  # just written: within 2 s of the read
    load.load_run(run)
    load.load_run(run)
    assert counts == {"scan": 2, "parse": 1}  # read and hashed again, not parsed


@pytest.mark.parametrize("racy", [True, False], ids=["racily-clean", "stamp-trusted"])
def test_same_second_same_size_change_is_seen(cache_env, sweep, counts, monkeypatch, racy):
    if not racy:
        monkeypatch.setattr(cache, "RACY_NS", 0)
    run = sweep / "run_1"
    load.load_run(run)
    time.sleep(0.02)  # the kernel's timestamp clock ticks every 1-10 ms
    value = _rewrite_score(run / TASKS, row=2)  # ctime changes; size and mtime do not
    again = load.load_run(run).tasks
    assert again["final_score"].tolist() == _scores(run / TASKS)
    assert again["final_score"].iloc[2] == value
    assert counts["parse"] == 2


def test_file_replaced_by_rename_with_same_size_and_mtime_is_seen(cache_env, trusting, sweep,
                                                                  counts):
    run = sweep / "run_2"
    path = run / TASKS
    load.load_run(run)
    copy = run / "new.tmp"
    copy.write_bytes(path.read_bytes())
    value = _rewrite_score(copy, row=0)
    st = path.stat()
    os.utime(copy, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(copy, path)  # another inode
    again = load.load_run(run).tasks
    assert again["final_score"].iloc[0] == value
    assert again["final_score"].tolist() == _scores(path)


def test_restamped_file_with_same_bytes_is_hashed_not_parsed(cache_env, trusting, sweep,
                                                             counts):
    run = sweep / "run_0"
    load.load_run(run)
    os.utime(run / TASKS)  # touched: new times, same bytes
    load.load_run(run)
    assert counts == {"scan": 2, "parse": 1}
    load.load_run(run)  # the entry was restamped: trusted again
    assert counts == {"scan": 2, "parse": 1}


def _damage(entry: Path, how: str, other: bytes) -> None:
    data = entry.read_bytes()
    if how == "truncate":
        entry.write_bytes(data[: len(data) // 2])
    elif how == "flip":  # a byte inside the values, not the trailer
        i = len(data) // 3
        entry.write_bytes(data[:i] + bytes([data[i] ^ 0x5A]) + data[i + 1:])
    else:  # foreign: another run's entry
        entry.write_bytes(other)


@pytest.mark.parametrize("how", ["truncate", "flip", "foreign"])
def test_damaged_entry_is_refused_even_with_a_trusted_stamp(cache_env, trusting, sweep, counts,
                                                            how):
    a, b = sweep / "run_0", sweep / "run_1"
    load.load_run(b)
    other = {p: p.read_bytes() for p in (cache_env / "v2").glob("*/*.arrow")}
    expected = load.load_run(a).tasks
    (mine,) = [p for p in (cache_env / "v2").glob("*/*.arrow") if p not in other]
    _damage(mine, how, next(iter(other.values())))
    before = dict(counts)
    again = load.load_run(a).tasks
    assert counts["parse"] == before["parse"] + 1  # refused: parsed again
    pd.testing.assert_frame_equal(expected, again, check_exact=True)
    assert again["final_score"].tolist() == _scores(a / TASKS)


def test_sweep_hit_reads_no_file_and_equals_a_first_load(cache_env, trusting, sweep, counts,
                                                         monkeypatch):
    off = load.load_runs(sweep, cache=False, progress=False)
    load.load_runs(sweep, progress=False)
    calls = []
    real = pipeline.read_files
    monkeypatch.setattr(pipeline, "read_files", lambda *a, **k: calls.append(1) or real(*a, **k))
    before = dict(counts)
    hit = load.load_runs(sweep, progress=False)
    assert calls == [] and counts == before  # one entry, no task file opened
    pd.testing.assert_frame_equal(off.tasks, hit.tasks, check_exact=True)
    for x, y in zip(off, hit, strict=True):
        assert (x.run_id, x.path, x.source_rows, x.task_file) == \
            (y.run_id, y.path, y.source_rows, y.task_file)
        assert sorted(map(str, x.findings)) == sorted(map(str, y.findings))
        assert x.inputs == y.inputs
        assert y.tasks["final_score"].tolist() == _scores(y.path / TASKS)
        pd.testing.assert_frame_equal(x.tasks, y.tasks, check_exact=True)


@pytest.mark.parametrize("how", ["truncate", "flip"])
def test_damaged_sweep_entry_is_refused(cache_env, trusting, sweep, counts, how):
    first = load.load_runs(sweep, progress=False).tasks
    entry = _sweep_entry(cache_env)
    _damage(entry, how, b"")
    before = dict(counts)
    again = load.load_runs(sweep, progress=False).tasks
    assert counts == before  # refused; every task file's own entry served (trusted stamps)
    pd.testing.assert_frame_equal(first, again, check_exact=True)
    assert entry.read_bytes().endswith(b"DABENCH2")  # rewritten whole
    assert sum(again["final_score"].tolist(), 0.0) == pytest.approx(
        sum(sum(_scores(sweep / f"run_{i}" / TASKS)) for i in range(3)), abs=1e-9)


def test_one_changed_file_in_a_cached_sweep(cache_env, sweep, counts, monkeypatch):
    monkeypatch.setattr(cache, "RACY_NS", 0)
    load.load_runs(sweep, progress=False)
    time.sleep(0.02)
    value = _rewrite_score(sweep / "run_1" / TASKS, row=3)
    before = dict(counts)
    runs = load.load_runs(sweep, progress=False)
    assert counts["parse"] == before["parse"] + 1  # that file only
    assert counts["scan"] == before["scan"] + 1
    assert runs["run_1"].tasks["final_score"].iloc[3] == value
    for r in runs:
        assert r.tasks["final_score"].tolist() == _scores(r.path / TASKS)
    hit = load.load_runs(sweep, progress=False)  # the sweep entry rewritten: a hit again
    assert counts["parse"] == before["parse"] + 1
    pd.testing.assert_frame_equal(runs.tasks, hit.tasks, check_exact=True)


def test_a_new_task_folder_in_a_cached_sweep_is_seen(cache_env, trusting, sweep):
    runs = load.load_runs(sweep, progress=False)
    assert runs.tasks["replay_path"].isna().all()  # generated without replays
    run = sweep / "run_2"
    task_id = runs["run_2"].tasks["task_id"].iloc[0]
    (run / task_id).mkdir()  # the run folder's stamp changes
    (run / task_id / REPLAY_FILE).write_text("{}")
    again = load.load_runs(sweep, progress=False)
    assert again["run_2"].tasks["replay_path"].iloc[0] == str(run / task_id / REPLAY_FILE)
    assert again.tasks["replay_path"].notna().sum() == 1
