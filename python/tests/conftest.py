"""regionprof is imported first: it names itself as the NVTX tool before any NVTX instance initialises."""

import regionprof  # noqa: F401  (must precede torch and nvtx)
