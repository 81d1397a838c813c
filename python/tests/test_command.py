"""The installed package's `regionprof` command (the console script and `python -m regionprof`): the
C++ command shipped in the wheel, with the same output, messages and exit status as the C++ build's
build/bin/regionprof; `regionprof run` on a Python program using the `nvtx` package, with the injection
library inside the package; one version everywhere."""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import List, Tuple

import pytest

import regionprof
from command_support import BUILD_CLI, CONSOLE_SCRIPT, SOURCE_DIR, clean_environment, run, trace

PACKAGE_DIR = Path(regionprof.__file__).resolve().parent

# (arguments, exit status): usage errors 2, input errors 1, help and version 0 (src/regionprof/cli/main.cpp).
CASES = [
    (["--version"], 0),
    (["--help"], 0),
    (["help", "merge"], 0),
    (["analyze", "--help"], 0),
    (["run", "--help"], 0),
    ([], 2),
    (["frobnicate"], 2),
    (["analyze"], 2),
    (["diff", "--bogus", "a.json", "b.json"], 2),
    (["merge"], 2),
    (["run"], 2),
    (["analyze", "missing_trace.json"], 1),
    (["report", "missing_profile.json"], 1),
    (["run", "-o", "out.json", "--", "no_such_program_here"], 127),
]


def test_console_script_and_module_run_the_packaged_command() -> None:
    assert CONSOLE_SCRIPT.is_file()
    for argv in ([CONSOLE_SCRIPT], [sys.executable, "-m", "regionprof"]):
        result = run([*argv, "--version"])
        assert (result.returncode, result.stdout, result.stderr) == (0, f"regionprof {regionprof.__version__}\n", "")
    assert (PACKAGE_DIR / "bin" / "regionprof").is_file()
    assert (PACKAGE_DIR / "lib" / "libregionprof_inject.so").is_file()


@pytest.mark.parametrize("args,status", CASES, ids=[" ".join(a) or "<none>" for a, _ in CASES])
def test_same_output_and_exit_status_as_the_cpp_build(args: List[str], status: int, tmp_path: Path) -> None:
    ours = run([CONSOLE_SCRIPT, *args], cwd=tmp_path)
    assert ours.returncode == status, ours.stderr
    if not BUILD_CLI.is_file():
        pytest.skip(f"{BUILD_CLI} is not built: the comparison with the C++ build is left out")
    theirs = run([BUILD_CLI, *args], cwd=tmp_path)
    assert (ours.returncode, ours.stdout, ours.stderr) == (theirs.returncode, theirs.stdout, theirs.stderr)


def _without_created_at(path: Path) -> dict:
    report = json.loads(path.read_text())
    report.pop("created_at", None)
    for rank in report.get("ranks", []):
        rank["profile"].pop("created_at", None)
    return report


def test_analyze_report_diff_merge_match_the_cpp_build(tmp_path: Path) -> None:
    rank0, rank1 = trace("sampled_rank0_kineto.json.gz"), trace("sampled_rank1_kineto.json.gz")
    if not BUILD_CLI.is_file():
        pytest.skip(f"{BUILD_CLI} is not built")
    outputs = {}
    for name, command in (("wheel", CONSOLE_SCRIPT), ("cpp", BUILD_CLI)):
        out = tmp_path / name
        out.mkdir()
        steps = [
            ["analyze", rank0, "--run-marker", r"ProfilerStep#\d+", "-o", "r0.json", "--markdown", "r0.md"],
            ["analyze", rank1, "--run-marker", r"ProfilerStep#\d+", "-o", "r1.json"],
            ["report", "r0.json", "--format", "table"],
            ["diff", "r0.json", "r1.json"],
            ["merge", "r0.json", "r1.json", "-o", "job.json"],
        ]
        results = [run([command, *step], cwd=out) for step in steps]
        assert [r.returncode for r in results] == [0, 0, 0, 0, 0], [r.stderr for r in results]
        outputs[name] = (
            [(r.stdout, r.stderr) for r in results[2:4]],
            _without_created_at(out / "r0.json"),
            _without_created_at(out / "job.json"),
        )
    assert outputs["wheel"] == outputs["cpp"]
    job = outputs["wheel"][2]
    assert job["kind"] == "regionprof_job" and job["rank_count"] == 2


