// Google Benchmark suites with regionprof: every timed iteration (or batch of K iterations) is a run,
// each benchmark writes its own profile JSON, and per-region counters show in Google Benchmark's output.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <benchmark/benchmark.h>

#include "regionprof/analysis.hpp"
#include "regionprof/regions.hpp"

namespace regionprof::benchmark {

/// Settings of a recorder.
struct recorder_options {
  /// Iterations per run (K). nullopt: the rule of batch_size(): 1 on a benchmark's first invocation,
  /// then enough iterations for a run of at least min_run_ns.
  std::optional<std::size_t> batch;
  /// The shortest run the automatic batch aims for (ns): K = ceil(min_run_ns / ns per iteration).
  std::int64_t min_run_ns = 100'000;
  /// Where the profile goes; empty: $REGIONPROF_BENCHMARK_DIR, else ./regionprof-benchmarks.
  std::string directory;
  /// This process's index when the suite runs several times for `regionprof diff` (docs/design.md,
  /// rule 17); nullopt: $REGIONPROF_BENCHMARK_PROCESS when set, else none. See profile_path().
  std::optional<std::size_t> process_index;
  analysis_options analysis;   ///< run marker and region rules (default: scoped_run, aot_/untuned_module)
  bool device_tracing = true;  ///< record device activity through CUPTI when a device is present
  /// Cold runs: before each run (batch), with Google Benchmark's timer paused and outside the run marker,
  /// write the CPU's last-level cache over (regionprof::cpu_cache_flusher) and, on a CUDA context, the
  /// device's L2, as regionprof::profile_options::flush_cache does.
  bool flush_cache = false;
};

/// K for a benchmark whose previous invocation took `previous_ns_per_iteration` (nullopt: none yet):
/// 1 without an estimate, else max(1, ceil(min_run_ns / previous_ns_per_iteration)), at most 1'000'000.
std::size_t batch_size(std::optional<double> previous_ns_per_iteration, std::int64_t min_run_ns);

/// `name` as a file name: letters, digits, `-`, `_` and `.` kept, anything else `_`
/// (`BM_Parse/64/threads:1` -> `BM_Parse_64_threads_1`); empty -> `benchmark`.
std::string sanitize_file_name(std::string_view name);

/// Where a benchmark's profile goes: `<directory>/<sanitized name>.json`, or with a process index
/// `<directory>/<sanitized name>/prof-<index>.json`, so that `<directory>/<sanitized name>` is one side
/// of `regionprof diff` (one profile per process).
///
/// ```
/// regionprof::benchmark::profile_path("base", "BM_Parse/64", 2);  // "base/BM_Parse_64/prof-2.json"
/// ```
std::string profile_path(const std::string& directory, std::string_view name, std::optional<std::size_t> process_index);

/// Records one benchmark invocation: captures NVTX ranges (and device activity) from construction to
/// destruction; iteration() marks the runs. When it goes out of scope, after the timed loop, it analyses
/// the capture, writes `<directory>/<sanitized name>.json` and sets, per region, the user counters
/// `<region_id>_cpu_us` and (with device data) `<region_id>_device_us`: the region's time per iteration,
/// summed over all runs and divided by the iterations they hold. Regions that declare work
/// (`scoped_region{r, {.bytes = n}}`, docs/design.md, rule 18) also get `<region_id>_bytes_per_second`,
/// `_flops_per_second` and `_items_per_second`: the work summed over the runs over the region's CPU time
/// in them (and, with device data, `_device_bytes_per_second` etc. over its device time); absent where
/// that time is 0. The profile's `environment` records the
/// machine (MACHINE_LOADED, CPU_SCALING_ENABLED, GPU_THROTTLED as for the harness). Google Benchmark
/// decides the iteration count, so stopping on noise is the harness's (regionprof::profile_options::stopping). Google Benchmark calls a benchmark
/// several times with growing iteration counts; each call rewrites the file, so the reported call's
/// profile remains. Single-threaded benchmarks only (state.threads() > 1 is skipped with an error).
///
/// ```
/// static void BM_Parse(benchmark::State& state) {
///   regionprof::benchmark::recorder recorder(state, "BM_Parse");
///   for (auto _ : state) {
///     const auto iteration = recorder.iteration();
///     regionprof::scoped_region region{parse_region};
///     parse(input);
///   }
/// }
/// BENCHMARK(BM_Parse);
/// ```
class recorder {
 public:
  recorder(::benchmark::State& state, std::string name, recorder_options options = {});
  ~recorder();

  recorder(const recorder&) = delete;
  recorder& operator=(const recorder&) = delete;
  recorder(recorder&&) = delete;
  recorder& operator=(recorder&&) = delete;

  /// Marks one iteration: opens a run before the first iteration of each batch and closes it after the
  /// K-th. Hold it for the iteration's body.
  class iteration_scope {
   public:
    explicit iteration_scope(recorder& owner) noexcept : owner_(owner) {
      if (owner_.in_batch_ == 0) {
        if (owner_.options_.flush_cache) owner_.flush_caches();
        push_run();
      }
    }
    ~iteration_scope() {
      ++owner_.iterations_;
      if (++owner_.in_batch_ == owner_.batch_) {
        pop_region();
        owner_.in_batch_ = 0;
      }
    }
    iteration_scope(const iteration_scope&) = delete;
    iteration_scope& operator=(const iteration_scope&) = delete;
    iteration_scope(iteration_scope&&) = delete;
    iteration_scope& operator=(iteration_scope&&) = delete;

   private:
    recorder& owner_;
  };

  [[nodiscard]] iteration_scope iteration() noexcept { return iteration_scope(*this); }

  std::size_t batch() const noexcept { return batch_; }       ///< K of this invocation
  std::uint64_t flushes() const noexcept;                     ///< cold-run flushes so far (flush_cache)
  const std::string& profile_path() const noexcept { return path_; }

 private:
  struct state_holder;
  void finish();
  void flush_caches() noexcept;  ///< the cold-run flush, timer paused

  ::benchmark::State& state_;
  std::string name_;
  recorder_options options_;
  std::string path_;
  std::size_t batch_ = 1;
  std::size_t in_batch_ = 0;
  std::uint64_t iterations_ = 0;
  std::unique_ptr<state_holder> holder_;
};

}  // namespace regionprof::benchmark
