#include "support/random_trace.hpp"

#include <algorithm>
#include <cstddef>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "support/trace_builder.hpp"

namespace regionprof::test {

namespace {

class generator {
 public:
  generator(std::uint64_t seed, const random_trace_options& options) : random_(seed), options_(options) {}

  trace run() {
    const std::int64_t base = between(-1'000'000, 1'000'000);
    marker_name_ = out_.strings.intern(marker_name);
    marker_domain_ = out_.domain(marker_domain);
    for (std::size_t t = 0; t < options_.threads; ++t) {
      thread_ = out_.add_thread(1, static_cast<std::int64_t>(t + 1));
      std::int64_t cursor = base + between(0, 50);
      for (std::size_t i = 0; i < options_.top_level_items; ++i) {
        const std::int64_t start = cursor + between(0, 40);
        const std::int64_t end = start + between(0, 800);
        const bool marker = t == 0 ? chance(0.7) : chance(options_.other_thread_marker_probability);
        add_interval(marker ? role::marker : pick_role(0), start, end, 0);
        cursor = chance(0.1) ? start + between(0, end - start) : end;  // some top-level overlaps
      }
    }
    // A few device ops nobody launched.
    if (options_.device_ops) {
      for (int i = 0, n = static_cast<int>(between(0, 2)); i < n; ++i) {
        add_op(chance(0.5) ? 0u : 1'000'000u + static_cast<std::uint32_t>(i), base + between(0, 5000));
      }
      out_.device_tracing = chance(0.9);
    }
    if (options_.shuffle) {
      shuffle(out_.intervals);
      shuffle(out_.device_ops);
    }
    return std::move(out_);
  }

 private:
  enum class role { marker, region, op, api };

  std::int64_t between(std::int64_t low, std::int64_t high) {  // inclusive
    if (high <= low) return low;
    return low + static_cast<std::int64_t>(random_() % static_cast<std::uint64_t>(high - low + 1));
  }
  template <class T>
  void shuffle(std::vector<T>& items) {  // Fisher-Yates on the raw output (std::shuffle is not portable)
    for (std::size_t i = items.size(); i > 1; --i) {
      std::swap(items[i - 1], items[static_cast<std::size_t>(between(0, static_cast<std::int64_t>(i) - 1))]);
    }
  }
  bool chance(double p) { return static_cast<double>(random_() >> 11) * 0x1.0p-53 < p; }

  role pick_role(int depth) {
    if (depth > 0 && chance(0.3)) return role::api;
    if (depth > 0 && chance(0.02)) return role::marker;  // nested marker: odd, but traces have them
    return chance(0.35) ? role::region : role::op;
  }

  void add_interval(role r, std::int64_t start, std::int64_t end, int depth) {
    cpu_interval interval;
    interval.start_ns = start;
    interval.end_ns = end;
    interval.thread = thread_;
    switch (r) {
      case role::marker:
        interval.name = marker_name_;
        interval.domain = marker_domain_;
        break;
      case role::region: {
        static const char* const names[] = {"aot_module:r0", "aot_module:r1", "aot_module:r2",
                                            "untuned_module:m0", "untuned_module:m1"};
        interval.name = out_.strings.intern(names[between(0, 4)]);
        interval.kind = chance(0.2) ? interval_kind::python_function : interval_kind::range;
        break;
      }
      case role::op:
        interval.name = out_.strings.intern("op" + std::to_string(between(0, 4)));
        interval.kind = interval_kind::cpu_op;
        break;
      case role::api:
        interval.kind = chance(0.8) ? interval_kind::runtime_api : interval_kind::driver_api;
        interval.name = out_.strings.intern(interval.kind == interval_kind::runtime_api ? "cudaLaunchKernel"
                                                                                        : "cuLaunchKernel");
        if (!chance(0.05)) interval.correlation_id = next_correlation_++;
        if (chance(0.1)) next_correlation_ += 3;  // gaps in the ids
        break;
    }
    out_.intervals.push_back(interval);
    if (chance(options_.equal_probability)) {
      cpu_interval twin = interval;
      if (r == role::api) twin.correlation_id = 0;
      out_.intervals.push_back(twin);
    }
    if (r == role::api) {
      if (options_.device_ops && interval.correlation_id != 0) {
        for (int i = 0, n = static_cast<int>(between(0, 3)); i < n; ++i) {
          add_op(interval.correlation_id, start + between(-5, 300));
        }
      }
      return;
    }
    if (depth >= options_.max_depth) return;
    std::int64_t cursor = start;
    while (true) {
      const std::int64_t child_start = cursor + between(0, 30);
      if (child_start > end) break;
      std::int64_t child_end = child_start + between(0, std::max<std::int64_t>(0, (end - child_start) * 2 / 3));
      if (chance(options_.overlap_probability)) child_end = end + between(1, 60);
      add_interval(pick_role(depth + 1), child_start, child_end, depth + 1);
      cursor = child_end + between(0, 20);
      if (cursor >= end || chance(0.25)) break;
    }
  }

  void add_op(std::uint32_t correlation, std::int64_t start) {
    device_op op;
    op.start_ns = start;
    op.end_ns = start + between(0, 200);
    op.name = out_.strings.intern("k" + std::to_string(between(0, 3)));
    op.correlation_id = correlation;
    op.stream = static_cast<std::uint32_t>(between(7, 9));
    op.kind = chance(0.8) ? device_op_kind::kernel : device_op_kind::memcpy;
    if (op.kind == device_op_kind::memcpy) op.bytes = static_cast<std::uint64_t>(between(1, 1 << 20));
    out_.device_ops.push_back(op);
  }

  std::mt19937_64 random_;
  random_trace_options options_;
  trace out_;
  thread_index thread_ = 0;
  name_id marker_name_ = 0;
  domain_index marker_domain_ = 0;
  std::uint32_t next_correlation_ = 1;
};

}  // namespace

trace random_trace(std::uint64_t seed, const random_trace_options& options) {
  return generator(seed, options).run();
}

}  // namespace regionprof::test
