"""The parse cache: exact round trip, an entry served only when it can be trusted (damaged,
truncated and foreign entries are misses: re-read and rewritten), invalidation, location, clear."""

from __future__ import annotations

import hashlib
import shutil
import warnings
from pathlib import Path

import pandas as pd
import pytest

from dabench_analysis import load
from dabench_analysis.load import _csv as load_csv
from dabench_analysis.load import cache
from dabench_analysis.schema._files import LEGACY_TASK_FILE
from dabench_analysis.synthetic import generate_run

FILES = ("task_metrics.csv", "trajectory.csv", "tool_calls.csv")


@pytest.fixture
def cache_env(tmp_path, monkeypatch):
    """An empty cache directory of our own (never the user's)."""
    root = tmp_path / "cache"
    monkeypatch.setenv(cache.ENV_VAR, str(root))
    monkeypatch.setattr(cache, "_warned", set())
    return root


@pytest.fixture(scope="module")
def run_dirs(tmp_path_factory):
    root = tmp_path_factory.mktemp("cache_runs")
    dirs = [generate_run(root, run_id=f"cache_run_{i}", n_tasks=10, seed=3 + i, replays=False)
            for i in range(2)]
    for d in dirs:  # one task file each: the counts below are of task, steps and calls files
        (d / LEGACY_TASK_FILE).unlink()
    return dirs


@pytest.fixture
def parses(monkeypatch):
    """The number of files parsed (a parse = a cache miss)."""
    calls = []
    real = load_csv.parse
    monkeypatch.setattr(load_csv, "parse", lambda *a, **k: calls.append(1) or real(*a, **k))
    return calls


def _frames(run_dir, **kw):
    run = load.load_run(run_dir, include_text=True, **kw)
    return run.tasks, run.trajectory, run.tool_calls, sorted(map(str, run.findings))


def _same(a, b):
    for x, y in zip(a[:3], b[:3], strict=True):
        pd.testing.assert_frame_equal(x, y, check_exact=True)
    assert a[3] == b[3]


def _entries(root: Path) -> list[Path]:
    return sorted((root / "v2").glob("*/*.arrow"))


def test_cached_frames_identical_to_uncached(cache_env, run_dirs, parses):
    direct = _frames(run_dirs[0], cache=False)
    assert len(parses) == 3
    cold = _frames(run_dirs[0])
    hit = _frames(run_dirs[0])
    assert len(parses) == 6  # the cold load parsed its three files, the hit none
    _same(direct, cold)
    _same(direct, hit)
    assert len(_entries(cache_env)) == 3


