// Regions and run markers as NVTX ranges in the domain `regionprof` (emit side).
//
// Ranges are plain NVTX v3 pushes and pops with registered strings, so Nsight Systems shows them too,
// and they cost ~1.5 ns when no tool is attached. Define REGIONPROF_DISABLE to compile all of it to
// nothing (the types stay, empty, so code using them still compiles).
//
// Region names are `<kind>:<name>`, which the analysis's default rules map to region id `<kind>:<name>`.
#pragma once

#include <cstdint>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#ifndef REGIONPROF_DISABLE
#include <nvtx3/nvToolsExt.h>
#endif

namespace regionprof {

/// The NVTX domain every regionprof range lives in.
inline constexpr const char* nvtx_domain_name = "regionprof";
/// The name of the run marker range the harness emits around each measured run.
inline constexpr const char* run_marker_name = "regionprof.profiled_run";

/// The two region kinds of the reference module, plus anything the user names.
enum class region_kind : std::uint8_t {
  aot_module = 0,      ///< a module the user tuned: `aot_module:<name>`
  untuned_module = 1,  ///< a topmost untuned module: `untuned_module:<path>`
  user = 2,            ///< user regions: `region:<name>` unless a kind string is given
};

/// "aot_module", "untuned_module" or "region".
constexpr std::string_view to_string(region_kind kind) noexcept {
  switch (kind) {
    case region_kind::aot_module: return "aot_module";
    case region_kind::untuned_module: return "untuned_module";
    case region_kind::user: break;
  }
  return "region";
}

/// A region's name registered once with NVTX. Create it once (at start-up, or once per module), then
/// push it as often as needed: pushing a registered region copies no string.
///
/// ```
/// static const regionprof::registered_region parse{regionprof::region_kind::user, "parse"};
/// { regionprof::scoped_region r{parse}; do_parse(); }
/// ```
class registered_region {
 public:
  registered_region(region_kind kind, std::string_view name) : registered_region(to_string(kind), name) {}
  /// A user kind, e.g. {"layer", "3"} -> range `layer:3`.
#ifndef REGIONPROF_DISABLE
  registered_region(std::string_view kind, std::string_view name);
#else
  registered_region(std::string_view kind, std::string_view name) : range_name_(kind) {
    range_name_.append(":").append(name);
  }
#endif

  /// The full range name, `<kind>:<name>`.
  const std::string& range_name() const noexcept { return range_name_; }
  /// The NVTX registered string handle (nullptr when NVTX has no tool or REGIONPROF_DISABLE is set).
  const void* nvtx_handle() const noexcept { return handle_; }

