"""Build hook: the wheel carries the top-level ``notebooks/`` as ``dabench_analysis/notebooks/``.

``notebooks/`` stays the one copy in git (the one users open in JupyterLab); this copies its
``*.ipynb`` into the build tree, so ``dabench-analysis report`` works from an installed wheel in
any folder (``report.runner.NOTEBOOK_DIR``). An editable install copies nothing: it runs the
checkout's ``notebooks/``. Everything else is declared in ``pyproject.toml``; ``MANIFEST.in``
puts the notebooks into the sdist, from which ``python -m build`` builds the wheel.
"""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

NOTEBOOKS = Path(__file__).resolve().parent / "notebooks"


class BuildPyWithNotebooks(build_py):
    """``build_py`` that also copies ``notebooks/*.ipynb`` into the package's build folder."""

    def _notebook_targets(self) -> list[tuple[Path, Path]]:
        target = Path(self.build_lib, "dabench_analysis", "notebooks")
        return [(nb, target / nb.name) for nb in sorted(NOTEBOOKS.glob("*.ipynb"))]

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        pairs = self._notebook_targets()
        if not pairs:
            raise RuntimeError(f"no notebooks in {NOTEBOOKS}: the wheel would not run reports")
        for src, dst in pairs:
            self.mkpath(str(dst.parent))
            self.copy_file(str(src), str(dst))

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        extra = [] if getattr(self, "editable_mode", False) else [
            str(dst) for _, dst in self._notebook_targets()]
        return super().get_outputs(include_bytecode) + extra


setup(cmdclass={"build_py": BuildPyWithNotebooks})
