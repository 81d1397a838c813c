"""regionprof is imported first: it names itself as the NVTX tool before any NVTX instance initialises.
Each pytest process gets an empty REGIONPROF_CACHE_DIR of its own (ops=True compiles its callback
there), so no test depends on what an earlier run or another source version left in a cache."""

import atexit
import os
import shutil
import tempfile

import regionprof  # noqa: F401  (must precede torch and nvtx)

os.environ["REGIONPROF_CACHE_DIR"] = tempfile.mkdtemp(prefix="regionprof-cache-")
atexit.register(shutil.rmtree, os.environ["REGIONPROF_CACHE_DIR"], ignore_errors=True)
