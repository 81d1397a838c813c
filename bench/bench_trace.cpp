// String interning cost: what a producer pays per distinct name.
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "regionprof/trace/trace.hpp"

namespace {

void BM_StringIntern(benchmark::State& state) {
  std::vector<std::string> names;
  for (int i = 0; i < 1024; ++i) names.push_back("aten::op_" + std::to_string(i));
  regionprof::string_table strings;
  std::size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(strings.intern(names[i++ & 1023]));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_StringIntern);

}  // namespace
