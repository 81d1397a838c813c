// cpu_pipeline: a three-stage CPU program profiled through regionprof::profile (no GPU needed).
//
// Each run: glue builds a batch of text records (outside any region), then
//   parse      aot_module:parser            text -> numbers
//   transform  untuned_module:transform     holds aot_module:normalize (nested: its time is transform's)
//   reduce     untuned_module:reduce        hands half the batch to a worker thread, whose part runs in
//                                           region untuned_module:reduce.worker (off the run's thread)
// and glue formats the result (outside any region). The report shows per run how the CPU time splits
// between the regions and the residual (the glue), and the worker's time as off_thread_cpu_time_us.
//
// Usage: cpu_pipeline [-o profile.json] [--trace trace.json] [--markdown report.md]
//                     [--warmup-runs N] [--runs N] [--records N] [--parser-repeat N] [--no-cross-thread]
// (--parser-repeat N parses each batch N times: aot_module:parser N times as slow.) Prints the Markdown report.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <mutex>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "regionprof/harness/harness.hpp"
#include "regionprof/regions/regions.hpp"

namespace {

using regionprof::region_kind;
using regionprof::registered_region;
using regionprof::scoped_region;

const registered_region parser_region{region_kind::aot_module, "parser"};
const registered_region transform_region{region_kind::untuned_module, "transform"};
const registered_region normalize_region{region_kind::aot_module, "normalize"};
const registered_region reduce_region{region_kind::untuned_module, "reduce"};
const registered_region worker_region{region_kind::untuned_module, "reduce.worker"};

/// The reduce stage's per-value work (a few square roots), shared by both threads.
double weigh(double v) {
  double sum = 0;
  for (int k = 1; k <= 8; ++k) sum += std::sqrt(v * k + 1.0);
  return sum;
}

/// A worker thread that reduces spans handed to it, one job at a time.
class reduce_worker {
 public:
  reduce_worker() : thread_([this] { loop(); }) {}
  ~reduce_worker() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    ready_.notify_all();
    thread_.join();
  }
  reduce_worker(const reduce_worker&) = delete;
  reduce_worker& operator=(const reduce_worker&) = delete;

  void submit(std::span<const double> values) {
    std::lock_guard lock(mutex_);
    job_ = values;
    result_.reset();
    ready_.notify_all();
  }
  double wait() {
    std::unique_lock lock(mutex_);
    done_.wait(lock, [this] { return result_.has_value(); });
    return *result_;
  }