def _damage(entry: Path, how: str, other: bytes) -> None:
    data = entry.read_bytes()
    if how == "truncate":
        entry.write_bytes(data[: len(data) // 2])
    elif how == "flip":  # a byte inside the values, not the trailer
        i = len(data) // 3
        entry.write_bytes(data[:i] + bytes([data[i] ^ 0x5A]) + data[i + 1:])
    elif how == "foreign":  # another run's entry of the same kind of file
        entry.write_bytes(other)
    elif how == "empty":
        entry.write_bytes(b"")


@pytest.mark.parametrize("how", ["truncate", "flip", "foreign", "empty"])
@pytest.mark.parametrize("file", FILES)
def test_damaged_entries_are_misses_reread_and_rewritten(cache_env, run_dirs, parses, how,
                                                         file):
    direct = _frames(run_dirs[0], cache=False)
    _frames(run_dirs[1])  # the other run's entries
    other = {p.read_bytes() for p in _entries(cache_env)}
    _frames(run_dirs[0])
    mine = [p for p in _entries(cache_env) if p.read_bytes() not in other]
    assert len(mine) == 3
    by_file = {cache_lookup_name(p): p for p in mine}
    entry = by_file[file]
    foreign = next(p.read_bytes() for p in _entries(cache_env)
                   if p not in mine and cache_lookup_name(p) == file)
    _damage(entry, how, foreign)
    before = len(parses)
    _same(direct, _frames(run_dirs[0]))  # the damaged entry is not served
    assert len(parses) == before + 1  # exactly that file is parsed again
    rewritten = entry.read_bytes()
    assert rewritten.endswith(b"DABENCH2") and rewritten != foreign
    _same(direct, _frames(run_dirs[0]))
    assert len(parses) == before + 1  # and the rewritten entry is a hit


def cache_lookup_name(entry: Path) -> str:
    """The file an entry was made from (read from its metadata, as a user would inspect it)."""
    import json

    import pyarrow as pa

    data = entry.read_bytes()
    length = int.from_bytes(data[-16:-8], "little")
    reader = pa.ipc.open_file(pa.py_buffer(data[:length]))
    return json.loads(reader.schema.metadata[b"dabench.cache"])["request"]["file"]


def test_sweep_and_single_run_share_entries(cache_env, run_dirs, parses):
    single = [_frames(d) for d in run_dirs]
    n = len(parses)
    runs = load.load_runs(run_dirs, include_text=True, progress=False)
    runs.trajectory, runs.tool_calls  # noqa: B018 - loads them
    assert len(parses) == n  # one cache: the sweep is served from the runs' entries
    for one, run in zip(single, runs, strict=True):
        _same(one, (run.tasks, run.trajectory, run.tool_calls, sorted(map(str, run.findings))))


def test_same_size_same_mtime_different_content_misses(cache_env, tmp_path, parses):
    run = tmp_path / "run"
    run.mkdir()
    p = run / "task_metrics.csv"
    p.write_text("task_id,difficulty,final_score\nt1,Easy,0.50\n")
    first = load.load_run(run).tasks
    st = p.stat()
    p.write_text("task_id,difficulty,final_score\nt1,Easy,0.75\n")  # same size
    import os

    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
    again = load.load_run(run).tasks
    assert first["final_score"].tolist() == [0.5] and again["final_score"].tolist() == [0.75]
    assert len(parses) == 2


def test_request_is_part_of_the_key(cache_env, run_dirs, parses):
    whole = load.load_run(run_dirs[0]).tasks
    some = load.load_run(run_dirs[0], columns=["final_score"]).tasks
    assert len(parses) == 2 and some.shape[1] < whole.shape[1]
    load.load_run(run_dirs[0], columns=["final_score", "final_score"])
    assert len(parses) == 2  # the same set of columns
    assert cache.info()["entries"] == 2


def test_entries_live_in_the_cache_dir_never_in_the_run(cache_env, run_dirs):
    before = sorted(p.name for p in run_dirs[0].rglob("*"))
    _frames(run_dirs[0])
    assert sorted(p.name for p in run_dirs[0].rglob("*")) == before
    entries = _entries(cache_env)
    assert cache.info() | {"toolkit": None} == {
        "path": str(cache_env), "entries": 3, "bytes": sum(p.stat().st_size for p in entries),
        "toolkit": None}


def test_cache_dir_inside_the_run_dir_is_refused(tmp_path, monkeypatch, run_dirs, parses):
    run = tmp_path / "run"
    shutil.copytree(run_dirs[0], run)
    monkeypatch.setenv(cache.ENV_VAR, str(run / ".cache"))
    monkeypatch.setattr(cache, "_warned", set())
    with pytest.warns(UserWarning, match="inside the run directory"):
        tasks = load.load_run(run).tasks
    assert len(parses) == 1 and len(tasks) == 10
    assert not (run / ".cache").exists()


def test_unwritable_cache_warns_once_and_still_loads(tmp_path, monkeypatch, run_dirs, parses):
    blocker = tmp_path / "not_a_dir"
    blocker.write_text("x")
    monkeypatch.setenv(cache.ENV_VAR, str(blocker / "cache"))
    monkeypatch.setattr(cache, "_warned", set())
    with pytest.warns(UserWarning, match="cannot write to the cache directory"):
        first = load.load_run(run_dirs[0]).tasks
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = load.load_run(run_dirs[0]).tasks
    assert len(parses) == 2
    pd.testing.assert_frame_equal(first, again)


def test_parse_errors_are_not_cached(cache_env, tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "task_metrics.csv").write_text("task_id;final_score\nt1;0.5\n")
    for _ in range(2):
        with pytest.raises(load.RunLoadError, match="delimited"):
            load.load_run(run)
    assert cache.info()["entries"] == 0


def test_clear_removes_only_cache_entries(cache_env, run_dirs, parses):
    _frames(run_dirs[0])
    other = cache_env / "keep.txt"
    other.write_text("not ours")
    size = cache.info()["bytes"]
    assert cache.clear() == {"path": str(cache_env), "removed": 3, "bytes": size}
    assert cache.info()["entries"] == 0
    assert other.read_text() == "not ours"
    load.load_run(run_dirs[0])
    assert len(parses) == 4


def test_default_dir_is_the_user_cache_dir(monkeypatch):
    from platformdirs import user_cache_dir

    monkeypatch.delenv(cache.ENV_VAR, raising=False)
    assert str(cache.cache_dir()) == str(
        Path(user_cache_dir("dabench-analysis", appauthor=False)).resolve())


def test_file_digest(tmp_path, monkeypatch):
    p = tmp_path / "f"
    p.write_bytes(b"abc")
    algo, hexdigest = cache.file_digest(p).split(":")
    if algo == "xxh3_128":
        import xxhash

        assert hexdigest == xxhash.xxh3_128(b"abc").hexdigest()
    monkeypatch.setattr(cache, "_HASH_NAME", "sha256")
    monkeypatch.setattr(cache, "_HASH", hashlib.sha256)  # the fallback without xxhash
    # FIPS 180-2 test vector: SHA-256("abc")
    expected = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert cache.file_digest(p) == f"sha256:{expected}"
    assert cache.digest(b"abc") == f"sha256:{expected}"


@pytest.mark.parametrize("size", [0, 1, 5, (1 << 18) - 1, 1 << 18, (1 << 18) + 1, 3 << 18])
@pytest.mark.parametrize("seed", [0, 1])
def test_scan_of_a_file_equals_counting_its_bytes(size, seed, monkeypatch):
    """pipeline.scan (digest, CR, quote parity, chunk by chunk) against the whole bytes counted
    by Python's bytes methods and hashed by hashlib: chunk edges at 2**18 bytes included."""
    import random

    from dabench_analysis.load import _pipeline as pipeline

    monkeypatch.setattr(cache, "_HASH_NAME", "sha256")
    monkeypatch.setattr(cache, "_HASH", hashlib.sha256)
    rng = random.Random(seed * 1000 + size)
    data = bytes(rng.choice(b'ab,"\n\r ') if seed else rng.choice(b'ab,"\n ')
                 for _ in range(size))
    digest, has_cr, odd = pipeline.scan(memoryview(data))
    assert digest == f"sha256:{hashlib.sha256(data).hexdigest()}"
    assert has_cr == (b"\r" in data)
    assert odd == (data.count(b'"') % 2 == 1)


def test_a_quote_in_the_last_byte_of_a_chunk_is_counted():
    from dabench_analysis.load import _pipeline as pipeline

    data = b"a" * ((1 << 18) - 1) + b'"' + b"b" * 10 + b"\r"
    _, has_cr, odd = pipeline.scan(data)
    assert (has_cr, odd) == (True, True)
    assert pipeline.scan(data + b'"')[2] is False
