// Built against the installed regionprof::benchmark: the header and the library link.
#include <cstdio>

#include <regionprof/benchmark/benchmark.hpp>

int main() {
  const bool ok = regionprof::benchmark::sanitize_file_name("BM_a/1") == "BM_a_1" &&
                  regionprof::benchmark::batch_size(10'000.0, 100'000) == 10;
  std::puts(ok ? "consumer_benchmark ok" : "consumer_benchmark FAILED");
  return ok ? 0 : 1;
}
