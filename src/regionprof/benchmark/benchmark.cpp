#include "regionprof/benchmark/benchmark.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <system_error>

#include "regionprof/collect/device_session.hpp"
#include "regionprof/model/profile.hpp"
#include "regionprof/session/session.hpp"
#include "regionprof/trace/clock.hpp"

namespace regionprof::benchmark {
namespace {

constexpr std::size_t max_batch = 1'000'000;
/// The most calibration passes register_until_steady runs; K then comes from the fastest of them.
constexpr std::size_t max_calibration_passes = 20;

/// ns per iteration of each benchmark's previous invocation in this process (for the automatic K).
std::map<std::string, double>& previous_speeds() {
  static std::map<std::string, double> speeds;
  return speeds;
}
std::mutex& speeds_mutex() {
  static std::mutex mutex;
  return mutex;
}

std::string profile_directory(const recorder_options& options) {
  if (!options.directory.empty()) return options.directory;
  const char* env = std::getenv("REGIONPROF_BENCHMARK_DIR");
  return env != nullptr && *env != '\0' ? std::string(env) : std::string("regionprof-benchmarks");
}

/// recorder_options::process_index, else $REGIONPROF_BENCHMARK_PROCESS (a whole number). Throws
/// std::invalid_argument naming the variable for another value.
std::optional<std::size_t> process_index(const recorder_options& options) {
  if (options.process_index) return options.process_index;
  const char* env = std::getenv("REGIONPROF_BENCHMARK_PROCESS");
  if (env == nullptr || *env == '\0') return std::nullopt;
  std::size_t index = 0;
  const std::string_view text(env);
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), index);
  if (error != std::errc{} || end != text.data() + text.size()) {
    throw std::invalid_argument("REGIONPROF_BENCHMARK_PROCESS='" + std::string(text) + "' is not a whole number");
  }
  return index;
}

std::string counter_prefix(const std::string& region_id) { return region_id; }

}  // namespace

std::size_t batch_size(std::optional<double> previous_ns_per_iteration, std::int64_t min_run_ns) {
  if (!previous_ns_per_iteration || !(*previous_ns_per_iteration > 0.0)) return 1;
  const double k = std::ceil(static_cast<double>(min_run_ns) / *previous_ns_per_iteration);
  if (!(k >= 1.0)) return 1;
  return k >= static_cast<double>(max_batch) ? max_batch : static_cast<std::size_t>(k);
}

std::string sanitize_file_name(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (char c : name) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                      c == '_' || c == '.';
    out += keep ? c : '_';
  }
  if (out.empty() || out == "." || out == "..") return "benchmark";
  return out;
}

std::string profile_path(const std::string& directory, std::string_view name, std::optional<std::size_t> process_index) {
  const std::filesystem::path base(directory);
  if (!process_index) return (base / (sanitize_file_name(name) + ".json")).string();
  return (base / sanitize_file_name(name) / ("prof-" + std::to_string(*process_index) + ".json")).string();
}

/// The profiling session of one invocation.
struct recorder::state_holder {
  std::unique_ptr<session> profiling;
};

recorder::recorder(::benchmark::State& state, std::string name, recorder_options options)
    : state_(state), name_(std::move(name)), options_(std::move(options)), holder_(std::make_unique<state_holder>()) {
  if (options_.stopping.max_noise || has_stopping_bounds(options_.stopping)) {
    state_.SkipWithError(
        "regionprof::benchmark::recorder: recorder_options::stopping is set, but in a "
        "`for (auto _ : state)` loop Google Benchmark decides the iterations; register the benchmark with "
        "regionprof::benchmark::register_until_steady to stop on noise");
    return;
  }
  start();
}

recorder::recorder(::benchmark::State& state, std::string name, recorder_options options, steady_tag)
    : state_(state), name_(std::move(name)), options_(std::move(options)), steady_(true),
      holder_(std::make_unique<state_holder>()) {
  start();
}

