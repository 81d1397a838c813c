// Google Benchmark suites with regionprof: every timed iteration (or batch of K iterations) is a run,
// each benchmark writes its own profile JSON, and per-region counters show in Google Benchmark's output.
// register_until_steady(): a benchmark whose runs go on until their noise is low (docs/design.md, rule 16).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <benchmark/benchmark.h>

#include "regionprof/analysis/analysis.hpp"
#include "regionprof/regions/regions.hpp"
#include "regionprof/statistics/stopping.hpp"

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
  /// Stopping on noise (docs/design.md, rule 16), for register_until_steady(), which requires `max_noise`:
  /// runs go on until the noise of their wall times is at most max_noise and the minimums are met, or a
  /// maximum is reached. A recorder in a plain `for (auto _ : state)` loop, where Google Benchmark decides
  /// the iterations, skips the benchmark with an error when any member is set.
  stopping_options stopping;
  /// register_until_steady()'s wall clock (monotonic ns), read before and after each run; empty:
  /// regionprof::monotonic_now_ns. For tests: a clock the body advances makes the run times given.
  std::function<std::int64_t()> clock;
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
/// machine (MACHINE_LOADED, CPU_SCALING_ENABLED, GPU_THROTTLED as for the harness). In this loop Google
/// Benchmark decides the iteration count, so it cannot stop on noise: a recorder_options::stopping with
/// any member set skips the benchmark with an error; register_until_steady() is the benchmark that does.
/// Google Benchmark calls a benchmark
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
  friend ::benchmark::internal::Benchmark* register_until_steady(std::string name, std::function<void()> body,
                                                                 recorder_options options);
  struct state_holder;
  struct steady_tag {};
  recorder(::benchmark::State& state, std::string name, recorder_options options, steady_tag);
  void start();
  void finish();
  void flush_caches() noexcept;  ///< the cold-run flush, timer paused
  /// register_until_steady's single iteration: the calibration run, then runs of K calls until the stop.
  void measure_until_steady(const std::function<void()>& body);

  ::benchmark::State& state_;
  std::string name_;
  recorder_options options_;
  std::string path_;
  std::size_t batch_ = 1;
  std::size_t in_batch_ = 0;
  std::uint64_t iterations_ = 0;
  bool steady_ = false;  ///< register_until_steady's recorder
  bool abandoned_ = false;  ///< the body threw: no profile, no counters
  std::unique_ptr<state_holder> holder_;
};

/// Registers a Google Benchmark benchmark `name` that stops on noise (docs/design.md, rule 16) and returns
/// it for chaining (`->Unit(benchmark::kMicrosecond)`; it is already `->Iterations(1)->UseManualTime()`).
/// `body` is one call: one unit of work, what one iteration of a plain loop does. In its single Google
/// Benchmark iteration a recorder (as above) runs, inside the run marker each:
///
/// - a calibration run, discarded (the profile's skip_runs = 1): one cold call, not counted, then passes
///   of calls, each until they have lasted `options.min_run_ns` (at most 1'000'000 calls), until a pass is
///   no more than 10 % faster per call than the fastest before it (at most 20 passes; a body warms up over
///   many calls): K = `options.batch`, else batch_size() of the fastest pass's time per call;
/// - then runs of K calls, each run's wall time (device synchronize to device synchronize, `options.clock`)
///   fed to a regionprof::noise_stopper over `options.stopping` until it stops (noise_reached, max_runs,
///   max_time; cold runs flush before each run as with a recorder).
///
/// Google Benchmark's time is the median run's over K (`state.SetIterationTime`): its real time per
/// iteration; its CPU time covers the whole measurement, calibration included. Counters:
/// `regionprof_runs`, `regionprof_iterations_per_run` (K), `regionprof_noise` (when defined) and the
/// recorder's per-region counters over the measured runs. The profile has `stopping` and, at a maximum,
/// NOISE_TARGET_NOT_MET, as the harness's; its runs' wall times are the ones the stopper saw. Throws
/// std::invalid_argument for an empty `body`, `options.stopping` without max_noise or refused by
/// validate_stopping_options(), or `options.analysis.skip_runs` other than 0 (the calibration run is the
/// one skipped). An exception from `body` skips the benchmark with an error and writes no profile.
///
/// ```
/// regionprof::benchmark::recorder_options options;
/// options.stopping.max_noise = 0.01;  // 1 %
/// regionprof::benchmark::register_until_steady("BM_Parse", [&] {
///   regionprof::scoped_region region{parse_region};
///   parse(input);
/// }, options)->Unit(benchmark::kMicrosecond);
/// ```
::benchmark::internal::Benchmark* register_until_steady(std::string name, std::function<void()> body,
                                                        recorder_options options);

}  // namespace regionprof::benchmark
