"""`dabench-analysis report --scheduler ADDRESS` on a local Dask cluster writes what a local run
writes, in the same places."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("distributed")


def _tree(root):
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))


def test_report_on_a_dask_cluster_matches_a_local_run(tiny_runs, tmp_path, monkeypatch):
    from distributed import LocalCluster
    from typer.testing import CliRunner

    from dabench_analysis.load import cache
    from dabench_analysis.report._cli import app

    monkeypatch.setenv("MPLBACKEND", "Agg")  # inherited by the worker and its kernels
    monkeypatch.setenv(cache.ENV_VAR, str(tmp_path / "cache"))
    base, _ = tiny_runs
    dask_out, local_out = tmp_path / "dask", tmp_path / "local"
    runner = CliRunner()
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                      dashboard_address=":0") as cluster:
        result = runner.invoke(app, ["report", str(base), "--out", str(dask_out),
                                     "--scheduler", cluster.scheduler_address])
        assert result.exit_code == 0, result.output
        ran = cluster.scheduler.task_prefixes.get("execute_job")
        assert ran is not None and sum(ran.state_counts.values()) >= 1  # it ran on the cluster
    local = runner.invoke(app, ["report", str(base), "--out", str(local_out), "--jobs", "1"])
    assert local.exit_code == 0, local.output
    files = _tree(dask_out)
    assert files == _tree(local_out)
    for expected in ("index.html", "tiny_base/report.ipynb", "tiny_base/report.html",
                     "tiny_base/summary.json", "tiny_base/tables/main_results.csv"):
        assert expected in files
    assert not [f for f in files if f.endswith(".tmp") or "failed" in f]
    on_dask, here = (json.loads((o / "tiny_base" / "summary.json").read_text())
                     for o in (dask_out, local_out))
    # the same numbers and input hashes; the manifest's time and output folder differ
    assert on_dask.pop("manifest")["files"] == here.pop("manifest")["files"]
    assert on_dask == here