def test_a_closed_output_pipe_ends_the_command_as_it_ends_the_cpp_build(tmp_path: Path) -> None:
    """`regionprof report p.json | head -1`: the reader is gone before the command writes. The C++ command
    dies of SIGPIPE, quietly (exit 141 in a shell); the console script and python -m regionprof must too,
    though Python ignores SIGPIPE and an ignored signal stays ignored across exec."""
    profile = regionprof.profile(lambda: sum(range(1000)), warmup_runs=0, measured_runs=2)
    path = profile.write_json(tmp_path / "p.json")

    def into_a_closed_pipe(argv: List[object]) -> Tuple[int, str]:
        reader, writer = os.pipe()
        os.close(reader)
        try:
            result = subprocess.run([str(a) for a in argv], stdout=writer, stderr=subprocess.PIPE, text=True,
                                    timeout=120, env=clean_environment())
        finally:
            os.close(writer)
        return result.returncode, result.stderr

    ours = into_a_closed_pipe([CONSOLE_SCRIPT, "report", path])
    assert ours == (-signal.SIGPIPE, "")
    assert into_a_closed_pipe([sys.executable, "-m", "regionprof", "report", path]) == ours
    if BUILD_CLI.is_file():
        assert into_a_closed_pipe([BUILD_CLI, "report", path]) == ours


APP = """
import sys
import nvtx

for step in range(4):
    with nvtx.annotate("regionprof.profiled_run", domain="regionprof"):
        with nvtx.annotate("untuned_module:encoder"):
            sum(range(20000))
        for _ in range(2):
            with nvtx.annotate("untuned_module:decoder"):
                sum(range(10000))
print("app done")
sys.exit(int(sys.argv[1]))
"""


def test_run_profiles_a_python_program_using_nvtx(tmp_path: Path) -> None:
    app = tmp_path / "app.py"
    app.write_text(APP)
    result = run([CONSOLE_SCRIPT, "run", "--warmup-runs", "1", "-o", "prof.json", "--", sys.executable, app, "0"],
                 cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("app done\n")  # the program's output first, then the Markdown
    assert "NVTX_INJECTION64_PATH was" not in result.stderr  # the command saw the caller's environment
    report = json.loads((tmp_path / "prof.json").read_text())
    assert report["tool"] == {"name": "regionprof", "version": regionprof.__version__}
    assert len(report["runs"]) == 3  # 4 runs, the first discarded
    for r in report["runs"]:
        calls = {region["region_id"]: region["calls"] for region in r["regions"]}
        assert calls == {"untuned_module:encoder": 1, "untuned_module:decoder": 2}
    # The program's exit status passes through.
    failed = run([CONSOLE_SCRIPT, "run", "-o", "fail.json", "--", sys.executable, app, "5"], cwd=tmp_path)
    assert failed.returncode == 5


def test_run_injects_the_library_inside_the_package(tmp_path: Path) -> None:
    probe = "import os; print(os.environ['NVTX_INJECTION64_PATH'])"
    result = run([sys.executable, "-m", "regionprof", "run", "-o", "p.json", "--", sys.executable, "-c", probe],
                 cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    injected = Path(result.stdout.splitlines()[0])
    assert injected.resolve() == (PACKAGE_DIR / "lib" / "libregionprof_inject.so").resolve()


def test_one_version_everywhere() -> None:
    cmake = (SOURCE_DIR / "CMakeLists.txt").read_text()
    match = re.search(r"project\(regionprof VERSION ([0-9.]+)", cmake)
    assert match is not None
    version = match.group(1)
    assert regionprof.__version__ == version
    assert importlib.metadata.version("regionprof") == version
    assert run([CONSOLE_SCRIPT, "--version"]).stdout == f"regionprof {version}\n"
    profile = regionprof.profile(lambda: None, warmup_runs=0, measured_runs=1)
    assert profile.data["tool"] == {"name": "regionprof", "version": version}
