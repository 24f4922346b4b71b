"""The parse cache: exact round trip of frames and findings, invalidation, location, clear."""

from __future__ import annotations

import os
import shutil
import warnings

import pandas as pd
import pytest

from dabench_analysis import load, schema
from dabench_analysis.load import cache
from dabench_analysis.synthetic import generate_run


@pytest.fixture
def cache_env(tmp_path, monkeypatch):
    """An empty cache directory of our own (never the user's)."""
    root = tmp_path / "cache"
    monkeypatch.setenv(cache.ENV_VAR, str(root))
    monkeypatch.setattr(cache, "_warned", set())
    return root


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    return generate_run(tmp_path_factory.mktemp("cache_runs"), run_id="cache_run", n_tasks=10,
                        seed=3, replays=False)


class Counting:
    """``load.read_table`` that counts its calls (a call = a cache miss)."""

    def __init__(self):
        self.calls = 0

    def __call__(self, *args, **kwargs):
        self.calls += 1
        return load.read_table(*args, **kwargs)


def _read(path, catalogue=schema.TASK_COLUMNS, **kw):
    reader = Counting()
    df, found = cache.cached_read(reader, path, catalogue, **kw)
    return df, found, reader.calls


def _folder(tmp_path):
    """A run folder beside (not containing) the cache directory."""
    d = tmp_path / "run"
    d.mkdir(exist_ok=True)
    return d


def _bad_csv(tmp_path):
    """A task file with findings: a flag of 2, a score of 75, an unknown difficulty, a short row."""
    p = _folder(tmp_path) / "task_metrics.csv"
    p.write_text("task_id,difficulty,final_score,execution_success,llm_calls\n"
                 "t1,Easy,0.9,1,3\n"
                 "t2,Legendary,75,2,4\n"
                 "t3,hard,0.5\n"
                 "t4,extreme,,0,\n")
    return p


@pytest.mark.parametrize("file, catalogue, kw", [
    ("task_metrics.csv", schema.TASK_COLUMNS, {"aliases": schema.ALIASES}),
    ("trajectory.csv", schema.TRAJECTORY_COLUMNS,
     {"columns": [c for c in schema.TRAJECTORY_COLUMNS
                  if c not in schema.TEXT_TRAJECTORY_COLUMNS]}),
    ("trajectory.csv", schema.TRAJECTORY_COLUMNS, {}),
    ("tool_calls.csv", schema.TOOL_CALL_COLUMNS, {}),
])
def test_cached_frame_identical_to_uncached(cache_env, run_dir, file, catalogue, kw):
    direct, found = load.read_table(run_dir / file, catalogue, **kw)
    first, found1, calls1 = _read(run_dir / file, catalogue, **kw)
    hit, found2, calls2 = _read(run_dir / file, catalogue, **kw)
    assert (calls1, calls2) == (1, 0)
    pd.testing.assert_frame_equal(hit, direct, check_exact=True, check_index_type=True)
    assert found2 == found1 == found
    assert list(hit.dtypes.astype(str)) == list(direct.dtypes.astype(str))


def test_dtypes_round_trip_exactly(cache_env, run_dir):
    _read(run_dir / "task_metrics.csv")
    hit, _, calls = _read(run_dir / "task_metrics.csv")
    assert calls == 0
    diff = hit["difficulty"].dtype
    assert diff.ordered and list(diff.categories) == ["Easy", "Medium", "Hard", "Extreme"]
    assert str(hit["execution_success"].dtype) == "boolean"
    assert str(hit["llm_calls"].dtype) == "Int64"
    assert str(hit["final_score"].dtype) == "float64"
    assert hit["task_id"].dtype == pd.StringDtype()


def test_findings_and_row_gaps_are_cached(cache_env, tmp_path):
    p = _bad_csv(tmp_path)
    direct, found = load.read_table(p, schema.TASK_COLUMNS)
    _read(p)
    hit, found_hit, calls = _read(p)
    assert calls == 0
    assert found_hit == found
    assert {f.check for f in found_hit} >= {"flag_value", "range", "enum_value",
                                            "enum_coerced", "column_count"}
    assert all(type(f) is load.Finding for f in found_hit)
    assert hit.index.tolist() == [0, 1, 3]  # the short row 3 was dropped
    pd.testing.assert_frame_equal(hit, direct)
    # unused categories survive: no row is Medium
    assert list(hit["difficulty"].cat.categories) == ["Easy", "Medium", "Hard", "Extreme"]


