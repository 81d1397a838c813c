"""Generated from the native option table by regionprof._keywords.stub(); do not edit.
Regenerate: python -c 'import regionprof._keywords as k; print(k.stub(), end="")' > _options.pyi"""

import os
from typing import Optional, Sequence, TypedDict, Union

StrPath = Union[str, "os.PathLike[str]"]


class ProfileOptions(TypedDict, total=False):
    """The keyword options of regionprof.profile."""

    warmup_runs: int
    measured_runs: int
    flush_cache: bool
    device_tracing: bool
    window_runs: Optional[int]
    window_output: Optional[StrPath]
    trace_file: Optional[StrPath]
    regions: Optional[Sequence[str]]
    cross_thread: bool
    graph_attribution: str
    row_limit: int
    max_noise: Optional[float]
    min_runs: Optional[int]
    max_runs: Optional[int]
    min_time_s: Optional[float]
    max_time_s: Optional[float]

class AnalyzeOptions(TypedDict, total=False):
    """The keyword options of regionprof.analyze."""

    run_marker: Optional[str]
    regions: Optional[Sequence[str]]
    cross_thread: bool
    graph_attribution: str
    row_limit: int
    warmup_runs: int

class RunOptions(TypedDict, total=False):
    """The keyword options of regionprof.run."""

    window_runs: Optional[int]
    output: Optional[StrPath]
    processes: int
    run_marker: Optional[str]
    regions: Optional[Sequence[str]]
    cross_thread: bool
    graph_attribution: str
    row_limit: int
    warmup_runs: int

class StepOptions(TypedDict, total=False):
    """The keyword options of regionprof.profiler."""

    flush_cache: bool
    device_tracing: bool
    window_output: Optional[StrPath]
    trace_file: Optional[StrPath]
    regions: Optional[Sequence[str]]
    cross_thread: bool
    graph_attribution: str
    row_limit: int