void recorder::start() {
  if (state_.threads() > 1) {
    state_.SkipWithError("regionprof::benchmark::recorder records single-threaded benchmarks only");
    return;
  }
  if (steady_) {
    // K comes from the calibration run (measure_until_steady).
  } else if (options_.batch) {
    batch_ = std::max<std::size_t>(1, *options_.batch);
  } else {
    std::optional<double> previous;
    {
      const std::lock_guard lock(speeds_mutex());
      const auto it = previous_speeds().find(name_);
      if (it != previous_speeds().end()) previous = it->second;
    }
    batch_ = batch_size(previous, options_.min_run_ns);
  }
  std::optional<std::size_t> index;
  try {
    index = process_index(options_);
  } catch (const std::invalid_argument& e) {
    state_.SkipWithError((std::string("regionprof: ") + e.what()).c_str());
    return;
  }
  path_ = regionprof::benchmark::profile_path(profile_directory(options_), name_, index);
  const std::filesystem::path directory = std::filesystem::path(path_).parent_path();
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  if (error) {
    state_.SkipWithError(("regionprof: cannot create '" + directory.string() + "': " + error.message()).c_str());
    return;
  }
  profile_options profile;
  profile.warmup_runs = 0;
  profile.analysis = options_.analysis;
  profile.device_tracing = options_.device_tracing;
  profile.flush_cache = options_.flush_cache;
  profile.stopping = options_.stopping;
  profile.json_output = escape_output_path(path_);  // a file name, no placeholder
  profile.uses_inference_function = false;
  try {
    run_target target;
    target.type = "google_benchmark";
    session_setup setup;
    setup.who = "regionprof::benchmark";
    setup.keep_events = false;
    holder_->profiling = std::make_unique<session>(std::move(profile), std::move(target), std::move(setup));
    if (steady_ && options_.clock) holder_->profiling->set_clock(options_.clock);
    holder_->profiling->start();
  } catch (const std::exception& e) {
    holder_->profiling.reset();
    state_.SkipWithError((std::string("regionprof: ") + e.what()).c_str());
  }
}

void recorder::measure_until_steady(const std::function<void()>& body) {
  if (!holder_->profiling) return;  // skipped with an error already
  session& profiling = *holder_->profiling;
  const std::function<std::int64_t()> now =
      options_.clock ? options_.clock : std::function<std::int64_t()>([] { return monotonic_now_ns(); });
  try {
    // The calibration run, the session's internal warm-up run (discarded), chooses K. Its first call is
    // cold (first touches, lazy initialisation) and not counted; then passes of calls, each until they
    // have lasted min_run_ns, until a pass is no more than 10 % faster per call than the fastest before it
    // (at most max_calibration_passes); K from the fastest pass (preemption only ever slows a pass). A body
    // warms up over many calls: a 37 us sort took 127, 103, 76, 52, 43 and 37 us per call in six 100 us
    // passes; the first pass alone made K 1, not 3.
    double ns_per_call = 0.0;
    profiling.timed_run([&] {
      body();
      device_session* device = profiling.device();
      for (std::size_t pass = 0; pass < max_calibration_passes; ++pass) {
        if (device != nullptr) device->synchronize();
        const std::int64_t pass_start = now();
        std::size_t calls = 0;
        do {
          body();
          ++calls;
        } while (calls < max_batch && now() - pass_start < options_.min_run_ns);
        if (device != nullptr) device->synchronize();
        const double pass_ns_per_call = static_cast<double>(now() - pass_start) / static_cast<double>(calls);
        const bool steady = pass > 0 && pass_ns_per_call >= 0.9 * ns_per_call;
        if (pass == 0 || pass_ns_per_call < ns_per_call) ns_per_call = pass_ns_per_call;  // the fastest pass
        if (steady) break;
      }
    });
    batch_ = options_.batch ? std::max<std::size_t>(1, *options_.batch) : batch_size(ns_per_call, options_.min_run_ns);
    do {
      profiling.timed_run([&] {
        for (std::size_t call = 0; call < batch_; ++call) body();
      });
      iterations_ += batch_;
    } while (!profiling.timed_runs_done());
  } catch (const std::exception& e) {
    abandoned_ = true;
    state_.SkipWithError(("regionprof: " + name_ + ": the body threw: " + e.what()).c_str());
    return;
  } catch (...) {
    abandoned_ = true;
    state_.SkipWithError(("regionprof: " + name_ + ": the body threw").c_str());
    return;
  }
  // Google Benchmark's time per iteration: the median run's over K.
  const noise_stopper& stopper = *profiling.stopper();
  state_.SetIterationTime(stopper.median_ns() / 1e9 / static_cast<double>(batch_));
  const stopping_summary summary = stopper.summary();
  state_.counters["regionprof_runs"] = ::benchmark::Counter(static_cast<double>(summary.runs));
  state_.counters["regionprof_iterations_per_run"] = ::benchmark::Counter(static_cast<double>(batch_));
  if (summary.noise) state_.counters["regionprof_noise"] = ::benchmark::Counter(*summary.noise);
}

recorder::~recorder() {
  try {
    finish();
  } catch (const std::exception& e) {
    state_.SkipWithError((std::string("regionprof: ") + e.what()).c_str());
  }
}

std::uint64_t recorder::flushes() const noexcept {
  return holder_->profiling ? holder_->profiling->flushes() : 0;
}