@pytest.mark.parametrize("index", [pd.RangeIndex(3), pd.RangeIndex(2, 8, 2, name="row"),
                                   pd.Index([0, 4, 9]), pd.Index(["a", "b", "c"], name="k")])
def test_every_dtype_and_index_round_trips(cache_env, tmp_path, index):
    """Frames of every dtype a loader may return, incl. the awkward ones."""
    frame = pd.DataFrame({
        "ordered": pd.Categorical(["Hard", None, "Easy"], ordered=True,
                                  categories=["Easy", "Medium", "Hard", "Extreme"]),
        "unordered_int": pd.Categorical([1, 2, 1], categories=[2, 1, 3]),
        "all_missing_cat": pd.Categorical([None] * 3, categories=["x", "y"]),
        "flag": pd.array([True, None, False], dtype="boolean"),
        "count": pd.array([1, None, 3], dtype="Int64"),
        "score": [0.5, float("nan"), 1.0],
        "int": [1, 2, 3],
        "bool": [True, False, True],
        "text": pd.array(["a", None, "c"], dtype="string"),
        "text_python": pd.array(["a", None, "c"], dtype=pd.StringDtype("python")),
        "text_nan": pd.Series(["a", None, "c"], dtype="str"),
        "when": pd.to_datetime(["2026-06-14T09:00:00Z", None, "2026-06-14T09:01:00Z"]),
    }, index=index)
    p = _folder(tmp_path) / "frame.csv"
    p.write_text("x\n")

    def reader(*_, **__):
        return frame.copy(), []

    cache.cached_read(reader, p, {})
    hit, found = cache.cached_read(lambda *a, **k: pytest.fail("miss"), p, {})
    pd.testing.assert_frame_equal(hit, frame, check_exact=True, check_index_type=True,
                                  check_categorical=True)
    assert list(hit.dtypes.map(repr)) == list(frame.dtypes.map(repr))
    assert found == []


def test_empty_frame_round_trips(cache_env, tmp_path):
    p = _folder(tmp_path) / "task_metrics.csv"
    p.write_text("task_id,difficulty,final_score,execution_success\n")
    direct, found = load.read_table(p, schema.TASK_COLUMNS)
    _read(p)
    hit, found_hit, calls = _read(p)
    assert calls == 0 and len(hit) == 0
    pd.testing.assert_frame_equal(hit, direct)
    assert found_hit == found


def test_same_size_same_mtime_different_content_misses(cache_env, tmp_path):
    p = _folder(tmp_path) / "task_metrics.csv"
    p.write_text("task_id,final_score\nt1,0.25\n")
    first, _, _ = _read(p)
    st = p.stat()
    p.write_text("task_id,final_score\nt1,0.75\n")  # same length
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (p.stat().st_size, p.stat().st_mtime_ns) == (st.st_size, st.st_mtime_ns)
    again, _, calls = _read(p)
    assert calls == 1
    assert first["final_score"].tolist() == [0.25]
    assert again["final_score"].tolist() == [0.75]
    assert cache.info()["entries"] == 1  # the stale entry was replaced, not kept beside


def test_touching_mtime_misses(cache_env, tmp_path):
    p = _folder(tmp_path) / "task_metrics.csv"
    p.write_text("task_id,final_score\nt1,0.25\n")
    _read(p)
    st = p.stat()
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    _, _, calls = _read(p)
    assert calls == 1
    _, _, calls = _read(p)
    assert calls == 0


def test_request_is_part_of_the_key(cache_env, run_dir):
    all_cols, _, _ = _read(run_dir / "task_metrics.csv")
    some, _, calls = _read(run_dir / "task_metrics.csv", columns=["final_score"])
    assert calls == 1 and some.shape[1] < all_cols.shape[1]
    _, _, calls = _read(run_dir / "task_metrics.csv", columns=["final_score", "final_score"])
    assert calls == 0  # same set of columns
    assert cache.info()["entries"] == 2


