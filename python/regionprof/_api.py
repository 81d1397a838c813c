"""The Profile result, profile() for any callable, analyze() for torch.profiler traces, region()."""

from __future__ import annotations

import contextlib
import html as _html
import json
import os
import sys
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Tuple, TypeVar, Union

from regionprof import _keywords, _native

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from regionprof._options import AnalyzeOptions, ProfileOptions

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
        """The HTML report as a fragment for a notebook output: one ``<div class="regionprof">`` with an id
        of its own, its styles scoped under it and its script reaching only its own elements, so that
        other outputs (pandas tables, other profiles) are left as they are."""
        return _pythonic(self._native.html_fragment(_fragment_id()))

    def write_json(self, path: StrPath) -> Path:
        """Writes the JSON report to ``path`` (placeholders ``%r %l %h %p`` expanded); returns the
        resolved path of the file written. Raises OSError naming it when it cannot be written
        (FileNotFoundError for a missing directory, IsADirectoryError, PermissionError, ...)."""
        return _written(self._native.write_json, path)

    def write_trace(self, path: StrPath) -> Path:
        """Writes the Chrome trace (Perfetto, chrome://tracing) to ``path`` (placeholders expanded);
        returns the resolved path of the file written. Raises OSError naming it when it cannot be
        written."""
        return _written(self._native.write_trace, path)

    def to_pandas(self, table: str = "regions") -> Any:
        """One table of the report as a pandas DataFrame (pandas is optional: ImportError without it).

        ``table``: ``"regions"`` (one row per run and region: ``run_index``, ``region_id``, ``calls``,
        ``cpu_time_us``, ``device_time_us``, the fractions), ``"summary"`` (``region_summary``, one row per
        region, statistics flattened as ``cpu_time_us_median``, then ``(residual)`` and ``(run total)`` rows
        from ``run_summary``, as in the Markdown summary), ``"runs"`` (one row per run: timing and
        residual), ``"tree"`` (one row per run and region-tree node, ``path`` joined by ``" > "``),
        ``"key_averages"`` (one row per view and event), ``"region_ops"`` (one row per region and op
        row: ``region_id``, then the key-average row's columns; the residual's rows have ``region_id``
        ``"(residual)"``) or ``"memory"`` (docs/design.md, rule 21: one row per run, owner and device:
        ``run_index``, ``region_id`` (a region id, ``"(residual)"`` or ``"(run total)"``, in that order within a run),
        ``device`` (``"cpu"``, ``"cuda:N"``), ``allocated_bytes``, ``freed_bytes``, ``allocations``, ``frees``
        (int64) and ``peak_allocated_bytes`` (nullable ``Int64``: ``<NA>`` where there is no peak); no row
        for an owner without memory figures, so no rows without memory events) or ``"memory_timeline"``
        (``data["memory_timelines"]``: one row per sample of the charted runs, ``run_index``, ``device``,
        ``offset_us`` since the run's start and ``total_bytes``; these columns and no row without device
        totals). A job report's tables have a ``rank`` column first, one block of rows per rank.

        ```
        df = regionprof.load("profile.json").to_pandas()
        df.groupby("region_id")["cpu_time_us"].median()
        ```
        """
        if not isinstance(table, str):
            raise TypeError(f"table must be a str, not {type(table).__name__}")
        if table not in _TABLE_NAMES:
            raise ValueError(f"table must be one of {', '.join(map(repr, _TABLE_NAMES))}, not {table!r}")
        try:
            import pandas
        except ImportError as e:
            raise ImportError("Profile.to_pandas() needs pandas: pip install pandas") from e
        if table == "memory":
            return _memory_frame(pandas, self)
        data = self.data
        if isinstance(self, JobProfile):
            rows = [{"rank": rank.get("rank"), **row} for rank in data.get("ranks", [])
                    for row in _TABLES[table](rank.get("profile", {}))]
        else:
            rows = _TABLES[table](data)
        if table == "memory_timeline":  # its columns also when it has no row
            columns = [*_MEMORY_TIMELINE_COLUMNS]
            return pandas.DataFrame(rows, columns=["rank", *columns] if isinstance(self, JobProfile) else columns)
        return pandas.DataFrame(rows)

    def __repr__(self) -> str:
        runs = len(self.data.get("runs", []))
        return f"<regionprof.Profile runs={runs} regions={len(self.data.get('regions', []))}>"


def _fragment_id() -> str:
    """An id no other output of any session shares (a notebook keeps earlier sessions' outputs)."""
    return f"regionprof-{uuid.uuid4().hex}"


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
    rows = [_flat_row({}, entry) for entry in data.get("region_summary", [])]
    totals = data.get("run_summary", {})
    if not totals:
        return rows
    # The Markdown summary's last two rows: what no region owned, and the run totals (run_summary).
    for name, prefix in (("(residual)", "residual_"), ("(run total)", "")):
        domains = {f"{domain}_time_us": totals[f"{prefix}{domain}_time_us"] for domain in ("cpu", "device")
                   if f"{prefix}{domain}_time_us" in totals}
        rows.append(_flat_row({"region_id": name, "runs_present": totals.get("runs")}, domains))
    return rows


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


