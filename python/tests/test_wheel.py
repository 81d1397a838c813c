"""The built manylinux wheel (scripts/wheel, dist/) installed into a fresh virtual environment without
torch: its name, tag and metadata; the command and regionprof.analyze on a shared real trace; the
torch integration's ImportError; profile and region without torch."""

from __future__ import annotations

import json
import subprocess
import sys
import venv
import zipfile
from email.parser import Parser
from pathlib import Path
from typing import Dict

import pytest

import regionprof
from command_support import SOURCE_DIR, run, trace

TAG = f"cp{sys.version_info[0]}{sys.version_info[1]}"
AUDITWHEEL = SOURCE_DIR / "build" / "wheel-env" / "tools" / "bin" / "auditwheel"
RUN_MARKER = r"ProfilerStep#\d+"
PHASES = "## (.*) ##=phase"
# tests/cli/test_cli_real_traces.cpp's figures: 2 runs; run 0's `## forward ##` owns 132,826,000 ns.
FORWARD_CPU_US = 132826


@pytest.fixture(scope="module")
def wheel() -> Path:
    found = sorted((SOURCE_DIR / "dist").glob(f"regionprof-{regionprof.__version__}-{TAG}-{TAG}-manylinux_*_x86_64.whl"))
    assert len(found) == 1, f"expected one {TAG} manylinux wheel in {SOURCE_DIR / 'dist'} (scripts/wheel), found {found}"
    return found[0]


@pytest.fixture(scope="module")
def fresh_venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new virtual environment with only the wheel installed (no torch, no index)."""
    env = tmp_path_factory.mktemp("fresh") / "venv"
    venv.EnvBuilder(with_pip=True).create(env)
    install = run([env / "bin" / "python", "-m", "pip", "install", "-q", "--no-index", "--disable-pip-version-check",
                   wheel])
    assert install.returncode == 0, install.stderr
    return env


def python_in(env: Path, code: str, cwd: Path) -> subprocess.CompletedProcess:
    return run([env / "bin" / "python", "-c", code], cwd=cwd)


def test_wheel_name_contents_and_metadata(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = Parser().parsestr(archive.read(f"regionprof-{regionprof.__version__}.dist-info/METADATA").decode())
        entry_points = archive.read(f"regionprof-{regionprof.__version__}.dist-info/entry_points.txt").decode()
    assert "regionprof/bin/regionprof" in names
    assert "regionprof/lib/libregionprof_inject.so" in names
    # ops=True's callback and memory=True's reporter, as source compiled against the user's torch (_torch_ops.py).
    assert {"regionprof/_cpp/op_ranges.hpp", "regionprof/_cpp/memory_reporting.hpp",
            "regionprof/_cpp/op_ranges_extension.cpp"} <= set(names)
    assert any(n.startswith("regionprof/_native.") and n.endswith(".so") for n in names)
    # Boost.JSON, simdjson and RE2 are vendored (renamed with a hash: Debian has no PIC archives of them); zlib and libstdc++ are linked in.
    vendored = sorted(n.split("/")[1].split("-")[0] for n in names if n.startswith("regionprof.libs/lib"))
    assert vendored == ["libboost_json", "libre2", "libsimdjson"]
    assert metadata["Version"] == regionprof.__version__
    assert metadata["Requires-Python"] == ">=3.10"  # nanobind 3.1.0's minimum (scripts/wheel, docs/python.md)
    requires: Dict[str, str] = {r.split(";")[0].split(">")[0].strip(): r for r in metadata.get_all("Requires-Dist")}
    assert set(requires) == {"torch", "pandas", "pytest", "nvtx"}
    assert all("extra ==" in r for r in requires.values())  # installing pulls none of them
    assert {"torch", "pandas"} <= set(metadata.get_all("Provides-Extra"))
    assert "regionprof = regionprof._command:main" in entry_points


def test_auditwheel_show_accepts_the_wheel(wheel: Path) -> None:
    if not AUDITWHEEL.is_file():
        pytest.skip(f"{AUDITWHEEL}: scripts/wheel installs auditwheel there")
    shown = run([AUDITWHEEL, "show", wheel])
    assert shown.returncode == 0, shown.stderr
    platform = wheel.name.rsplit("-", 1)[1].removesuffix(".whl")
    assert f'consistent with the following platform tag: "{platform}"' in " ".join(shown.stdout.split())


def test_fresh_venv_has_no_torch(fresh_venv: Path, tmp_path: Path) -> None:
    result = python_in(fresh_venv, "import torch", tmp_path)
    assert result.returncode == 1 and "No module named 'torch'" in result.stderr
    listed = run([fresh_venv / "bin" / "python", "-m", "pip", "list", "--format", "json"], cwd=tmp_path)
    packages = {p["name"] for p in json.loads(listed.stdout)}
    assert packages - {"pip", "setuptools"} == {"regionprof"}


def test_command_analyzes_a_shared_trace(fresh_venv: Path, tmp_path: Path) -> None:
    path = trace("sampled_rank0_kineto.json.gz")
    result = run([fresh_venv / "bin" / "regionprof", "analyze", path, "--run-marker", RUN_MARKER, "--region", PHASES,
                  "-o", "out.json"], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    report = json.loads((tmp_path / "out.json").read_text())
    assert len(report["runs"]) == 2
    forward = {r["region_id"]: r for r in report["runs"][0]["regions"]}["phase:forward"]
    assert forward["cpu_time_us"] == FORWARD_CPU_US
    module = run([fresh_venv / "bin" / "python", "-m", "regionprof", "report", "out.json"], cwd=tmp_path)
    assert module.returncode == 0 and "phase:forward" in module.stdout
    missing = run([fresh_venv / "bin" / "regionprof", "analyze", "missing.json"], cwd=tmp_path)
    assert missing.returncode == 1 and "missing.json" in missing.stderr


def test_analyze_api_on_a_shared_trace_without_torch(fresh_venv: Path, tmp_path: Path) -> None:
    path = trace("sampled_rank0_kineto.json.gz")
    code = f"""
import json, sys, regionprof
p = regionprof.analyze({str(path)!r}, run_marker={RUN_MARKER!r}, regions=[{PHASES!r}])
forward = {{r["region_id"]: r for r in p.data["runs"][0]["regions"]}}["phase:forward"]
print(json.dumps([len(p.data["runs"]), forward["cpu_time_us"], "torch" in sys.modules]))
"""
    result = python_in(fresh_venv, code, tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == [2, FORWARD_CPU_US, False]


def test_profile_and_region_without_torch(fresh_venv: Path, tmp_path: Path) -> None:
    code = """
import json, regionprof
def step():
    with regionprof.region("work"):
        sum(range(1000))
p = regionprof.profile(step, warmup_runs=0, measured_runs=2)
print(json.dumps([[r["region_id"] for r in run["regions"]] for run in p.data["runs"]]))
"""
    result = python_in(fresh_venv, code, tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == [["region:work"], ["region:work"]]


def test_torch_integration_without_torch_says_what_to_install(fresh_venv: Path, tmp_path: Path) -> None:
    result = python_in(fresh_venv, "import regionprof.torch", tmp_path)
    assert result.returncode == 1
    assert "ImportError: regionprof.torch needs PyTorch" in result.stderr
    assert "pip install 'regionprof[torch]'" in result.stderr
    gather = python_in(fresh_venv, "import regionprof; regionprof.gather(None)", tmp_path)
    assert gather.returncode == 1 and "pip install 'regionprof[torch]'" in gather.stderr
