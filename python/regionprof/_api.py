"""The Profile result, profile() for any callable, analyze() for torch.profiler traces, region()."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, TypeVar, Union

from regionprof import _native

StrPath = Union[str, "os.PathLike[str]"]
F = TypeVar("F", bound=Callable[..., Any])

#: CLI spellings in the native reports -> the Python API's (messages name Python parameters).
_PYTHON_SPELLINGS = (("`--runs-detail N`", "`markdown(runs_detail=N)`"), ("--cross-thread", "cross_thread=True"),
                     ("skip_runs", "warmup_runs"))


def _pythonic(text: str) -> str:
    for cli, python in _PYTHON_SPELLINGS:
        text = text.replace(cli, python)
    return text


class Profile:
    """One profile: the JSON report (``data``), the Markdown and HTML reports and, when asked for, the
    trace file. In Jupyter a Profile shows itself as its HTML report.

    ```
    p = regionprof.profile(step)
    p.data["runs"][0]["timing"]["cpu_time_us"]
    print(p.markdown())
    p.write_json("profile.json")
    ```
    """

    def __init__(self, native: Any, trace_file: Optional[Path] = None) -> None:
        self._native = native
        self._data: Optional[Dict[str, Any]] = None
        #: The Chrome trace written for this profile (resolved), or None when none was asked for.
        self.trace_file: Optional[Path] = trace_file

    @property
    def data(self) -> Dict[str, Any]:
        """The JSON report (docs/report-schema.md) as a dict; parsed once."""
        if self._data is None:
            data = json.loads(self.json())
            for warning in data.get("warnings", []) if isinstance(data, dict) else []:
                if isinstance(warning, dict) and isinstance(warning.get("message"), str):
                    warning["message"] = _pythonic(warning["message"])
            self._data = data
        return self._data

    def json(self) -> str:
        """The JSON report as text."""
        return self._native.json()

    def markdown(self, runs_detail: Optional[int] = None) -> str:
        """The Markdown report: overview, summary, runs, regions, per-run attribution (``runs_detail``
        runs; default: every run when there are at most 5), region tree, key averages, warnings."""
        if runs_detail is not None:
            _check_int("runs_detail", runs_detail)
        return _pythonic(self._native.markdown(runs_detail))

    def html(self) -> str:
        """The HTML report: one self-contained page (summary, a bar per run, each region across runs,
        key averages, warnings); nothing is fetched."""
        return _pythonic(self._native.html())

    def _repr_html_(self) -> str:
        return self.html()

    def write_json(self, path: StrPath) -> Path:
        """Writes the JSON report to ``path``; returns the resolved path. Raises RuntimeError naming it."""
        self._native.write_json(os.fspath(_check_path("path", path)))
        return Path(path).resolve()

    def write_trace(self, path: StrPath) -> Path:
        """Writes the Chrome trace (Perfetto, chrome://tracing) to ``path``; returns the resolved path."""
        self._native.write_trace(os.fspath(_check_path("path", path)))
        return Path(path).resolve()

    def to_pandas(self, table: str = "regions") -> Any:
        """One table of the report as a pandas DataFrame (pandas is optional: ImportError without it).

        ``table``: ``"regions"`` (one row per run and region: ``run_index``, ``region_id``, ``calls``,
        ``cpu_time_us``, ``device_time_us``, the fractions), ``"summary"`` (``region_summary``, one row per
        region, statistics flattened as ``cpu_time_us_median``), ``"runs"`` (one row per run: timing and
        residual), ``"tree"`` (one row per run and region-tree node, ``path`` joined by ``" > "``) or
        ``"key_averages"`` (one row per view and event). A job report's tables have a ``rank`` column
        first, one block of rows per rank.

        ```
        df = regionprof.load("profile.json").to_pandas()
        df.groupby("region_id")["cpu_time_us"].median()
        ```
        """
        if not isinstance(table, str):
            raise TypeError(f"table must be a str, not {type(table).__name__}")
        if table not in _TABLES:
            raise ValueError(f"table must be one of {', '.join(map(repr, _TABLES))}, not {table!r}")
        try:
            import pandas
        except ImportError as e:
            raise ImportError("Profile.to_pandas() needs pandas: pip install pandas") from e
        data = self.data
        if isinstance(self, JobProfile):
            rows = [{"rank": rank.get("rank"), **row} for rank in data.get("ranks", [])
                    for row in _TABLES[table](rank.get("profile", {}))]
        else:
            rows = _TABLES[table](data)
        return pandas.DataFrame(rows)

    def __repr__(self) -> str:
        runs = len(self.data.get("runs", []))
        return f"<regionprof.Profile runs={runs} regions={len(self.data.get('regions', []))}>"


def _flat(prefix: str, value: Any, out: Dict[str, Any]) -> None:
    """Nested objects as ``a_b`` columns; lists and scalars as they are."""
    if isinstance(value, dict):
        for key, inner in value.items():
            _flat(f"{prefix}_{key}" if prefix else str(key), inner, out)
    else:
        out[prefix] = value


def _flat_row(first: Dict[str, Any], value: Dict[str, Any]) -> Dict[str, Any]:
    row = dict(first)
    _flat("", value, row)
    return row


def _regions_table(data: Dict[str, Any]) -> List[Dict[str, Any]]:
    return [_flat_row({"run_index": run.get("run_index")}, region)
            for run in data.get("runs", []) for region in run.get("regions", [])]


def _summary_table(data: Dict[str, Any]) -> List[Dict[str, Any]]:
    return [_flat_row({}, entry) for entry in data.get("region_summary", [])]


def _runs_table(data: Dict[str, Any]) -> List[Dict[str, Any]]:
    rows = []
    for run in data.get("runs", []):
        row: Dict[str, Any] = {"run_index": run.get("run_index")}
        _flat("", run.get("timing", {}), row)
        _flat("residual", run.get("residual", {}), row)
        row["regions"] = len(run.get("regions", []))
        rows.append(row)
    return rows


def _tree_table(data: Dict[str, Any]) -> List[Dict[str, Any]]:
    rows = []
    for run in data.get("runs", []):
        for node in run.get("tree", []):
            path = list(node.get("path", []))
            row = {"run_index": run.get("run_index"), "path": " > ".join(path), "depth": len(path),
                   "region_id": path[-1] if path else None}
            _flat("", {k: v for k, v in node.items() if k != "path"}, row)
            rows.append(row)
    return rows


def _key_averages_table(data: Dict[str, Any]) -> List[Dict[str, Any]]:
    views = data.get("profiler", {}).get("key_averages", {})
    return [_flat_row({"sort_by": view.get("sort_by", name)}, event)
            for name, view in views.items() if isinstance(view, dict) for event in view.get("events", [])]


_TABLES: Dict[str, Callable[[Dict[str, Any]], List[Dict[str, Any]]]] = {
    "regions": _regions_table, "summary": _summary_table, "runs": _runs_table, "tree": _tree_table,
    "key_averages": _key_averages_table}


class JobProfile(Profile):
    """A job report (``"kind": "regionprof_job"``, docs/report-schema.md "Job report"): every rank's
    profile and the per-run, per-region statistics across ranks (``data["cross_rank"]``), from
    ``regionprof.gather`` or ``regionprof.load`` of what ``regionprof merge`` wrote. Its tables
    (``to_pandas``) have a ``rank`` column first.

    ```
    job.data["cross_rank"]["runs"][0]["timing"]["cpu_time_us"]["slowest_rank"]
    job.write_json("job.json")
    ```
    """

    kind = "regionprof_job"

    def __init__(self, native: "_native.NativeJob") -> None:
        super().__init__(native, None)
        self._json: Optional[str] = None

    def json(self) -> str:
        """The job report as JSON text (what ``regionprof merge -o`` writes)."""
        if self._json is None:
            self._json = self._native.json()
        return self._json

    def markdown(self, runs_detail: Optional[int] = None) -> str:
        """The job's Markdown view (``regionprof merge --markdown``): stragglers first. ``runs_detail``
        is accepted for a Profile's signature; the job view details no single run."""
        if runs_detail is not None:
            _check_int("runs_detail", runs_detail)
        return self._native.markdown()

    def html(self) -> str:
        """One self-contained HTML page holding the job's Markdown view."""
        import html

        return (
            "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>regionprof job report</title></head>\n"
            f"<body><pre>{html.escape(self.markdown())}</pre></body></html>\n"
        )

    def write_trace(self, path: StrPath) -> Path:
        """Writes the job's Chrome trace (``regionprof merge --trace``: one process per rank)."""
        self._native.write_trace(os.fspath(_check_path("path", path)))
        return Path(path).resolve()

    def __repr__(self) -> str:
        return f"<regionprof.JobProfile ranks={self.data.get('rank_count')}>"


def load(path: StrPath) -> Profile:
    """Reads a saved report back: a JSON report (``write_json``, ``regionprof run -o``, the reference
    module's ``data``) or a job report (``regionprof merge``, ``regionprof.gather``: a JobProfile). The
    file is read into the one result model and written again by the writers that produced it, so
    ``json()`` is the file's text for a report regionprof wrote, and ``data`` the document. Raises
    TypeError for a path that is not a str or os.PathLike, OSError for a file that cannot be read,
    ValueError naming the file (and the key) for one that is not a report.

    ```
    p = regionprof.load("profile.json")
    print(p.markdown())
    p.to_pandas("summary")
    ```
    """
    name = os.fspath(_check_path("path", path))
    with open(name, encoding="utf-8") as f:
        text = f.read()
    native = _native.read_saved_text(text, name)  # one parse; either kind
    return JobProfile(native) if isinstance(native, _native.NativeJob) else Profile(native, None)


def _check_int(name: str, value: Any, minimum: int = 0) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__} ({value!r})")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, not {value}")


