"""The `nvtx` package's ranges whatever the import order, each order in a fresh Python process: captured
when regionprof is imported first, or after `import nvtx` but before its first range, or when Python
starts with NVTX_INJECTION64_PATH naming the extension; after a first range that came before
`import regionprof`, NVTX runs the package without a tool for good, and the profile says so
(NVTX_INITIALIZED_WITHOUT_TOOL) instead of silently holding no region."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any, Dict, Optional

import pytest

import regionprof
from command_support import clean_environment

PROFILE = """
import json, sys
def step():
    with nvtx.annotate("nvtx_load"):
        sum(range(2000))
    with nvtx.annotate("nvtx_compute", domain="app"):
        sum(range(4000))
p = regionprof.profile(step, warmup_runs=0, measured_runs=3, regions=[r"nvtx_(.*)=nvtx"])
json.dump({"regions": [r["id"] for r in p.data["regions"]],
           "warnings": [w for w in p.data["warnings"] if w["code"] == "NVTX_INITIALIZED_WITHOUT_TOOL"]}, sys.stdout)
"""

ORDERS = {
    "regionprof_first": "import regionprof\nimport nvtx\n",
    "nvtx_imported_first": "import nvtx\nimport regionprof\n",
    "nvtx_range_first": "import nvtx\nwith nvtx.annotate('early'):\n    pass\nimport regionprof\n",
    "nvtx_mark_first": "import nvtx\nnvtx.mark('early')\nimport regionprof\n",
}


def profile_in_a_new_process(prelude: str, env: Optional[Dict[str, str]] = None) -> Dict[str, Any]:
    result = subprocess.run([sys.executable, "-c", prelude + PROFILE], capture_output=True, text=True, timeout=120,
                            env=clean_environment(env))
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout)


@pytest.mark.parametrize("order", ["regionprof_first", "nvtx_imported_first"])
def test_ranges_are_captured_when_regionprof_comes_before_the_first_range(order: str) -> None:
    seen = profile_in_a_new_process(ORDERS[order])
    assert seen == {"regions": ["nvtx:load", "nvtx:compute"], "warnings": []}


@pytest.mark.parametrize("order", ["nvtx_range_first", "nvtx_mark_first"])
def test_a_range_before_import_regionprof_is_a_warning_that_says_how_to_fix_it(order: str) -> None:
    seen = profile_in_a_new_process(ORDERS[order])
    assert seen["regions"] == []
    (warning,) = seen["warnings"]
    assert warning["source"] == "nvtx"
    extension = os.path.realpath(regionprof._native.__file__)
    assert warning["message"].endswith(f"start Python with NVTX_INJECTION64_PATH={extension}")
    assert "Import regionprof before the first nvtx range" in warning["message"]


def test_the_fix_the_warning_names_captures_the_ranges() -> None:
    extension = os.path.realpath(regionprof._native.__file__)
    seen = profile_in_a_new_process(ORDERS["nvtx_range_first"], {"NVTX_INJECTION64_PATH": extension})
    assert seen == {"regions": ["nvtx:load", "nvtx:compute"], "warnings": []}


def test_nvtx_disable_is_the_users_choice_not_a_warning() -> None:
    seen = profile_in_a_new_process(ORDERS["nvtx_range_first"], {"NVTX_DISABLE": "1"})
    assert seen == {"regions": [], "warnings": []}