void recorder::flush_caches() noexcept {
  if (!holder_->profiling) return;
  state_.PauseTiming();
  holder_->profiling->flush_caches();
  state_.ResumeTiming();
}

void recorder::finish() {
  if (!holder_->profiling) return;
  if (in_batch_ != 0) {  // the last batch ended short: close its run
    pop_region();
    in_batch_ = 0;
  }
  const std::unique_ptr<session> profiling = std::move(holder_->profiling);
  if (abandoned_) return;  // the body threw: the session discards what it recorded
  if (device_session* device = profiling->device()) device->synchronize();
  run_target& target = profiling->target();
  target.benchmark = sanitize_file_name(name_);
  target.iterations = iterations_;
  target.iterations_per_run = batch_;
  const Profile profile = *profiling->finish();  // written to path_

  const analysis_result& result = profile.result();
  if (iterations_ == 0) return;
  const double per_iteration = 1.0 / static_cast<double>(iterations_);
  std::int64_t run_cpu_ns = 0;
  for (const run_result& run : result.runs) run_cpu_ns += run.cpu_time_ns;
  if (!steady_) {  // the next plain invocation's automatic K
    const std::lock_guard lock(speeds_mutex());
    previous_speeds()[name_] = static_cast<double>(run_cpu_ns) * per_iteration;
  }
  std::vector<std::int64_t> cpu(result.regions.size(), 0);
  std::vector<std::int64_t> device(result.regions.size(), 0);
  std::vector<declared_work> work(result.regions.size());  // rule 18: summed over all runs
  std::vector<std::int64_t> work_cpu(result.regions.size(), 0);
  std::vector<std::int64_t> work_device(result.regions.size(), 0);
  for (const run_result& run : result.runs) {
    for (const region_aggregate& a : run.regions) {
      cpu[a.region] += a.cpu_time_ns;
      device[a.region] += a.device_time_ns.value_or(0);
      if (const declared_work* declared = work_of(result, a)) {
        work[a.region] += *declared;
        work_cpu[a.region] += a.cpu_time_ns;
        work_device[a.region] += a.device_time_ns.value_or(0);
      }
    }
  }
  for (std::size_t r = 0; r < result.regions.size(); ++r) {
    const std::string& id = counter_prefix(result.regions[r].id);
    state_.counters[id + "_cpu_us"] = ::benchmark::Counter(static_cast<double>(cpu[r]) / 1000.0 * per_iteration);
    if (result.has_device_data) {
      state_.counters[id + "_device_us"] =
          ::benchmark::Counter(static_cast<double>(device[r]) / 1000.0 * per_iteration);
    }
    // Rule 18: declared work over the region's own time, over the runs whose instances declared it.
    const auto rate = [&](const char* suffix, const std::optional<std::uint64_t>& quantity, std::int64_t time_ns) {
      if (quantity && time_ns > 0) {
        state_.counters[id + suffix] =
            ::benchmark::Counter(static_cast<double>(*quantity) * 1e9 / static_cast<double>(time_ns));
      }
    };
    rate("_bytes_per_second", work[r].bytes, work_cpu[r]);
    rate("_flops_per_second", work[r].flops, work_cpu[r]);
    rate("_items_per_second", work[r].items, work_cpu[r]);
    if (result.has_device_data) {
      rate("_device_bytes_per_second", work[r].bytes, work_device[r]);
      rate("_device_flops_per_second", work[r].flops, work_device[r]);
      rate("_device_items_per_second", work[r].items, work_device[r]);
    }
  }
}

::benchmark::internal::Benchmark* register_until_steady(std::string name, std::function<void()> body,
                                                        recorder_options options) {
  const std::string who = "regionprof::benchmark::register_until_steady";
  if (!body) throw std::invalid_argument(who + ": the body of '" + name + "' is empty");
  if (!options.stopping.max_noise) {
    throw std::invalid_argument(who + ": '" + name + "': set recorder_options::stopping.max_noise (the noise "
                                "to stop at, a fraction: 0.01 is 1 %)");
  }
  validate_stopping_options(options.stopping, who);
  if (options.analysis.skip_runs != 0) {
    throw std::invalid_argument(who + ": '" + name + "': analysis.skip_runs must be 0 (the calibration run is "
                                "the one skipped)");
  }
  ::benchmark::internal::Benchmark* registered = ::benchmark::RegisterBenchmark(
      name.c_str(), [name, body = std::move(body), options = std::move(options)](::benchmark::State& state) {
        recorder steady(state, name, options, recorder::steady_tag{});
        for (auto _ : state) steady.measure_until_steady(body);
      });
  return registered->Iterations(1)->UseManualTime();
}

}  // namespace regionprof::benchmark