def _region_ops_table(data: Dict[str, Any]) -> List[Dict[str, Any]]:
    return [_flat_row({"region_id": entry.get("region_id")}, row)
            for entry in data.get("region_ops", []) for row in entry.get("rows", [])]


#: The memory_timeline table's columns.
_MEMORY_TIMELINE_COLUMNS = ("run_index", "device", "offset_us", "total_bytes")


def _memory_timeline_table(data: Dict[str, Any]) -> List[Dict[str, Any]]:
    return [dict(zip(_MEMORY_TIMELINE_COLUMNS, (timeline.get("run_index"), device, offset_us, total_bytes)))
            for timeline in data.get("memory_timelines", [])
            for device, samples in timeline.get("devices", {}).items() for offset_us, total_bytes in samples]


_TABLES: Dict[str, Callable[[Dict[str, Any]], List[Dict[str, Any]]]] = {
    "regions": _regions_table, "summary": _summary_table, "runs": _runs_table, "tree": _tree_table,
    "key_averages": _key_averages_table, "region_ops": _region_ops_table,
    "memory_timeline": _memory_timeline_table}
#: Every table to_pandas makes: those of the JSON report's dict, and "memory", from the native rows.
_TABLE_NAMES = (*_TABLES, "memory")

#: The memory table's columns (a job's have "rank" first), and the dtypes of its numbers (strings keep
#: pandas' own string dtype).
_MEMORY_COLUMNS = ("run_index", "region_id", "device", "allocated_bytes", "freed_bytes", "allocations", "frees",
                   "peak_allocated_bytes")
_MEMORY_DTYPES = {"rank": "int64", "run_index": "int64", "allocated_bytes": "int64", "freed_bytes": "int64",
                  "allocations": "int64", "frees": "int64", "peak_allocated_bytes": "Int64"}


def _memory_frame(pandas: Any, profile: "Profile") -> Any:
    """``to_pandas("memory")``: the native rows (regionprof::memory_rows, typed: the JSON text is not
    parsed), one per run, owner and device."""
    columns: Tuple[str, ...] = _MEMORY_COLUMNS
    if isinstance(profile, JobProfile):
        rows = [(rank, *row) for rank, rank_rows in profile._native.memory_rows() for row in rank_rows]
        columns = ("rank", *columns)
    else:
        rows = profile._native.memory_rows()
    frame = pandas.DataFrame(rows, columns=list(columns))
    return frame.astype({name: _MEMORY_DTYPES[name] for name in columns if name in _MEMORY_DTYPES})


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
        return (
            "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>regionprof job report</title></head>\n"
            f"<body>{self._repr_html_()}</body></html>\n"
        )

    def _repr_html_(self) -> str:
        return f'<div class="regionprof"><pre>{_html.escape(self.markdown())}</pre></div>'

    def write_trace(self, path: StrPath) -> Path:
        """Writes the job's Chrome trace (``regionprof merge --trace``: one process per rank)."""
        return _written(self._native.write_trace, path)

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


def _written(write: Callable[[str], None], path: StrPath) -> Path:
    """``write(path)`` (a native writer, which expands the path's placeholders) and the resolved path of
    the file it wrote."""
    text = os.fspath(_check_path("path", path))
    write(text)
    return Path(_native.expand_output_path(text) if "%" in text else text).resolve()


def _check_bool(name: str, value: Any) -> None:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be a bool, not {type(value).__name__} ({value!r})")


def _check_path(name: str, value: Any) -> "os.PathLike[str] | str":
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{name} must be a str or os.PathLike, not {type(value).__name__}")
    return value


def _nvtx_package_warnings() -> List[Tuple[str, str]]:
    """NVTX_INITIALIZED_WITHOUT_TOOL when the ``nvtx`` package's NVTX was initialised without regionprof's
    capture: its first NVTX call came before ``import regionprof`` set NVTX_INJECTION64_PATH, and NVTX
    attaches a tool only then (the package then hands out its dummy domain for every name). Asking the
    package for a domain is also what initialises it when it has made no call yet, with the capture."""
    nvtx = sys.modules.get("nvtx")
    dummy = getattr(sys.modules.get("nvtx._lib"), "dummy_domain", None)
    get_domain = getattr(nvtx, "get_domain", None)
    if dummy is None or get_domain is None or not getattr(nvtx, "enabled", lambda: False)():
        return []
    extension = os.path.realpath(_native.__file__)
    named = os.environ.get("NVTX_INJECTION64_PATH")
    if not named or os.path.realpath(named) != extension:
        return []  # another tool owns NVTX: NVTX_TOOL_CONFLICT says so
    if get_domain("regionprof") is not dummy:
        return []
    return [("NVTX_INITIALIZED_WITHOUT_TOOL",
             "the nvtx package made its first NVTX call before import regionprof named regionprof's capture as "
             "NVTX's tool, so its NVTX runs without a tool in this process: no nvtx.annotate, push_range or mark "
             "range is recorded. Import regionprof before the first nvtx range, or start Python with "
             f"NVTX_INJECTION64_PATH={extension}")]