def test_entries_live_in_the_cache_dir_never_in_the_run(cache_env, run_dir):
    before = sorted(p.name for p in run_dir.rglob("*"))
    _read(run_dir / "task_metrics.csv")
    assert sorted(p.name for p in run_dir.rglob("*")) == before
    entries = list((cache_env / "v1").glob("*/*.parquet"))
    assert len(entries) == 1
    assert cache.info() | {"toolkit": None} == {"path": str(cache_env), "entries": 1,
                                                 "bytes": entries[0].stat().st_size,
                                                 "toolkit": None}


def test_cache_dir_inside_the_run_dir_is_refused(tmp_path, monkeypatch, run_dir):
    run = tmp_path / "run"
    shutil.copytree(run_dir, run)
    monkeypatch.setenv(cache.ENV_VAR, str(run / ".cache"))
    monkeypatch.setattr(cache, "_warned", set())
    with pytest.warns(UserWarning, match="inside the run directory"):
        df, _, calls = _read(run / "task_metrics.csv")
    assert calls == 1 and len(df) == 10
    assert not (run / ".cache").exists()


def test_unwritable_cache_warns_once_and_still_loads(tmp_path, monkeypatch, run_dir):
    blocker = tmp_path / "not_a_dir"
    blocker.write_text("x")
    monkeypatch.setenv(cache.ENV_VAR, str(blocker / "cache"))
    monkeypatch.setattr(cache, "_warned", set())
    with pytest.warns(UserWarning, match="cannot write to the cache directory"):
        df, _, _ = _read(run_dir / "task_metrics.csv")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        df2, _, calls = _read(run_dir / "task_metrics.csv")
    assert calls == 1
    pd.testing.assert_frame_equal(df, df2)


def test_corrupt_entry_is_a_miss_and_is_rewritten(cache_env, run_dir):
    first, _, _ = _read(run_dir / "task_metrics.csv")
    (entry,) = (cache_env / "v1").glob("*/*.parquet")
    entry.write_bytes(b"not parquet")
    again, _, calls = _read(run_dir / "task_metrics.csv")
    assert calls == 1
    pd.testing.assert_frame_equal(first, again)
    _, _, calls = _read(run_dir / "task_metrics.csv")
    assert calls == 0


def test_parse_errors_are_not_cached(cache_env, tmp_path):
    p = _folder(tmp_path) / "task_metrics.csv"
    p.write_text("task_id;final_score\nt1;0.5\n")
    for _ in range(2):
        with pytest.raises(load.RunLoadError, match="delimited"):
            _read(p)
    assert cache.info()["entries"] == 0


def test_clear_removes_only_cache_entries(cache_env, run_dir):
    _read(run_dir / "task_metrics.csv")
    _read(run_dir / "tool_calls.csv", schema.TOOL_CALL_COLUMNS)
    other = cache_env / "keep.txt"
    other.write_text("not ours")
    size = cache.info()["bytes"]
    assert cache.clear() == {"path": str(cache_env), "removed": 2, "bytes": size}
    assert cache.info()["entries"] == 0
    assert other.read_text() == "not ours"
    _, _, calls = _read(run_dir / "task_metrics.csv")
    assert calls == 1


def test_default_dir_is_the_user_cache_dir(monkeypatch):
    from platformdirs import user_cache_dir

    monkeypatch.delenv(cache.ENV_VAR, raising=False)
    assert cache.cache_dir() == cache.cache_dir().resolve()
    assert str(cache.cache_dir()) == str(
        __import__("pathlib").Path(user_cache_dir("dabench-analysis", appauthor=False)).resolve())


def test_file_digest(tmp_path, monkeypatch):
    import hashlib

    p = tmp_path / "f"
    p.write_bytes(b"abc")
    algo, hexdigest = cache.file_digest(p).split(":")
    if algo == "xxh3_128":
        import xxhash

        assert hexdigest == xxhash.xxh3_128(b"abc").hexdigest()
    monkeypatch.setattr(cache, "_HASH_NAME", "sha256")
    monkeypatch.setattr(cache, "_HASH", "sha256")  # the fallback without xxhash
    # FIPS 180-2 test vector: SHA-256("abc")
    expected = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert hashlib.sha256(b"abc").hexdigest() == expected
    assert cache.file_digest(p) == f"sha256:{expected}"