 private:
  std::string range_name_;
  const void* handle_ = nullptr;
};

/// Work one region instance does (docs/design.md, rule 18): the report divides it by the region's own
/// CPU and device time (`throughput`). Each quantity is optional; declarations of several instances of
/// a region in one run sum.
///
/// ```
/// regionprof::region_work work;
/// work.bytes = 2 * n * sizeof(float);  // read x, write y
/// work.flops = 2 * n;                  // one multiply-add per element
/// ```
struct region_work {
  // `{}` initializers: `{.bytes = n}` leaves the others out without -Wmissing-field-initializers.
  std::optional<std::uint64_t> bytes{};  ///< bytes the instance reads and writes
  std::optional<std::uint64_t> flops{};  ///< floating-point operations
  std::optional<std::uint64_t> items{};  ///< items processed (elements, samples, tokens, ...)
};

#ifndef REGIONPROF_DISABLE
namespace detail {
/// The `regionprof` NVTX domain, created on first use (thread-safe). Inline: a push or pop pays one
/// guard check, not a call.
inline nvtxDomainHandle_t domain() noexcept {
  static const nvtxDomainHandle_t handle = nvtxDomainCreateA(nvtx_domain_name);
  return handle;
}

inline nvtxEventAttributes_t registered_attributes(const void* handle) noexcept {
  nvtxEventAttributes_t attributes{};
  attributes.version = NVTX_VERSION;
  attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attributes.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  attributes.message.registered = static_cast<nvtxStringHandle_t>(const_cast<void*>(handle));
  return attributes;
}

/// The registered names of the work marks, `regionprof.work.bytes`, `.flops`, `.items` (rule 18).
struct work_mark_handles {
  nvtxStringHandle_t bytes, flops, items;
};
/// Registered once (thread-safe); later calls pay one guard check.
const work_mark_handles& work_marks() noexcept;

inline void work_mark(nvtxStringHandle_t name, std::uint64_t value) noexcept {
  nvtxEventAttributes_t attributes = registered_attributes(name);
  attributes.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
  attributes.payload.ullValue = value;
  nvtxDomainMarkEx(domain(), &attributes);
}
}  // namespace detail

/// Declares `work` for the innermost regionprof range open on this thread (rule 18): one NVTX mark
/// `regionprof.work.<quantity>` with the value as its payload per declared quantity. Call it inside the
/// region; scoped_region's work constructor does. Costs what a mark costs (no clock read, no
/// allocation, no lock; one relaxed load when no session records).
///
/// ```
/// regionprof::scoped_region scope{copy};
/// regionprof::declare_work({.bytes = 2 * n});
/// ```
inline void declare_work(const region_work& work) noexcept {
  if (!work.bytes && !work.flops && !work.items) return;
  const detail::work_mark_handles& names = detail::work_marks();
  if (work.bytes) detail::work_mark(names.bytes, *work.bytes);
  if (work.flops) detail::work_mark(names.flops, *work.flops);
  if (work.items) detail::work_mark(names.items, *work.items);
}

/// Opens `region` on this thread. Pair with pop_region() on the same thread; prefer scoped_region.
inline void push_region(const registered_region& region) noexcept {
  const nvtxEventAttributes_t attributes = detail::registered_attributes(region.nvtx_handle());
  nvtxDomainRangePushEx(detail::domain(), &attributes);
}
/// Closes the innermost regionprof range open on this thread (a region or a run).
inline void pop_region() noexcept { nvtxDomainRangePop(detail::domain()); }
/// Opens the run marker on this thread. Pair with pop_region(); prefer scoped_run.
void push_run() noexcept;
#else
inline void declare_work(const region_work&) noexcept {}
inline void push_region(const registered_region&) noexcept {}
inline void pop_region() noexcept {}
inline void push_run() noexcept {}
#endif

/// RAII region: open for the lifetime of the object, on the thread that created it.
/// Not copyable, movable or heap-allocatable, so it cannot outlive its scope or change thread.
/// With a region_work, the instance declares that work (rule 18) right after it opens.
///
/// ```
/// void transform(batch& b) {
///   static const regionprof::registered_region r{regionprof::region_kind::aot_module, "encoder"};
///   regionprof::scoped_region scope{r, {.bytes = b.size_bytes(), .items = b.rows()}};
///   ...
/// }
/// ```
class scoped_region {
 public:
  explicit scoped_region(const registered_region& region) noexcept { push_region(region); }
  scoped_region(const registered_region& region, const region_work& work) noexcept {
    push_region(region);
    declare_work(work);
  }
  ~scoped_region() { pop_region(); }

  scoped_region(const scoped_region&) = delete;
  scoped_region& operator=(const scoped_region&) = delete;
  scoped_region(scoped_region&&) = delete;
  scoped_region& operator=(scoped_region&&) = delete;
  static void* operator new(std::size_t) = delete;
  static void* operator new[](std::size_t) = delete;
};

/// The run marker: one measured run of a workload, `regionprof.profiled_run` in domain `regionprof`.
/// The harness emits it; use it directly to mark runs of your own loop.
///
/// ```
/// for (int step = 0; step < 10; ++step) { regionprof::scoped_run run; train_step(); }
/// ```
class scoped_run {
 public:
  scoped_run() noexcept { push_run(); }
  ~scoped_run() { pop_region(); }

  scoped_run(const scoped_run&) = delete;
  scoped_run& operator=(const scoped_run&) = delete;
  scoped_run(scoped_run&&) = delete;
  scoped_run& operator=(scoped_run&&) = delete;
  static void* operator new(std::size_t) = delete;
  static void* operator new[](std::size_t) = delete;
};

}  // namespace regionprof

#define REGIONPROF_CONCAT_IMPL(a, b) a##b
#define REGIONPROF_CONCAT(a, b) REGIONPROF_CONCAT_IMPL(a, b)

/// A user region named `name` (a string literal) around the rest of the enclosing scope:
/// `REGIONPROF_REGION("parse");` opens range `region:parse`. Compiles to nothing with REGIONPROF_DISABLE.
#ifndef REGIONPROF_DISABLE
#define REGIONPROF_REGION(name)                                                                      \
  static const ::regionprof::registered_region REGIONPROF_CONCAT(regionprof_region_, __LINE__){      \
      ::regionprof::region_kind::user, name};                                                        \
  const ::regionprof::scoped_region REGIONPROF_CONCAT(regionprof_scope_, __LINE__) {                 \
    REGIONPROF_CONCAT(regionprof_region_, __LINE__)                                                  \
  }
#else
#define REGIONPROF_REGION(name) static_assert(true, "")
#endif