def _run_native(workload: Callable[[], Any], options: Dict[str, Any], caller: Dict[str, Any]) -> Profile:
    """The one call into the native session (profile() and regionprof.torch.profile()): ``options``, the
    user's keyword options (checked natively, messages naming the keyword; output paths' directories
    created and checked writable before the first run); ``caller``, what the front-end knows of the
    target (target_type, target_kind, module_types, args_count, kwargs, uses_inference_function,
    warnings)."""

    def call() -> None:
        workload()

    caller = {**caller, "warnings": [*caller.get("warnings", ()), *_nvtx_package_warnings()]}
    native, trace = _native.profile(call, options, caller)
    return Profile(native, None if trace is None else Path(trace))


@_keywords.takes("profile")
def profile(fn: Callable[[], Any], **options: "Unpack[ProfileOptions]") -> Profile:
    """Profiles ``fn()`` with the native harness: ``warmup_runs`` unrecorded calls, one recorded
    warm-up that is discarded, then ``measured_runs`` calls, each inside the run marker
    ``regionprof.profiled_run``. Every NVTX range of the process is recorded; device time comes from
    CUPTI when CUDA is present. The report's ``environment`` records the machine.

    Stop on noise (docs/design.md, rule 16): with ``max_noise`` measured runs go on until the noise of
    the run's wall time is at most ``max_noise``, within ``min_runs``, ``max_runs``, ``min_time_s`` and
    ``max_time_s``; the report then has ``stopping`` (``NOISE_TARGET_NOT_MET`` at a maximum).

    ``regions``: rules in the CLI's ``REGEX=KIND`` form; given rules replace the default ones
    (prefixes ``aot_module:``, ``untuned_module:`` and ``region:``, the last being what
    :func:`region` emits). ``graph_attribution``: docs/design.md, rule 15.

    Windows (docs/design.md, "Long runs: windows"): every N measured runs are analysed, written to
    ``window_output`` (a path with ``%w``, the window's index, or ``%n``, the same here) and dropped, so
    memory stays bounded however many runs are measured; the last, partial window is written at the end
    and returned. Run indices continue across windows and each report has ``target.window``. A
    ``trace_file`` then needs ``%w`` too (one per window).

    Output paths (``trace_file``, ``window_output``) expand ``~`` and the placeholders ``%r %l %h %p``;
    their directory is created and the file checked writable before the first run. Raises TypeError /
    ValueError naming the keyword for a bad option (a bad rule: the C++ message), OSError naming it for
    a path that cannot be written, and whatever ``fn`` raises.

    ```
    def step():
        with regionprof.region("parse"):
            parse()
        transform()
    print(regionprof.profile(step, measured_runs=5).markdown())
    ```
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable, not {type(fn).__name__}")
    return _run_native(fn, dict(options), {"target_type": "callable"})


@_keywords.takes("analyze")
def analyze(trace: StrPath, **options: "Unpack[AnalyzeOptions]") -> Profile:
    """Analyses a torch.profiler (Kineto) Chrome trace, plain ``.json`` or gzip ``.json.gz``, or a
    Chrome trace regionprof wrote.

    ``run_marker``: a regex (RE2, whole name, any domain) for the ranges that mark runs, e.g.
    ``r"ProfilerStep#\\d+"``; None: the core's one default, the name ``regionprof.profiled_run`` exactly, in
    any domain (the harness's marker, and ``torch.profiler.record_function("regionprof.profiled_run")``).
    ``regions``: rules ``REGEX=KIND`` replacing the default ones (``aot_module:`` and ``untuned_module:``
    prefixes). ``warmup_runs``: the first runs found are warm-ups and are left out (a trace of
    :func:`profile` holds its internal warm-up run first: ``warmup_runs=1`` reads it back to the
    profile's runs). Raises TypeError / ValueError naming the keyword for a bad option (a bad rule: the
    C++ message), OSError naming the file for one that cannot be opened (FileNotFoundError,
    IsADirectoryError, PermissionError), and :class:`regionprof.TraceError` (a ValueError) naming the
    file for a trace that cannot be read as one.

    ```
    p = regionprof.analyze("rank0.json.gz", run_marker=r"ProfilerStep#\\d+", regions=["## (.*) ##=phase"])
    print(p.markdown())
    ```
    """
    trace = _check_path("trace", trace)
    return Profile(_native.analyze(os.fspath(trace), dict(options)), None)


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