def _check_bool(name: str, value: Any) -> None:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be a bool, not {type(value).__name__} ({value!r})")


def _stopping(*, max_noise: Any, min_runs: Any, max_runs: Any, min_time_s: Any, max_time_s: Any) -> Dict[str, Any]:
    """The stopping options (docs/design.md, rule 16) for the native harness, their types checked; the
    harness checks their values (ValueError naming the option)."""
    for name, value in (("max_noise", max_noise), ("min_time_s", min_time_s), ("max_time_s", max_time_s)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise TypeError(f"{name} must be a number or None, not {type(value).__name__} ({value!r})")
    for name, value in (("min_runs", min_runs), ("max_runs", max_runs)):
        if value is not None:
            _check_int(name, value)
    return {"max_noise": None if max_noise is None else float(max_noise), "min_runs": min_runs,
            "max_runs": max_runs, "min_time_s": None if min_time_s is None else float(min_time_s),
            "max_time_s": None if max_time_s is None else float(max_time_s)}


def _check_path(name: str, value: Any) -> "os.PathLike[str] | str":
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{name} must be a str or os.PathLike, not {type(value).__name__}")
    return value


def _check_options(*, warmup_runs: int, measured_runs: int, row_limit: int, **flags: Any) -> None:
    """TypeError / ValueError naming the parameter, before anything runs."""
    _check_int("warmup_runs", warmup_runs)
    _check_int("measured_runs", measured_runs, minimum=1)
    _check_int("row_limit", row_limit)
    for name, value in flags.items():
        _check_bool(name, value)


def _prepare_output(path: Optional[StrPath], name: str, window: Optional[int] = None) -> Optional[Path]:
    """The resolved output file for ``path`` (``~`` and the placeholders %r %l %h %p expanded; with
    ``window``, that window's, ``%w`` required), its directory created and the file checked writable, so a
    bad path fails before the first run. Raises TypeError / ValueError / OSError naming ``name``."""
    if path is None:
        return None
    text = os.fspath(_check_path(name, path))
    try:
        expanded = _native.expand_output_path(os.path.expanduser(text), window)
    except ValueError as e:
        raise ValueError(f"{name}: {e}") from None
    resolved = Path(expanded).resolve()
    try:
        resolved.parent.mkdir(parents=True, exist_ok=True)
        existed = resolved.exists()
        with open(resolved, "a"):
            pass
        if not existed:
            resolved.unlink()
    except OSError as e:
        raise type(e)(e.errno, f"{name}: cannot write {resolved}: {e.strerror}") from None
    return resolved


def _windows(window_runs: Any, window_output: Any) -> Optional[Tuple[Optional[int], Optional[str]]]:
    """``(window_runs, window_output pattern)`` for the native harness, None without windows. Types are
    checked here; the harness refuses what cannot be (``window_runs=0``, with ``max_noise``, without
    ``window_output`` or the reverse, a pattern without ``%w``: ValueError saying what to change). The
    directory of window 0's file is created."""
    if window_runs is not None:
        _check_int("window_runs", window_runs)
    if window_output is None:
        return None if window_runs is None else (window_runs, None)
    text = os.path.expanduser(os.fspath(_check_path("window_output", window_output)))
    if window_runs is not None and window_runs > 0:
        _prepare_output(text, "window_output", window=0)
    return (window_runs, text)


def _prepare_trace_file(path: Optional[StrPath], windows: Optional[Tuple[Optional[int], Optional[str]]]) -> Any:
    """The trace file: without windows the resolved file (_prepare_output); with them the pattern (``%w``
    required, checked and its window 0's directory created), written by the harness window by window."""
    if windows is None or path is None:
        return _prepare_output(path, "trace_file")
    text = os.path.expanduser(os.fspath(_check_path("trace_file", path)))
    _prepare_output(text, "trace_file", window=0)
    return text


def _run_native(
    workload: Callable[[], Any],
    *,
    warmup_runs: int,
    measured_runs: int,
    trace_file: "Optional[Path | str]",
    regions: Optional[Sequence[str]],
    cross_thread: bool,
    row_limit: int,
    device_tracing: bool,
    target_type: str,
    target_kind: str = "",
    extra_warnings: Sequence[Tuple[str, str]] = (),
    module_types: Optional[Dict[str, str]] = None,
    input_shape: Tuple[int, Sequence[str]] = (0, ()),
    uses_inference_function: bool = True,
    graph_attribution: str = "capture",
    stopping: Optional[Dict[str, Any]] = None,
    flush_cache: bool = False,
    windows: Optional[Tuple[Optional[int], Optional[str]]] = None,
) -> Profile:
    """The one call into the native harness (shared by profile() and regionprof.torch.profile()).
    ``trace_file``: from _prepare_trace_file; without windows written here, once the profile is made,
    with windows (a pattern) by the harness, one per window. ``target_kind`` and ``extra_warnings`` go into
    the report (every window's)."""
    if regions is not None:
        regions = _rules("regions", regions)
    window_runs, window_output = windows if windows is not None else (None, None)

    def call() -> None:
        workload()

    native = _native.profile(
        call,
        warmup_runs=warmup_runs,
        measured_runs=measured_runs,
        trace_file=trace_file if windows is not None else None,
        regions=regions,
        cross_thread=cross_thread,
        row_limit=row_limit,
        device_tracing=device_tracing,
        target_type=target_type,
        module_types=dict(module_types or {}),
        args_count=input_shape[0],
        kwargs=list(input_shape[1]),
        uses_inference_function=uses_inference_function,
        graph_attribution=graph_attribution,
        flush_cache=flush_cache,
        window_runs=window_runs,
        window_output=window_output,
        target_kind=target_kind,
        warnings=list(extra_warnings),
        **(stopping or {}),
    )
    if trace_file is None:
        return Profile(native, None)
    if windows is None:
        native.write_trace(str(trace_file))
        return Profile(native, Path(trace_file))  # resolved by _prepare_output
    last_window = (measured_runs - 1) // window_runs  # the harness's last window (windows refuse max_noise)
    return Profile(native, Path(_native.expand_output_path(str(trace_file), last_window)).resolve())


def _rules(name: str, rules: Any) -> List[str]:
    if isinstance(rules, (str, bytes)) or not isinstance(rules, Sequence):
        raise TypeError(f"{name} must be a list of 'REGEX=KIND' strings, not {type(rules).__name__}")
    for rule in rules:
        if not isinstance(rule, str):
            raise TypeError(f"{name} must be a list of 'REGEX=KIND' strings, not a list holding {type(rule).__name__}")
    return list(rules)


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
    graph_attribution: str = "capture",
    max_noise: Optional[float] = None,
    min_runs: Optional[int] = None,
    max_runs: Optional[int] = None,
    min_time_s: Optional[float] = None,
    max_time_s: Optional[float] = None,
    flush_cache: bool = False,
    window_runs: Optional[int] = None,
    window_output: Optional[StrPath] = None,
) -> Profile:
    """Profiles ``fn()`` with the native harness: ``warmup_runs`` unrecorded calls, one recorded
    warm-up that is discarded, then ``measured_runs`` calls, each inside the run marker
    ``regionprof.profiled_run``. Every NVTX range of the process is recorded; device time comes from
    CUPTI when CUDA is present.

    Stop on noise (docs/design.md, rule 16): with ``max_noise`` (relative, 0.01 = 1 %) measured runs go
    on until the noise of the run's wall time (the relative half-width of the 95 % confidence interval
    of its median) is at most ``max_noise`` with ``min_runs`` (10) and ``min_time_s`` (0) met, or
    ``max_runs`` (10000) or ``max_time_s`` (15) is reached; ``measured_runs`` is then ignored and the
    report has ``stopping`` (``NOISE_TARGET_NOT_MET`` at a maximum). ``flush_cache``: cold runs, the CPU's
    last-level cache (and with CUDA the device's L2) written over before every measured run, outside
    its time. The report's ``environment`` records the machine.

    ``regions``: rules in the CLI's ``REGEX=KIND`` form; given rules replace the default ones
    (prefixes ``aot_module:``, ``untuned_module:`` and ``region:``, the last being what
    :func:`region` emits). Raises ValueError for a bad rule (the C++ message), and whatever ``fn``
    raises. ``graph_attribution``: ``"capture"`` (default) gives the device ops of a CUDA graph replay
    to the region that captured them, ``"launch"`` to the region around the launch (docs/design.md,
    rule 15); anything else raises ValueError.

    Windows (docs/design.md, "Long runs: windows"): with ``window_runs`` N, every N measured runs are
    analysed, written to ``window_output`` (a path with ``%w``, the window's index, or ``%n``, the same
    here) and dropped, so memory stays bounded however many runs are measured; the last, partial window
    is written at the end and returned. Run indices continue across windows (window k's first run is k N; warm-up runs only in
    window 0) and each report has ``target.window`` and ``target.window_runs``. A ``trace_file`` then
    needs ``%w`` too (one per window). ValueError for ``window_runs=0``, ``window_runs`` with
    ``max_noise`` or without ``window_output``, and a ``window_output`` that names no window.

    ```
    def step():
        with regionprof.region("parse"):
            parse()
        transform()
    print(regionprof.profile(step, measured_runs=5).markdown())
    last = regionprof.profile(step, measured_runs=25, window_runs=10, window_output="w/prof-%w.json")
    # w/prof-0.json (runs 0-9), w/prof-1.json (10-19), w/prof-2.json (20-24): last.data is window 2's
    ```
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable, not {type(fn).__name__}")
    _check_options(warmup_runs=warmup_runs, measured_runs=measured_runs, row_limit=row_limit,
                   cross_thread=cross_thread, device_tracing=device_tracing, flush_cache=flush_cache)
    stopping = _stopping(max_noise=max_noise, min_runs=min_runs, max_runs=max_runs, min_time_s=min_time_s,
                         max_time_s=max_time_s)
    windows = _windows(window_runs, window_output)
    return _run_native(
        fn,
        warmup_runs=warmup_runs,
        measured_runs=measured_runs,
        trace_file=_prepare_trace_file(trace_file, windows),
        regions=regions,
        cross_thread=cross_thread,
        row_limit=row_limit,
        device_tracing=device_tracing,
        target_type="callable",
        uses_inference_function=True,
        graph_attribution=graph_attribution,
        stopping=stopping,
        flush_cache=flush_cache,
        windows=windows,
    )


def analyze(
    trace: StrPath,
    *,
    run_marker: Optional[str] = None,
    regions: Optional[Sequence[str]] = None,
    cross_thread: bool = False,
    row_limit: int = 20,
    warmup_runs: int = 0,
    graph_attribution: str = "capture",
) -> Profile:
    """Analyses a torch.profiler (Kineto) Chrome trace, plain ``.json`` or gzip ``.json.gz``, or a
    Chrome trace regionprof wrote.

    ``run_marker``: a regex (RE2, whole name, any domain) for the ranges that mark runs, e.g.
    ``r"ProfilerStep#\\d+"``; None: the core's one default, the name ``regionprof.profiled_run`` exactly, in
    any domain (the harness's marker, and ``torch.profiler.record_function("regionprof.profiled_run")``).
    ``regions``: rules ``REGEX=KIND`` replacing the default ones
    (``aot_module:`` and ``untuned_module:`` prefixes). ``warmup_runs``: the first runs found are
    warm-ups and are left out (a trace of :func:`profile` holds its internal warm-up run first:
    ``warmup_runs=1`` reads it back to the profile's runs). Raises ValueError for a bad rule,
    TypeError / ValueError naming the parameter for a bad option, and :class:`regionprof.TraceError`
    (a ValueError) naming the file for a trace that cannot be read.

    ```
    p = regionprof.analyze("rank0.json.gz", run_marker=r"ProfilerStep#\\d+", regions=["## (.*) ##=phase"])
    print(p.markdown())
    ```
    """
    trace = _check_path("trace", trace)
    if run_marker is not None and not isinstance(run_marker, str):
        raise TypeError(f"run_marker must be a str (a regex), not {type(run_marker).__name__}")
    _check_int("row_limit", row_limit)
    _check_int("warmup_runs", warmup_runs)
    _check_bool("cross_thread", cross_thread)
    native = _native.analyze(os.fspath(trace), run_marker, None if regions is None else _rules("regions", regions),
                             cross_thread, row_limit, warmup_runs, graph_attribution)
    return Profile(native, None)


class region(contextlib.ContextDecorator):
    """A region: a context manager and a decorator that emits the NVTX range ``<kind>:<name>`` in the
    domain ``regionprof`` (``REGIONPROF_REGION``'s equivalent). The name is registered once; entering
    costs one push. With :func:`profile`'s default rules ``region:<name>`` is the region
    ``region:<name>``.

    ``bytes``, ``flops`` and ``items`` (non-negative ints) declare the work each entry does
    (docs/design.md, rule 18): the report's ``throughput`` divides it by the region's own CPU and device
    time; entries of one run sum. Each declared quantity costs one NVTX mark on entry.

    ```
    with regionprof.region("parse", bytes=len(data)):
        parse(data)

    @regionprof.region("decode", items=32)
    def decode(batch): ...
    ```
    """

    _handles: Dict[Tuple[str, str], int] = {}

    def __init__(self, name: str, kind: str = "region", *, bytes: Optional[int] = None,
                 flops: Optional[int] = None, items: Optional[int] = None) -> None:
        for parameter, value in (("name", name), ("kind", kind)):
            if not isinstance(value, str):
                raise TypeError(f"{parameter} must be a str, not {type(value).__name__}")
        for parameter, value in (("bytes", bytes), ("flops", flops), ("items", items)):
            if value is not None:
                _check_int(parameter, value)
                if value >= 1 << 64:
                    raise ValueError(f"{parameter} must be below 2**64, not {value}")
        key = (kind, name)
        handle = region._handles.get(key)
        if handle is None:
            handle = _native.register_region(kind, name)
            region._handles[key] = handle
        self.name = name
        self.kind = kind
        self.bytes = bytes
        self.flops = flops
        self.items = items
        self._handle = handle
        self._work = bytes is not None or flops is not None or items is not None

    def __enter__(self) -> "region":
        _native.push(self._handle)
        if self._work:
            _native.declare_work(self.bytes, self.flops, self.items)
        return self

    def __exit__(self, *exc: object) -> None:
        _native.pop()

    def __repr__(self) -> str:
        work = "".join(f", {q}={v!r}" for q, v in (("bytes", self.bytes), ("flops", self.flops), ("items", self.items))
                       if v is not None)
        return f"regionprof.region({self.name!r}, kind={self.kind!r}{work})"
