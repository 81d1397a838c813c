"""The Profile result, profile() for any callable, analyze() for torch.profiler traces, region()."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any, Callable, Dict, Optional, Sequence, Tuple, TypeVar, Union

from regionprof import _native

StrPath = Union[str, "os.PathLike[str]"]
F = TypeVar("F", bound=Callable[..., Any])

class Profile:
    """One profile: the JSON report (``data``), the Markdown report and, when asked for, the trace file.

    ```
    p = regionprof.profile(step)
    p.data["runs"][0]["timing"]["cpu_time_us"]
    print(p.markdown())
    p.write_json("profile.json")
    ```
    """

    def __init__(self, native: _native.NativeProfile, trace_file: Optional[Path] = None) -> None:
        self._native = native
        self._data: Optional[Dict[str, Any]] = None
        #: The Chrome trace written for this profile (resolved), or None when none was asked for.
        self.trace_file: Optional[Path] = trace_file

    @property
    def data(self) -> Dict[str, Any]:
        """The JSON report (docs/report-schema.md) as a dict; parsed once."""
        if self._data is None:
            self._data = json.loads(self._native.json())
        return self._data

    def json(self) -> str:
        """The JSON report as text."""
        return self._native.json()

    def markdown(self, runs_detail: int | None = None) -> str:
        """The Markdown report: overview, summary, runs, regions, per-run attribution (``runs_detail``
        runs; default: every run when there are at most 5), region tree, key averages, warnings."""
        return self._native.markdown(runs_detail)

    def write_json(self, path: StrPath) -> Path:
        """Writes the JSON report to ``path``; returns the resolved path. Raises RuntimeError naming it."""
        self._native.write_json(os.fspath(path))
        return Path(path).resolve()

    def write_trace(self, path: StrPath) -> Path:
        """Writes the Chrome trace (Perfetto, chrome://tracing) to ``path``; returns the resolved path."""
        self._native.write_trace(os.fspath(path))
        return Path(path).resolve()

    def __repr__(self) -> str:
        runs = len(self.data.get("runs", []))
        return f"<regionprof.Profile runs={runs} regions={len(self.data.get('regions', []))}>"


def _resolve(path: Optional[StrPath]) -> Optional[Path]:
    return None if path is None else Path(path).resolve()


def _run_native(
    workload: Callable[[], Any],
    *,
    warmup_runs: int,
    measured_runs: int,
    trace_file: Optional[StrPath],
    regions: Optional[Sequence[str]],
    cross_thread: bool,
    row_limit: int,
    device_tracing: bool,
    target_type: str,
    module_types: Optional[Dict[str, str]] = None,
    input_shape: Tuple[int, Sequence[str]] = (0, ()),
    uses_inference_function: bool = True,
) -> Profile:
    """The one call into the native harness (shared by profile() and regionprof.torch.profile())."""
    if warmup_runs < 0 or measured_runs < 0 or row_limit < 0:
        raise ValueError("warmup_runs, measured_runs and row_limit must not be negative")
    resolved = _resolve(trace_file)

    def call() -> None:
        workload()

    native = _native.profile(
        call,
        warmup_runs,
        measured_runs,
        None if resolved is None else str(resolved),
        None if regions is None else list(regions),
        cross_thread,
        row_limit,
        device_tracing,
        target_type,
        dict(module_types or {}),
        input_shape[0],
        list(input_shape[1]),
        uses_inference_function,
    )
    return Profile(native, resolved)


def profile(
    fn: Callable[[], Any],
    *,
    warmup_runs: int = 3,
    measured_runs: int = 10,
    trace_file: Optional[StrPath] = None,
    regions: Optional[Sequence[str]] = None,
    cross_thread: bool = False,
    row_limit: int = 20,
    device_tracing: bool = True,
) -> Profile:
    """Profiles ``fn()`` with the native harness: ``warmup_runs`` unrecorded calls, one recorded
    warm-up that is discarded, then ``measured_runs`` calls, each inside the run marker
    ``regionprof.profiled_run``. Every NVTX range of the process is recorded; device time comes from
    CUPTI when CUDA is present.

    ``regions``: rules in the CLI's ``REGEX=KIND`` form; given rules replace the default ones
    (prefixes ``aot_module:``, ``untuned_module:`` and ``region:``, the last being what
    :func:`region` emits). Raises ValueError for a bad rule (the C++ message), and whatever ``fn``
    raises.

    ```
    def step():
        with regionprof.region("parse"):
            parse()
        transform()
    print(regionprof.profile(step, measured_runs=5).markdown())
    ```
    """
    return _run_native(
        fn,
        warmup_runs=warmup_runs,
        measured_runs=measured_runs,
        trace_file=trace_file,
        regions=regions,
        cross_thread=cross_thread,
        row_limit=row_limit,
        device_tracing=device_tracing,
        target_type="callable",
        uses_inference_function=True,
    )


def analyze(
    trace: StrPath,
    *,
    run_marker: Optional[str] = None,
    regions: Optional[Sequence[str]] = None,
    cross_thread: bool = False,
    row_limit: int = 20,
) -> Profile:
    """Analyses a torch.profiler (Kineto) Chrome trace, plain ``.json`` or gzip ``.json.gz``.

    ``run_marker``: a regex (RE2, whole name, any domain) for the ranges that mark runs, e.g.
    ``r"ProfilerStep#\\d+"``; None: the core's one default, the name ``regionprof.profiled_run`` exactly,
    in any domain (the harness's marker, and ``torch.profiler.record_function("regionprof.profiled_run")``). ``regions``: rules ``REGEX=KIND`` replacing the default ones
    (``aot_module:`` and ``untuned_module:`` prefixes). Raises ValueError for a bad rule and
    :class:`regionprof.TraceError` (a ValueError) naming the file for a trace that cannot be read.

    ```
    p = regionprof.analyze("rank0.json.gz", run_marker=r"ProfilerStep#\\d+", regions=["## (.*) ##=phase"])
    print(p.markdown())
    ```
    """
    if row_limit < 0:
        raise ValueError("row_limit must not be negative")
    native = _native.analyze(os.fspath(trace), run_marker, None if regions is None else list(regions),
                             cross_thread, row_limit)
    return Profile(native, None)


class region(contextlib.ContextDecorator):
    """A region: a context manager and a decorator that emits the NVTX range ``<kind>:<name>`` in the
    domain ``regionprof`` (``REGIONPROF_REGION``'s equivalent). The name is registered once; entering
    costs one push. With :func:`profile`'s default rules ``region:<name>`` is the region
    ``region:<name>``.

    ```
    with regionprof.region("parse"):
        parse()

    @regionprof.region("decode")
    def decode(batch): ...
    ```
    """

    _handles: Dict[Tuple[str, str], int] = {}

    def __init__(self, name: str, kind: str = "region") -> None:
        key = (kind, name)
        handle = region._handles.get(key)
        if handle is None:
            handle = _native.register_region(kind, name)
            region._handles[key] = handle
        self.name = name
        self.kind = kind
        self._handle = handle

    def __enter__(self) -> "region":
        _native.push(self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        _native.pop()

    def __repr__(self) -> str:
        return f"regionprof.region({self.name!r}, kind={self.kind!r})"
