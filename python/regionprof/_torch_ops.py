"""Op ranges for ``ops=True`` (regionprof.torch): each torch operator, autograd node and
``record_function`` block a range of NVTX's default domain, keyed by the op's name (docs/design.md, rule
20); and memory events for ``memory=True``: each allocation and free torch's allocators report, on the
thread that made it (rule 21).

The cheap route is a global RecordFunction callback (src/regionprof/torch/op_ranges.hpp) compiled at
first use against the user's own torch, whatever its release, and cached: the package links no torch.
It pushes each op's own name straight into the capture. Where it cannot be built (no C++ compiler, no
torch headers), torch's profiler in its NVTX mode (what ``torch.autograd.profiler.emit_nvtx()`` enables)
pushes the ranges instead, at several times the cost per op, and the profile carries ``OPS_VIA_NVTX``.
The memory reporter (src/regionprof/torch/memory_reporting.hpp) is in the same compiled library; it has no
stand-in, so ``memory=True`` raises where the library cannot be built.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Iterator, List, Optional, Tuple

import torch

from regionprof import _native

_SOURCE_DIR = Path(__file__).parent / "_cpp"  # the wheel's copy of src/regionprof/torch/op_ranges*
_SOURCES = ("op_ranges.hpp", "memory_reporting.hpp", "op_ranges_extension.cpp")
_COMPILE_TIMEOUT_S = 300


def cache_dir() -> Path:
    """Where compiled callbacks are kept: ``$REGIONPROF_CACHE_DIR``, else ``$XDG_CACHE_HOME/regionprof``,
    else ``~/.cache/regionprof``."""
    explicit = os.environ.get("REGIONPROF_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "regionprof"


def _compiler() -> Optional[str]:
    explicit = os.environ.get("CXX")
    if explicit:
        return shutil.which(explicit) or (explicit if os.path.isfile(explicit) else None)
    for name in ("c++", "g++", "clang++"):
        found = shutil.which(name)
        if found:
            return found
    return None


def _build(target: Path, compiler: str, torch_dir: Path, source: Optional[Path] = None) -> None:
    """Compiles the callback (or ``source``, built the same way) into ``target`` (atomically: ranks of one
    job may build it at once)."""
    abi = int(getattr(torch._C, "_GLIBCXX_USE_CXX11_ABI", True))
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, partial = tempfile.mkstemp(prefix=target.name + ".", suffix=".partial", dir=target.parent)
    os.close(fd)
    command = [compiler, "-std=c++20", "-O2", "-shared", "-fPIC", "-fvisibility=hidden", "-w",
               f"-D_GLIBCXX_USE_CXX11_ABI={abi}", "-isystem", str(torch_dir / "include"),
               str(source or _SOURCE_DIR / "op_ranges_extension.cpp"), "-o", partial,
               "-L", str(torch_dir / "lib"), "-lc10", "-ltorch_cpu", f"-Wl,-rpath,{torch_dir / 'lib'}"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=_COMPILE_TIMEOUT_S, check=False)
        if done.returncode != 0:
            lines = [line for line in done.stderr.splitlines() if "error" in line] or done.stderr.splitlines()
            raise RuntimeError(f"{Path(compiler).name} exited {done.returncode}: " + " / ".join(lines[:3])[:600])
        os.replace(partial, target)
    finally:
        if os.path.exists(partial):
            os.unlink(partial)


class _Library:
    """The loaded callback library and the handle of its one callback while any user holds it."""

    def __init__(self, library: ctypes.CDLL) -> None:
        self.add = library.regionprof_op_ranges_add
        self.add.restype = ctypes.c_uint64
        self.add.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        self.remove = library.regionprof_op_ranges_remove
        self.remove.restype = None
        self.remove.argtypes = [ctypes.c_uint64]
        self.memory_install = library.regionprof_memory_install
        self.memory_install.restype = ctypes.c_void_p
        self.memory_install.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
        self.memory_remove = library.regionprof_memory_remove
        self.memory_remove.restype = None
        self.memory_remove.argtypes = [ctypes.c_void_p]
        self.library = library  # kept loaded: torch may still hold the callback's code
        self.users = 0
        self.handle = 0


_lock = threading.Lock()
_loaded: Optional[_Library] = None
_failure: Optional[str] = None  # why the callback could not be built or loaded (once per process)


def _load() -> Tuple[Optional[_Library], str]:
    """The callback library for this torch, compiled into the cache the first time. Under _lock."""
    global _loaded, _failure
    if _loaded is not None or _failure is not None:
        return _loaded, _failure or ""
    try:
        torch_dir = Path(torch.__file__).resolve().parent
        key = hashlib.sha256()
        for name in _SOURCES:
            key.update((_SOURCE_DIR / name).read_bytes())
        key.update(f"{torch.__version__}\0{torch_dir}".encode())
        version = re.sub(r"[^0-9A-Za-z.]+", "_", torch.__version__)
        target = cache_dir() / f"op_ranges-torch{version}-{key.hexdigest()[:16]}.so"
        if not target.is_file():
            compiler = _compiler()
            if compiler is None:
                raise RuntimeError("no C++ compiler found (set CXX, or install g++)")
            if not (torch_dir / "include" / "ATen" / "record_function.h").is_file():
                raise RuntimeError(f"torch's C++ headers are not installed ({torch_dir / 'include'})")
            _build(target, compiler, torch_dir)
        _loaded = _Library(ctypes.CDLL(str(target)))
    except (OSError, RuntimeError, subprocess.SubprocessError) as error:
        _failure = str(error) or type(error).__name__
    return _loaded, _failure or ""


def _nvtx_mode_warning(reason: str) -> Tuple[str, str]:
    return ("OPS_VIA_NVTX",
            f"ops=True: regionprof's op callback could not be built against torch {torch.__version__} ({reason}), "
            "so torch's profiler in its NVTX mode recorded the ops instead, at several times the cost per op. "
            f"Install a C++ compiler (or set CXX) with torch's headers; the callback is then compiled once, into "
            f"{cache_dir()}.")


@contextlib.contextmanager
def op_ranges(ops: bool) -> Iterator[List[Tuple[str, str]]]:
    """With ``ops``: op ranges for the block; yields the warnings to add to the profile (``OPS_VIA_NVTX``
    when torch's NVTX mode stands in for the callback)."""
    if not ops:
        yield []
        return
    with _lock:
        library, reason = _load()
        if library is not None:
            if library.users == 0:
                push, pop = _native.op_range_functions()
                library.handle = library.add(push, pop)
                if library.handle == 0:
                    raise RuntimeError("ops=True: torch refused regionprof's op callback (at::addGlobalCallback)")
            library.users += 1
    if library is not None:
        try:
            yield []
        finally:
            with _lock:
                library.users -= 1
                if library.users == 0:
                    library.remove(library.handle)
                    library.handle = 0
        return
    with _nvtx_mode():
        yield [_nvtx_mode_warning(reason)]


@contextlib.contextmanager
def memory_events(memory: bool) -> Iterator[None]:
    """With ``memory``: for the block, every allocation, free and failed allocation torch's allocators
    (CPU, CUDA) report on the calling thread, and on the threads torch runs its work on (autograd's), is a
    memory event of the capture (docs/design.md, rule 21), through a memory reporter installed as this
    thread's torch profiler state. RuntimeError when the reporter cannot be built or installed (torch.profiler
    already running on this thread)."""
    if not memory:
        yield
        return
    with _lock:
        library, reason = _load()
    if library is None:
        raise RuntimeError(f"memory=True: regionprof's memory reporter could not be built against torch "
                           f"{torch.__version__} ({reason}). Install a C++ compiler (or set CXX) with torch's "
                           f"headers; it is then compiled once, into {cache_dir()}.")
    error = ctypes.create_string_buffer(512)
    handle = library.memory_install(_native.memory_event_function(), error, len(error))
    if not handle:
        raise RuntimeError(f"memory=True: {error.value.decode(errors='replace')}")
    try:
        yield
    finally:
        library.memory_remove(handle)


@contextlib.contextmanager
def _nvtx_mode() -> Iterator[None]:
    """Torch's profiler in its NVTX mode (emit_nvtx without its device synchronize, so it also runs on a
    machine without a GPU driver): an NVTX range per op named ``<op>, seq = N, op_id = M``; the capture
    cuts the suffix (trace/torch_op_names.hpp)."""
    from torch.autograd import ProfilerConfig, ProfilerState, _disable_profiler, _enable_profiler

    config = ProfilerConfig(ProfilerState.NVTX, False, False, False, False, False,
                            torch._C._profiler._ExperimentalConfig())
    try:
        _enable_profiler(config, set())
    except RuntimeError as error:
        raise RuntimeError(f"ops=True: torch's op ranges (its profiler's NVTX mode) could not be enabled: {error}. "
                           "Is torch.profiler already running?") from error
    try:
        yield
    finally:
        _disable_profiler()
