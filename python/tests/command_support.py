"""What the tests of the packaged command share: where things are, and running a command."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, Optional, Sequence

import pytest

SOURCE_DIR = Path(__file__).resolve().parents[2]
#: The C++ build's command (ctest runs the Python tests in the build folder: REGIONPROF_BUILD_DIR).
BUILD_CLI = Path(os.environ.get("REGIONPROF_BUILD_DIR", SOURCE_DIR / "build")) / "bin" / "regionprof"
#: The console script `pip install` made beside this interpreter.
CONSOLE_SCRIPT = Path(sys.executable).parent / "regionprof"


def clean_environment(extra: Optional[Dict[str, str]] = None) -> Dict[str, str]:
    """This process's environment without the NVTX tool variable that its `import regionprof` set."""
    env = {k: v for k, v in os.environ.items() if k not in ("NVTX_INJECTION64_PATH", "CUDA_INJECTION64_PATH")}
    env.update(extra or {})
    return env


def run(argv: Sequence[object], cwd: Optional[Path] = None, env: Optional[Dict[str, str]] = None,
        timeout: float = 300) -> subprocess.CompletedProcess:
    """Runs argv (text output captured) in a clean environment."""
    return subprocess.run([str(a) for a in argv], capture_output=True, text=True, cwd=cwd, timeout=timeout,
                          env=clean_environment() if env is None else env)


def trace(name: str) -> Path:
    """A shared real torch.profiler trace (REGIONPROF_TRACES_DIR); skips without the folder."""
    folder = os.environ.get("REGIONPROF_TRACES_DIR")
    if not folder:
        pytest.skip("REGIONPROF_TRACES_DIR is not set (scripts/test sets it to ../shared/traces)")
    path = Path(folder) / name
    assert path.is_file(), f"{path}: missing from REGIONPROF_TRACES_DIR"
    return path