 private:
  void loop() {
    std::unique_lock lock(mutex_);
    for (;;) {
      ready_.wait(lock, [this] { return stopping_ || job_.has_value(); });
      if (stopping_) return;
      const std::span<const double> values = *job_;
      job_.reset();
      lock.unlock();
      double sum = 0;
      {
        const scoped_region region{worker_region};
        for (double v : values) sum += weigh(v);
      }
      lock.lock();
      result_ = sum;
      done_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable ready_;
  std::condition_variable done_;
  std::optional<std::span<const double>> job_;
  std::optional<double> result_;
  bool stopping_ = false;
  std::thread thread_;
};

/// Glue: the batch of `count` text records ("id,value;") this run reads.
std::string make_batch(std::size_t count, std::uint64_t seed) {
  std::string text;
  text.reserve(count * 16);
  std::uint64_t x = seed;
  for (std::size_t i = 0; i < count; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    text += std::to_string(i);
    text += ',';
    text += std::to_string((x >> 33) % 100000);
    text += ';';
  }
  return text;
}

/// Parses `batch` `repeat` times (a parser `repeat` times as slow, for `regionprof diff`'s gate check).
std::vector<double> parse(std::string_view batch, std::size_t repeat) {
  const scoped_region region{parser_region};
  std::vector<double> values;
  values.reserve(batch.size() / 8);
  for (std::size_t pass = 0; pass < repeat; ++pass) {
    values.clear();
    for (std::string_view text = batch; !text.empty();) {
      const std::size_t comma = text.find(',');
      const std::size_t end = text.find(';', comma);
      long value = 0;
      std::from_chars(text.data() + comma + 1, text.data() + end, value);
      values.push_back(static_cast<double>(value));
      text.remove_prefix(end + 1);
    }
  }
  return values;
}

void transform(std::vector<double>& values) {
  const scoped_region region{transform_region};
  for (double& v : values) v = std::log1p(v);
  {
    const scoped_region nested{normalize_region};  // nested: owned by transform (topmost owner)
    const double max = *std::max_element(values.begin(), values.end());
    for (double& v : values) v /= max;
  }
  std::vector<double> scratch(values);  // clip the top 1 % at the 99th percentile
  const auto p99 = scratch.begin() + static_cast<std::ptrdiff_t>(scratch.size() * 99 / 100);
  std::nth_element(scratch.begin(), p99, scratch.end());
  for (double& v : values) v = std::min(v, *p99);
}

double reduce(const std::vector<double>& values, reduce_worker& worker) {
  const scoped_region region{reduce_region};
  const std::size_t half = values.size() / 2;
  worker.submit(std::span<const double>(values).subspan(half));
  double sum = 0;
  for (std::size_t i = 0; i < half; ++i) sum += weigh(values[i]);
  return sum + worker.wait();
}

struct arguments {
  std::optional<std::string> json;
  std::optional<std::string> trace;
  std::optional<std::string> markdown;
  std::size_t warmup_runs = 3;
  std::size_t runs = 10;
  std::size_t records = 40'000;
  std::size_t parser_repeat = 1;
  bool cross_thread = true;
};

[[noreturn]] void usage(const std::string& problem) {
  std::fprintf(stderr,
               "cpu_pipeline: %s\nusage: cpu_pipeline [-o profile.json] [--trace trace.json] [--markdown report.md]\n"
               "                    [--warmup-runs N] [--runs N] [--records N] [--parser-repeat N] [--no-cross-thread]\n",
               problem.c_str());
  std::exit(2);
}

std::size_t count_argument(const char* flag, const char* text) {
  std::size_t value = 0;
  const std::string_view view(text);
  const auto [end, error] = std::from_chars(view.data(), view.data() + view.size(), value);
  if (error != std::errc{} || end != view.data() + view.size()) {
    usage(std::string(flag) + " needs a non-negative integer, got '" + text + "'");
  }
  return value;
}

arguments parse_arguments(int argc, char** argv) {
  arguments args;
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) usage(std::string(flag) + " needs a value");
      return argv[++i];
    };
    if (flag == "-o" || flag == "--json") {
      args.json = value();
    } else if (flag == "--trace") {
      args.trace = value();
    } else if (flag == "--markdown") {
      args.markdown = value();
    } else if (flag == "--warmup-runs") {
      args.warmup_runs = count_argument("--warmup-runs", value());
    } else if (flag == "--runs") {
      args.runs = count_argument("--runs", value());
    } else if (flag == "--records") {
      args.records = count_argument("--records", value());
    } else if (flag == "--parser-repeat") {
      args.parser_repeat = count_argument("--parser-repeat", value());
    } else if (flag == "--no-cross-thread") {
      args.cross_thread = false;
    } else if (flag == "-h" || flag == "--help") {
      usage("profiles a parse -> transform -> reduce pipeline and prints the report");
    } else {
      usage("unknown argument '" + std::string(flag) + "'");
    }
  }
  if (args.runs == 0) usage("--runs must be at least 1");
  if (args.records == 0) usage("--records must be at least 1");
  if (args.parser_repeat == 0) usage("--parser-repeat must be at least 1");
  return args;
}

}  // namespace

int main(int argc, char** argv) {
  const arguments args = parse_arguments(argc, argv);
  try {
    reduce_worker worker;
    std::uint64_t run = 0;
    double checksum = 0;
    auto pipeline = [&] {
      const std::string batch = make_batch(args.records, ++run);  // glue
      std::vector<double> values = parse(batch, args.parser_repeat);
      transform(values);
      const double result = reduce(values, worker);
      checksum += std::round(result * 1e3) / 1e3;  // glue
    };

    regionprof::profile_options options;
    options.warmup_runs = args.warmup_runs;
    options.measured_runs = args.runs;
    options.analysis.cross_thread = args.cross_thread;
    options.trace_file = args.trace;
    options.target_type = "cpu_pipeline";
    const regionprof::Profile profile = regionprof::profile(pipeline, options);

    std::cout << regionprof::to_markdown(profile);
    if (args.json) regionprof::write_json(profile, *args.json);
    if (args.markdown) regionprof::write_markdown(profile, *args.markdown);
    std::cerr << "cpu_pipeline: " << (args.warmup_runs + 1 + args.runs) << " runs, checksum " << checksum;
    if (args.json) std::cerr << ", wrote " << *args.json;
    if (args.trace) std::cerr << ", wrote " << *args.trace;
    std::cerr << '\n';
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cpu_pipeline: %s\n", e.what());
    return 1;
  }
  return 0;
}
