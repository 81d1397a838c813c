// See notool_push_pop.cpp.
#pragma once

#include <benchmark/benchmark.h>

/// Registered push + pop in the `regionprof` domain, in an NVTX instance with no tool attached.
__attribute__((visibility("default"))) void regionprof_bench_notool_push_pop(benchmark::State& state);
/// True if a tool attached to that instance after all (NVTX_INJECTION64_PATH set): the figure is void.
__attribute__((visibility("default"))) bool regionprof_bench_notool_attached();
