// Hand-built traces for tests: a fluent builder over regionprof::trace.
//
// ```
// using namespace regionprof::test;
// regionprof::trace t = trace_builder()
//     .thread(1).marker(0, 1000).range("aot_module:encoder", 100, 600)
//     .launch(200, 260, 1).kernel("gemm", 300, 700, 1)
//     .build();
// ```
// Times are ns. Events are appended in call order (input order decides rule 1's ties). Every CPU event
// goes to the current thread (the last one named with thread(); pid 1, tid 1 when none was named).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "regionprof/trace/trace.hpp"

namespace regionprof::test {

/// Default run marker name and domain (regionprof::default_run_marker()).
inline constexpr std::string_view marker_name = "regionprof.profiled_run";
inline constexpr std::string_view marker_domain = "regionprof";

class trace_builder {
 public:
  /// Makes thread (pid, tid) current, adding it when new.
  trace_builder& thread(std::int64_t tid, std::string_view name = {}, std::int64_t pid = 1);

  /// A range (NVTX range / user annotation) in `domain` ("" = the unnamed domain).
  trace_builder& range(std::string_view name, std::int64_t start, std::int64_t end, std::string_view domain = {});
  /// The default run marker: `regionprof.profiled_run` in domain `regionprof`.
  trace_builder& marker(std::int64_t start, std::int64_t end);
  trace_builder& cpu_op(std::string_view name, std::int64_t start, std::int64_t end);
  trace_builder& python_function(std::string_view name, std::int64_t start, std::int64_t end);
  /// A CUDA runtime API call carrying `correlation`.
  trace_builder& api(std::string_view name, std::int64_t start, std::int64_t end, std::uint32_t correlation);
  /// A CUDA driver API call carrying `correlation`.
  trace_builder& driver_api(std::string_view name, std::int64_t start, std::int64_t end,
                            std::uint32_t correlation);
  /// `cudaLaunchKernel` (runtime API) carrying `correlation`.
  trace_builder& launch(std::int64_t start, std::int64_t end, std::uint32_t correlation);

  /// Device ops. They also switch device tracing on.
  trace_builder& kernel(std::string_view name, std::int64_t start, std::int64_t end, std::uint32_t correlation,
                        std::uint32_t stream = 7, std::uint16_t device = 0);
  trace_builder& memcpy(std::string_view name, std::int64_t start, std::int64_t end, std::uint32_t correlation,
                        std::uint64_t bytes, std::uint32_t stream = 7, std::uint16_t device = 0);
  trace_builder& memset(std::string_view name, std::int64_t start, std::int64_t end, std::uint32_t correlation,
                        std::uint64_t bytes, std::uint32_t stream = 7, std::uint16_t device = 0);

  /// A memory event on the current thread (docs/design.md, rule 21): an allocation when `bytes` > 0, else
  /// a free of |bytes|; `total` is the device's total allocated after it (absent: the source gives none).
  trace_builder& memory(std::int64_t time, std::int64_t bytes, std::optional<std::int64_t> total = std::nullopt,
                        memory_device device = cpu_memory);
  /// A failed allocation of `bytes` on the current thread.
  trace_builder& out_of_memory(std::int64_t time, std::int64_t bytes, std::optional<std::int64_t> total = std::nullopt,
                               memory_device device = cpu_memory);

  /// Work declared by the last CPU interval added (docs/design.md, rule 18): one trace::declared_work entry.
  trace_builder& work(const declared_work& declared);
  trace_builder& device_tracing(bool on = true);
  trace_builder& wall_times(std::vector<std::int64_t> run_wall_times_ns);
  trace_builder& module_type(std::string_view region_id, std::string_view type_name);
  trace_builder& warning(warning_code code, warning_source source, std::string_view message);
  /// The trace's target: `type`, and the members of the JSON object `members_json` (target_of).
  trace_builder& target(std::string_view type, std::string_view members_json = {});

  /// The trace built so far (the builder keeps it).
  const trace& get() const noexcept { return trace_; }
  trace build() const { return trace_; }

 private:
  trace_builder& interval(interval_kind kind, std::string_view name, std::int64_t start, std::int64_t end,
                          std::uint32_t correlation, std::string_view domain);
  trace_builder& op(device_op_kind kind, std::string_view name, std::int64_t start, std::int64_t end,
                    std::uint32_t correlation, std::uint64_t bytes, std::uint32_t stream, std::uint16_t device);
  thread_index current_thread();

  trace trace_;
  thread_index current_ = 0;
  bool has_thread_ = false;
};

/// A target of `type` with the members of the JSON object `members_json` ("" none), each as the profile
/// reader takes it (modelled when its value has the member's type, else foreign), in order.
run_target target_of(std::string_view type, std::string_view members_json);

/// The target's members but `type`, serialized compactly (`{"rank":3,"host":"node-7"}`).
std::string members_json(const run_target& target);

}  // namespace regionprof::test
