"""What a person sees in JupyterLab (issue 27, item 5): JupyterLab on 127.0.0.1 with a token, on a
copy of the notebooks (Run All saves outputs), driven by Playwright with the system's Chromium
(Debian's package; never ``playwright install``). ``notebooks/explore.ipynb`` is run whole, a
task is selected in the explorer, and the rendered page is checked: the step table's text
columns are at least 200 px wide, the task's first failing step (counted from trajectory.csv
here) is highlighted, rows are not one word per line, no output scrolls sideways at 1280 px, no
cell shows an error; screenshots are written under the test's folder.

Skipped, with the reason, where Chromium, Playwright or JupyterLab is absent, except when
``DABENCH_BROWSER_TEST=required`` (``.ci/run`` sets it after installing Chromium): then a
missing browser fails the test.
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
CHROMIUM = os.environ.get("DABENCH_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
REQUIRED = os.environ.get("DABENCH_BROWSER_TEST") == "required"
#: Chromium's flags on a machine without network: no background connections, no GPU, no sandbox.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]
#: The task selected in the explorer: failed, with a failing step that is not its first step.
TASK = "task_47"
WIDTH, HEIGHT = 1280, 1500
#: JupyterLab settings of the session: every cell rendered (no windowing), no news prompt.
SETTINGS = {"@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
            "@jupyterlab/apputils-extension/notification.jupyterlab-settings":
                {"fetchNews": "false", "checkForUpdates": False}}


def _missing() -> str | None:
    """Why the browser test cannot run here (None: it can)."""
    if not (Path(CHROMIUM).is_file() and os.access(CHROMIUM, os.X_OK)):
        return (f"Chromium not found ({CHROMIUM}): `apt-get install -y chromium` "
                "(.ci/run installs it), or set DABENCH_CHROMIUM")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed: pip install -e '.[test]'"
    if not (BIN / "jupyter-lab").is_file():
        return "JupyterLab is not installed in this environment: pip install -e '.[lab]'"
    return None


def _require_browser() -> None:
    """Skip, saying why, where the browser test cannot run; fail instead on CI."""
    reason = _missing()
    if reason:
        (pytest.fail if REQUIRED else pytest.skip)(reason)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """JupyterLab serving a copy of notebooks/ (data/ linked beside it, read only), with this
    environment's kernel: (base URL, token, the copy's folder). One server for the module."""
    _require_browser()
    root = tmp_path_factory.mktemp("lab")
    shutil.copytree(ROOT / "notebooks", root / "notebooks")
    (root / "data").symlink_to(ROOT / "data", target_is_directory=True)
    for name, value in SETTINGS.items():
        dest = root / "settings" / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(json.dumps(value))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    token = secrets.token_hex(16)
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(root / "config"),
           "JUPYTER_RUNTIME_DIR": str(root / "runtime"),
           "JUPYTERLAB_SETTINGS_DIR": str(root / "settings"),
           "JUPYTERLAB_WORKSPACES_DIR": str(root / "workspaces"),
           "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("MPLBACKEND", None)  # the kernel's inline backend draws the figures
    cmd = [str(BIN / "jupyter-lab"), "--no-browser", "--ip=127.0.0.1", f"--port={port}",
           "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
           f"--ServerApp.root_dir={root}", "--LabApp.check_for_updates_class="
           "jupyterlab.NeverCheckForUpdate", "--LabApp.news_url=", "--MappingKernelManager."
           "default_kernel_name=python3"] + (["--allow-root"] if os.geteuid() == 0 else [])
    log = (root / "lab.log").open("w")
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=root)
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_for(f"{base}/api/status?token={token}", proc, root / "lab.log")
        yield base, token, root
    finally:
        proc.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=20)
        if proc.poll() is None:
            proc.kill()
        log.close()


def _wait_for(url: str, proc: subprocess.Popen, log: Path, timeout: float = 90) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            pytest.fail(f"JupyterLab exited ({proc.returncode}):\n{log.read_text()[-3000:]}")
        with contextlib.suppress(OSError):
            with urllib.request.urlopen(url, timeout=5) as r:  # noqa: S310 (127.0.0.1)
                if r.status == 200:
                    return
        time.sleep(0.5)
    pytest.fail(f"JupyterLab did not answer in {timeout} s:\n{log.read_text()[-3000:]}")


def _first_failing_step(task: str) -> int:
    """From trajectory.csv with the csv module: the lowest step_id of the task's steps whose
    ``success`` is false (seed 000 §View Trajectory: ``task_traj[~task_traj['success']]``)."""
    path = ROOT / "data/sample_runs/baseline_react/trajectory.csv"
    with path.open(newline="", encoding="utf-8") as fh:
        failed = [int(r["step_id"]) for r in csv.DictReader(fh)
                  if r["task_id"] == task and r["success"].strip().lower() in ("0", "false")]
    assert failed, f"{task} has no failing step in {path}"
    return min(failed)


#: True when Run All has ended: every code cell run, or (a cell failed) none waiting any more.
ALL_RUN = """n => {
  const prompts = [...document.querySelectorAll('.jp-Notebook .jp-CodeCell .jp-InputPrompt')]
    .map(p => p.textContent);
  const run = prompts.filter(t => /\\[\\d+\\]/.test(t)).length;
  return prompts.length === n && (run === n || (run > 0 && !prompts.some(t => t.includes('*'))));
}"""
#: Outputs wider than their area (scrolling sideways): their text, cut.
SIDEWAYS = """() => [...document.querySelectorAll('.jp-Notebook .jp-OutputArea-output')]
  .filter(el => el.scrollWidth > el.clientWidth + 1)
  .map(el => el.textContent.slice(0, 80))"""


def _run_all(page, n_code: int) -> None:
    page.locator(".jp-Notebook .jp-Cell").first.wait_for(timeout=60_000)
    page.locator("#jp-main-statusbar").get_by_text("Idle").first.wait_for(timeout=90_000)
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()
    page.wait_for_function(ALL_RUN, arg=n_code, timeout=240_000)


def _select(explorer, task: str) -> None:
    listbox = explorer.locator(".dabench-task-list select")
    labels = [t.replace("\xa0", " ") for t in listbox.locator("option").all_inner_texts()]
    index = next(i for i, t in enumerate(labels) if t.split(" · ")[0] == task)
    listbox.select_option(index=index)
    explorer.locator(".dabench-task h4", has_text=f"Task {task}").wait_for(timeout=60_000)


def _saved(notebook: Path, timeout: float = 30) -> dict:
    """The notebook as JupyterLab saved it, once it holds the outputs of the run."""
    end = time.monotonic() + timeout
    while True:
        nb = json.loads(notebook.read_text())
        if all(c["execution_count"] for c in nb["cells"] if c["cell_type"] == "code") or \
                time.monotonic() > end:
            return nb
        time.sleep(0.5)


def _check_steps(steps, expected: int) -> None:
    """The step table: the first failing step (and only it) highlighted, text columns of
    200 px or more, rows of one or two lines."""
    first = steps.locator("tr.dabench-first-failure")
    assert first.count() == 1
    assert first.locator("td").first.inner_text().strip() == str(expected)
    colour = first.evaluate("el => getComputedStyle(el).backgroundColor")
    assert colour not in ("rgba(0, 0, 0, 0)", "transparent", "rgb(255, 255, 255)")
    for header in ("Thought", "Observation"):
        width = steps.locator("th", has_text=header).bounding_box()["width"]
        assert width >= 200, (header, width)
    heights = steps.locator("tbody tr").evaluate_all(
        "rows => rows.map(r => r.getBoundingClientRect().height)")
    line = steps.locator("tbody tr").first.evaluate(
        "r => parseFloat(getComputedStyle(r).lineHeight) || 16")
    assert heights and max(heights) < 2.6 * line + 12, (heights, line)


def test_explore_notebook_in_jupyterlab(lab, tmp_path):
    from playwright.sync_api import sync_playwright

    base, token, root = lab
    notebook = root / "notebooks" / "explore.ipynb"
    n_code = sum(c["cell_type"] == "code" for c in json.loads(notebook.read_text())["cells"])
    expected = _first_failing_step(TASK)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
            page.goto(f"{base}/lab/tree/notebooks/explore.ipynb?token={token}")
            _run_all(page, n_code)
            explorer = page.locator(".dabench-explorer").first
            explorer.wait_for(timeout=60_000)
            _select(explorer, TASK)
            page.keyboard.press("Control+s")
            steps = explorer.locator(".dabench-task table").first
            explorer.evaluate("e => e.scrollIntoView({block: 'start'})")
            page.screenshot(path=tmp_path / "explorer.png")
            _check_steps(steps, expected)
            # nothing scrolls sideways at 1280 px (Table 2, the task lists, the step tables)
            assert page.evaluate(SIDEWAYS) == []
            # no cell shows an error
            errors = page.locator(".jp-OutputArea-output[data-mime-type="
                                  "'application/vnd.jupyter.stderr']", has_text="Traceback")
            assert errors.count() == 0
            # a long text opens on a click, in the cell, on lines of the column's width
            long = steps.locator("tr.dabench-first-failure details").first
            long.locator("summary").click()
            assert long.evaluate("e => e.open")
            assert long.locator("div").inner_text() == long.locator("summary").get_attribute(
                "title")
            pair = page.locator(".dabench-explorer").nth(1)
            pair.evaluate("e => e.scrollIntoView({block: 'start'})")
            page.screenshot(path=tmp_path / "explorer_pair.png")
            assert "against" in pair.locator(".widget-html").first.inner_text()
            saved = _saved(notebook)
        finally:
            browser.close()
    outputs = [o for c in saved["cells"] if c["cell_type"] == "code" for o in c["outputs"]]
    assert not [o for o in outputs if o["output_type"] == "error"]
    assert all(c["execution_count"] for c in saved["cells"] if c["cell_type"] == "code")
    assert any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in outputs)
    assert (tmp_path / "explorer.png").stat().st_size > 10_000


@pytest.mark.parametrize("required", [False, True])
def test_without_chromium_the_test_skips_with_the_reason_except_on_ci(monkeypatch, required):
    """Where Chromium is absent the browser test is skipped and says why; with
    ``DABENCH_BROWSER_TEST=required`` (CI) it fails instead; .ci/run installs Chromium and sets
    that before ``make test``."""
    monkeypatch.setattr(sys.modules[__name__], "CHROMIUM", "/nonexistent/chromium")
    monkeypatch.setattr(sys.modules[__name__], "REQUIRED", required)
    outcome = pytest.fail.Exception if required else pytest.skip.Exception
    with pytest.raises(outcome, match=r"Chromium not found \(/nonexistent/chromium\): "
                                      r"`apt-get install -y chromium`"):
        _require_browser()
    ci = (ROOT / ".ci" / "run").read_text()
    assert ci.index("apt-get update") < ci.index("apt-get install -y chromium") < \
        ci.index("export DABENCH_BROWSER_TEST=required") < ci.index("make test")
