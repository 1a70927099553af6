"""The packaged deploy artefact, built once per test run (chalice package takes ~10 s)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="session")
def packaged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """build/prod as `make package` leaves it: sam.json, its SAM expansion, the zips; cfn-lint clean on both."""
    out = tmp_path_factory.mktemp("package")
    subprocess.run([sys.executable, "deploy/package.py", "--stage", "prod", "--out", str(out)], cwd=ROOT, check=True, capture_output=True)
    subprocess.run([sys.executable, "deploy/expand.py", str(out / "sam.json"), str(out / "expanded.json")], cwd=ROOT, check=True, capture_output=True)
    lint = subprocess.run([os.path.join(os.path.dirname(sys.executable), "cfn-lint"), str(out / "sam.json"), str(out / "expanded.json")],
                          capture_output=True, text=True)
    assert lint.returncode == 0, lint.stdout + lint.stderr  # no errors, no warnings (W3660 included), as SAM and as expanded
    assert (out / "deployment.zip").stat().st_size > 0
    return out


def load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())  # type: ignore[no-any-return]
