"""Type stubs of regionprof._native (python/src/module.cpp)."""

from typing import Callable, Dict, List, Optional, Tuple

class TraceError(ValueError):
    """A torch.profiler trace that cannot be read; the message names the file."""

class NativeProfile:
    def json(self) -> str: ...
    def markdown(self, runs_detail: int | None = None) -> str: ...
    def chrome_trace(self) -> str: ...
    def write_json(self, path: str) -> None: ...
    def write_trace(self, path: str) -> None: ...

class PushHook:
    def __init__(self, handle: int) -> None: ...
    def __call__(self, *args: object) -> None: ...

class PopHook:
    def __init__(self) -> None: ...
    def __call__(self, *args: object) -> None: ...

def profile(
    workload: Callable[[], object],
    warmup_runs: int,
    measured_runs: int,
    trace_file: Optional[str],
    regions: Optional[List[str]],
    cross_thread: bool,
    row_limit: int,
    device_tracing: bool,
    target_type: str,
    module_types: Dict[str, str],
    args_count: int,
    kwargs: List[str],
    uses_inference_function: bool,
    graph_attribution: str,
) -> NativeProfile: ...
def analyze(
    path: str,
    run_marker: Optional[str],
    regions: Optional[List[str]],
    cross_thread: bool,
    row_limit: int,
    graph_attribution: str,
) -> NativeProfile: ...
def parse_region_arg(arg: str) -> Tuple[str, str]: ...
def register_region(kind: str, name: str) -> int: ...
def push(handle: int) -> None: ...
def pop() -> None: ...
