#include "regionprof/collect/activity_decoder.hpp"

#include "regionprof/collect/kernel_names.hpp"

#include <cxxabi.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <tuple>

namespace regionprof::collect {
namespace {

bool timed(std::uint64_t start, std::uint64_t end) noexcept { return start != 0 && end != 0 && start <= end; }

std::string format_ms(std::uint64_t ns) {
  char text[48];
  std::snprintf(text, sizeof text, "%.3f ms", static_cast<double>(ns) / 1e6);
  return text;
}

std::string format_bytes(std::uint64_t bytes) {
  constexpr std::uint64_t kib = 1024;
  constexpr std::uint64_t mib = 1024 * 1024;
  char text[48];
  if (bytes >= mib && bytes % mib == 0) {
    std::snprintf(text, sizeof text, "%" PRIu64 " MiB", bytes / mib);
  } else if (bytes >= mib) {
    std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / static_cast<double>(mib));
  } else if (bytes >= kib && bytes % kib == 0) {
    std::snprintf(text, sizeof text, "%" PRIu64 " KiB", bytes / kib);
  } else {
    std::snprintf(text, sizeof text, "%" PRIu64 " bytes", bytes);
  }
  return text;
}

const char* memory_kind_name(std::uint32_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE: return "Pageable";
    case CUPTI_ACTIVITY_MEMORY_KIND_PINNED: return "Pinned";
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE: return "Device";
    case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY: return "Array";
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED: return "Managed";
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC: return "Device Static";
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC: return "Managed Static";
    default: return "Unknown";
  }
}

const char* copy_kind_name(std::uint32_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: return "HtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: return "AtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA: return "AtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD: return "AtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA: return "DtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "PtoP";
    default: return "Unknown";
  }
}

}  // namespace

std::string memcpy_name(std::uint32_t copy_kind, std::uint32_t source_kind, std::uint32_t destination_kind) {
  return std::string("Memcpy ") + copy_kind_name(copy_kind) + " (" + memory_kind_name(source_kind) + " -> " +
         memory_kind_name(destination_kind) + ")";
}

std::string memset_name(std::uint32_t memory_kind) {
  return std::string("Memset (") + memory_kind_name(memory_kind) + ")";
}

std::string synchronization_name(std::uint32_t type) {
  switch (type) {
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE: return "Event Sync";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT: return "Stream Wait Event";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE: return "Stream Sync";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE: return "Context Sync";
    default: return "Unknown Sync";
  }
}

std::string memory_pool_name(std::uint32_t operation) {
  switch (operation) {
    case CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED: return "Memory Pool Created";
    case CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_DESTROYED: return "Memory Pool Destroyed";
    default: return "Memory Pool Trimmed";  // the decoder keeps no other operation
  }
}

std::string overhead_name(std::uint32_t overhead_kind) {
  switch (overhead_kind) {
    case CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER: return "driver compiler";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH: return "CUPTI buffer flush";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION: return "CUPTI instrumentation";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_RESOURCE: return "CUPTI resource";
    case CUPTI_ACTIVITY_OVERHEAD_RUNTIME_TRIGGERED_MODULE_LOADING: return "runtime-triggered module loading";
    case CUPTI_ACTIVITY_OVERHEAD_LAZY_FUNCTION_LOADING: return "lazy function loading";
    case CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL: return "command buffer full";
    case CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST: return "activity buffer request";
    case CUPTI_ACTIVITY_OVERHEAD_UVM_ACTIVITY_INIT: return "UVM activity initialisation";
    default: return "overhead kind " + std::to_string(overhead_kind);
  }
}

std::string activity_kind_name(std::uint32_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_MEMCPY: return "MEMCPY";
    case CUPTI_ACTIVITY_KIND_MEMSET: return "MEMSET";
    case CUPTI_ACTIVITY_KIND_KERNEL: return "KERNEL";
    case CUPTI_ACTIVITY_KIND_DRIVER: return "DRIVER";
    case CUPTI_ACTIVITY_KIND_RUNTIME: return "RUNTIME";
    case CUPTI_ACTIVITY_KIND_DEVICE: return "DEVICE";
    case CUPTI_ACTIVITY_KIND_CONTEXT: return "CONTEXT";
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return "CONCURRENT_KERNEL";
    case CUPTI_ACTIVITY_KIND_NAME: return "NAME";
    case CUPTI_ACTIVITY_KIND_MARKER: return "MARKER";
    case CUPTI_ACTIVITY_KIND_MARKER_DATA: return "MARKER_DATA";
    case CUPTI_ACTIVITY_KIND_OVERHEAD: return "OVERHEAD";
    case CUPTI_ACTIVITY_KIND_MEMCPY2: return "MEMCPY2";
    case CUPTI_ACTIVITY_KIND_CUDA_EVENT: return "CUDA_EVENT";
    case CUPTI_ACTIVITY_KIND_STREAM: return "STREAM";
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return "SYNCHRONIZATION";
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return "EXTERNAL_CORRELATION";
    case CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API: return "INTERNAL_LAUNCH_API";
    case CUPTI_ACTIVITY_KIND_MEMORY2: return "MEMORY2";
    case CUPTI_ACTIVITY_KIND_MEMORY_POOL: return "MEMORY_POOL";
    case CUPTI_ACTIVITY_KIND_GRAPH_TRACE: return "GRAPH_TRACE";
    case CUPTI_ACTIVITY_KIND_JIT: return "JIT";
    default: return "kind " + std::to_string(kind);
  }
}

activity_decoder::activity_decoder(const activity_backend& backend) : backend_(backend) {}

void activity_decoder::decode_buffer(const std::uint8_t* data, std::size_t valid_bytes) {
  const walk_summary walk =
      backend_.for_each_record(data, valid_bytes, [this](const activity_record& record) { decode(record); });
  counts_.record_bytes += walk.record_bytes;
  if (walk.unread_bytes > 0 || walk.invalid_record) {
    ++counts_.cut_buffers;
    counts_.unread_bytes += walk.unread_bytes;
  }
  if (!walk.error.empty()) counts_.walk_errors.push_back(walk.error);
}

std::uint32_t activity_decoder::name_index(const std::string& name) {
  const auto [it, added] = name_indices_.try_emplace(name, static_cast<std::uint32_t>(names_.size()));
  if (added) names_.push_back(name);
  return it->second;
}

std::uint32_t activity_decoder::kernel_name(const char* pointer) {
  if (pointer == nullptr) return name_index("(unnamed kernel)");
  const auto cached = kernel_names_.find(pointer);
  if (cached != kernel_names_.end()) return cached->second;
  // The copy taken when CUPTI completed the buffer: the record's pointer may have outlived its module.
  const std::string* copy = kernel_names::instance().find(pointer);
  const char* mangled = copy != nullptr ? copy->c_str() : pointer;
  int status = 0;
  char* demangled = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  const std::uint32_t index = name_index(status == 0 && demangled != nullptr ? demangled : mangled);
  std::free(demangled);
  kernel_names_.emplace(pointer, index);
  return index;
}

template <class Record, class Name>
void activity_decoder::add_device_work(const Record& record, std::uint64_t bytes, device_op_kind kind,
                                       const Name& name) {
  if (!timed(record.start, record.end)) {
    ++counts_.untimed;
    return;
  }
  work_.push_back({record.start, record.end, bytes, name(), record.correlationId, record.streamId, record.deviceId, kind,
                   record.graphNodeId});
}

void activity_decoder::decode(const activity_record& record) {
  ++counts_.records;
  const std::uint32_t kind = enum_bits(&record.kind);
  // Records are read in place through the struct of their kind (CUPTI's documented usage); only fields
  // whose offsets are the same in CUPTI 12 and 13 are read (see cupti_records.hpp).
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto& kernel = reinterpret_cast<const kernel_record&>(record);
      ++counts_.kernels;
      add_device_work(kernel, 0, device_op_kind::kernel, [&] { return kernel_name(kernel.name); });
      return;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto& copy = reinterpret_cast<const memcpy_record&>(record);
      ++counts_.memcpys;
      add_device_work(copy, copy.bytes, device_op_kind::memcpy,
                      [&] { return name_index(memcpy_name(copy.copyKind, copy.srcKind, copy.dstKind)); });
      return;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto& set = reinterpret_cast<const memset_record&>(record);
      ++counts_.memsets;
      add_device_work(set, set.bytes, device_op_kind::memset, [&] { return name_index(memset_name(set.memoryKind)); });
      return;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
      const auto& api = reinterpret_cast<const api_record&>(record);
      const bool runtime = kind == CUPTI_ACTIVITY_KIND_RUNTIME;
      ++(runtime ? counts_.runtime_calls : counts_.driver_calls);
      if (!timed(api.start, api.end)) {
        ++counts_.untimed;
        return;
      }
      calls_.push_back({api.start, api.end, api.processId, api.threadId, api.correlationId, api.cbid,
                        runtime ? interval_kind::runtime_api : interval_kind::driver_api});
      return;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
      const auto& sync = reinterpret_cast<const synchronization_record&>(record);
      ++counts_.synchronizations;
      if (!timed(sync.start, sync.end)) {
        ++counts_.untimed;
        return;
      }
      synchronizations_.push_back({sync.start, sync.end, sync.correlationId, enum_bits(&sync.type)});
      return;
    }
    case CUPTI_ACTIVITY_KIND_MEMORY2: {
      const auto& memory = reinterpret_cast<const memory_record&>(record);
      ++counts_.memory_records;
      const std::uint32_t operation = enum_bits(&memory.memoryOperationType);
      if (operation != CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION &&
          operation != CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE) {
        ++counts_.skipped_kinds[kind];
        return;
      }
      if (memory.timestamp == 0) {
        ++counts_.untimed;
        return;
      }
      // Pageable and pinned host memory is the host's (`cpu`); device, managed, array and static memory
      // the device's.
      const std::uint32_t memory_kind = enum_bits(&memory.memoryKind);
      const bool host =
          memory_kind == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE || memory_kind == CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
      const auto device = static_cast<memory_device>(std::min<std::uint32_t>(memory.deviceId, 0x7fff));
      memory_.push_back({memory.timestamp, memory.timestamp, memory.bytes, memory.correlationId,
                         host ? cpu_memory : device,
                         operation == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION ? memory_event_kind::allocation
                                                                                      : memory_event_kind::free});
      return;
    }
    case CUPTI_ACTIVITY_KIND_MEMORY_POOL: {
      const auto& pool = reinterpret_cast<const memory_pool_record&>(record);
      ++counts_.memory_pool_records;
      const std::uint32_t operation = enum_bits(&pool.memoryPoolOperationType);
      if (operation != CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED &&
          operation != CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_DESTROYED &&
          operation != CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED) {
        ++counts_.skipped_kinds[kind];
        return;
      }
      if (pool.timestamp == 0) {
        ++counts_.untimed;
        return;
      }
      memory_pools_.push_back({pool.timestamp, pool.timestamp, pool.correlationId, operation});
      return;
    }
    case CUPTI_ACTIVITY_KIND_OVERHEAD: {
      const auto& overhead = reinterpret_cast<const overhead_record&>(record);
      ++counts_.overheads;
      overhead_total& total = overheads_[enum_bits(&overhead.overheadKind)];
      ++total.count;
      if (timed(overhead.start, overhead.end)) total.ns += overhead.end - overhead.start;
      // CUPTI 13 hands the client extra details it must free (Overhead3::overheadData; absent in CUPTI 12).
      if (backend_.library().major >= 13 && overhead.overheadData != nullptr) std::free(overhead.overheadData);
      return;
    }
    default:
      ++counts_.skipped_kinds[kind];
      return;
  }
}

void activity_decoder::append_to(trace& out, const clock_map& clock, const std::optional<session_window>& window,
                                 const std::vector<node_origin>& nodes) {
  const auto map_interval = [&clock](std::uint64_t start, std::uint64_t end) {
    const std::int64_t mapped_start = clock.to_monotonic(start);
    return std::pair{mapped_start, std::max(mapped_start, clock.to_monotonic(end))};
  };
  // A record of another session or stamped on another clock (~1e14 ns off after a timestamp callback
  // changed between sessions) lies outside the window: skipped and counted, never a huge time.
  const auto outside = [&](std::uint64_t start, std::uint64_t end) {
    if (!window) return false;
    const auto [mapped_start, mapped_end] = map_interval(start, end);
    return mapped_start < window->start_ns - session_window::tolerance_ns ||
           mapped_end > window->stop_ns + session_window::tolerance_ns;
  };
  const auto drop_outside = [&](auto& records) {
    const auto kept = std::remove_if(records.begin(), records.end(), [&](const auto& record) {
      return outside(record.start, record.end);
    });
    counts_.outside_session += static_cast<std::uint64_t>(records.end() - kept);
    records.erase(kept, records.end());
  };
  drop_outside(calls_);
  drop_outside(work_);
  drop_outside(synchronizations_);
  drop_outside(memory_);
  drop_outside(memory_pools_);

  // API calls, per thread in time order, an enclosing call before the calls it makes.
  std::sort(calls_.begin(), calls_.end(), [](const api_call& a, const api_call& b) {
    return std::tie(a.pid, a.tid, a.start, b.end) < std::tie(b.pid, b.tid, b.start, a.end);
  });
  std::unordered_set<std::uint32_t> runtime_ids;
  for (const api_call& call : calls_) {
    if (call.kind == interval_kind::runtime_api && call.correlation != 0) runtime_ids.insert(call.correlation);
  }
  std::unordered_map<std::uint64_t, name_id> api_names;
  struct caller_call {  // the API call of a correlation id: its thread, kind and mapped span
    thread_index thread = 0;
    interval_kind kind = interval_kind::runtime_api;
    std::int64_t start = 0;
    std::int64_t end = 0;
  };
  std::unordered_map<std::uint32_t, caller_call> caller;  // correlation -> call
  thread_index thread = 0;
  std::uint64_t thread_key = std::numeric_limits<std::uint64_t>::max();
  out.intervals.reserve(out.intervals.size() + calls_.size() + synchronizations_.size() + memory_pools_.size());
  for (const api_call& call : calls_) {
    const std::uint64_t key = (static_cast<std::uint64_t>(call.pid) << 32) | call.tid;
    if (key != thread_key) {
      thread = out.add_thread(call.pid, call.tid);
      thread_key = key;
    }
    const std::uint64_t name_key = (static_cast<std::uint64_t>(call.kind) << 32) | call.cbid;
    auto named = api_names.find(name_key);
    if (named == api_names.end()) {
      named = api_names.emplace(name_key, out.strings.intern(backend_.api_name(call.kind, call.cbid))).first;
    }
    std::uint32_t correlation = call.correlation;
    if (call.kind == interval_kind::driver_api && runtime_ids.count(correlation) != 0) correlation = 0;
    const auto [start, end] = map_interval(call.start, call.end);
    out.intervals.push_back({start, end, named->second, thread, correlation, 0, call.kind, 0});
    if (call.correlation != 0) {
      const caller_call found{thread, call.kind, start, end};
      auto [it, added] = caller.try_emplace(call.correlation, found);
      if (!added && call.kind == interval_kind::runtime_api) it->second = found;
    }
  }

  // Synchronization records: what a waiting call waited for, as a range under that call on its thread.
  if (!synchronizations_.empty()) {
    const domain_index sync_domain = out.domain("cuda_sync");
    for (const synchronization& sync : synchronizations_) {
      const auto found = caller.find(sync.correlation);
      if (found == caller.end()) {
        ++counts_.orphan_synchronizations;
        continue;
      }
      const auto [start, end] = map_interval(sync.start, sync.end);
      out.intervals.push_back({start, end, out.strings.intern(synchronization_name(sync.type)), found->second.thread,
                               0, sync_domain, interval_kind::range, 0});
    }
  }

  // An instant record of the call with `correlation` (rule 21): on the call's thread, at the record's own
  // time held within the call, so it is owned as the call is; none (and `orphans` counts it) when the
  // call was not recorded.
  struct in_call {
    thread_index thread = 0;
    std::int64_t time = 0;
  };
  const auto place_in_call = [&](std::uint32_t correlation, std::uint64_t time,
                                 std::uint64_t& orphans) -> std::optional<in_call> {
    const auto found = caller.find(correlation);
    if (found == caller.end()) {
      ++orphans;
      return std::nullopt;
    }
    const caller_call& call = found->second;
    return in_call{call.thread, std::clamp(clock.to_monotonic(time), call.start, call.end)};
  };

  // Memory pools created, trimmed and destroyed: a zero-length range under the API call.
  if (!memory_pools_.empty()) {
    const domain_index pool_domain = out.domain("cuda_memory_pool");
    for (const synchronization& pool : memory_pools_) {
      const std::optional<in_call> at = place_in_call(pool.correlation, pool.start, counts_.orphan_memory_pool_records);
      if (!at) continue;
      out.intervals.push_back({at->time, at->time, out.strings.intern(memory_pool_name(pool.type)), at->thread, 0,
                               pool_domain, interval_kind::range, 0});
    }
  }

  // Allocations and frees: memory events. CUPTI gives no device total.
  out.memory_events.reserve(out.memory_events.size() + memory_.size());
  for (const memory_operation& memory : memory_) {
    const std::optional<in_call> at = place_in_call(memory.correlation, memory.start, counts_.orphan_memory_records);
    if (!at) continue;
    constexpr std::uint64_t most = std::numeric_limits<std::int64_t>::max();
    const auto bytes = static_cast<std::int64_t>(std::min<std::uint64_t>(memory.bytes, most));
    out.memory_events.push_back({.time_ns = at->time,
                                 .bytes = memory.kind == memory_event_kind::free ? -bytes : bytes,
                                 .total_allocated = memory_event::no_total,
                                 .thread = at->thread,
                                 .device = memory.device,
                                 .kind = memory.kind});
  }

  // Graph replays: each node's creation point (thread, time) -> the API call around it on that thread,
  // the innermost (latest-starting) one; calls_ is sorted by (pid, tid, start).
  const node_origins origins(nodes);
  const auto capturing_call = [&](std::uint64_t node) -> std::uint32_t {
    const node_origin* made = origins.creation_of(node);
    if (made == nullptr) return 0;
    auto after = std::upper_bound(calls_.begin(), calls_.end(), *made, [&](const node_origin& point, const api_call& call) {
      if (point.pid != call.pid) return point.pid < call.pid;
      if (point.tid != call.tid) return point.tid < call.tid;
      return point.time_ns < map_interval(call.start, call.end).first;
    });
    // Calls of one thread nest (a runtime call around its driver calls): a few steps back at most.
    for (int step = 0; step < 8 && after != calls_.begin(); ++step) {
      const api_call& call = *--after;
      if (call.pid != made->pid || call.tid != made->tid) break;
      if (map_interval(call.start, call.end).second >= made->time_ns) return call.correlation;
    }
    return 0;
  };

  // Device ops.
  std::vector<name_id> ids(names_.size(), string_table::npos);
  out.device_ops.reserve(out.device_ops.size() + work_.size());
  for (const device_work& work : work_) {
    if (work.graph_node != 0) {
      const std::uint32_t capture = capturing_call(work.graph_node);
      ++counts_.graph_ops;
      if (capture != 0) ++counts_.captured_graph_ops;
      out.graph_ops.push_back({work.graph_node, static_cast<std::uint32_t>(out.device_ops.size()), capture});
    }
    if (ids[work.name] == string_table::npos) ids[work.name] = out.strings.intern(names_[work.name]);
    const auto [start, end] = map_interval(work.start, work.end);
    device_op op;
    op.start_ns = start;
    op.end_ns = end;
    op.bytes = work.bytes;
    op.name = ids[work.name];
    op.correlation_id = work.correlation;
    op.stream = work.stream;
    op.device = static_cast<std::uint16_t>(std::min<std::uint32_t>(work.device, 0xffff));
    op.kind = work.kind;
    out.device_ops.push_back(op);
  }
}

activity_decoder activity_decoder::take_window(std::int64_t cut_ns, const clock_map& clock, bool last) {
  activity_decoder window(backend_);
  window.names_ = names_;  // the records' name indices stay valid
  std::uint64_t late = 0;
  std::unordered_set<std::uint32_t> in_window;  // ids of this window's calls
  std::unordered_set<std::uint32_t> carried;    // ids of calls carried to a later window
  std::unordered_set<std::uint32_t> late_ids;   // ids of calls that came too late
  std::uint32_t highest = taken_correlation_;
  std::vector<api_call> kept;
  for (const api_call& call : calls_) {
    const std::int64_t start = clock.to_monotonic(call.start);
    if (taken_cut_ns_ && start < *taken_cut_ns_) {
      ++late;
      if (call.correlation != 0) late_ids.insert(call.correlation);
    } else if (last || start < cut_ns) {
      window.calls_.push_back(call);
      if (call.correlation != 0) in_window.insert(call.correlation);
      highest = std::max(highest, call.correlation);
    } else {
      kept.push_back(call);
      if (call.correlation != 0) carried.insert(call.correlation);
    }
  }
  calls_ = std::move(kept);

  enum class place : std::uint8_t { take, carry, drop };  // to this window, to a later one, late
  const auto place_of = [&](std::uint32_t correlation, std::uint64_t start) {
    if (correlation == 0) return last || clock.to_monotonic(start) < cut_ns ? place::take : place::carry;
    if (in_window.count(correlation) != 0) return place::take;
    if (carried.count(correlation) != 0) return place::carry;
    if (late_ids.count(correlation) != 0 || correlation <= taken_correlation_) return place::drop;
    if (last || correlation <= highest) return place::take;
    return place::carry;
  };
  const auto split = [&](auto& records, auto& to_window) {
    auto kept_end = records.begin();
    for (auto& record : records) {
      switch (place_of(record.correlation, record.start)) {
        case place::take: to_window.push_back(record); break;
        case place::carry: *kept_end++ = record; break;
        case place::drop: ++late; break;
      }
    }
    records.erase(kept_end, records.end());
  };
  split(work_, window.work_);
  split(synchronizations_, window.synchronizations_);
  split(memory_, window.memory_);
  split(memory_pools_, window.memory_pools_);
  if (!last) taken_cut_ns_ = cut_ns;
  taken_correlation_ = highest;
  window.counts_.late_records = late;
  return window;
}

void activity_decoder::add_window_counts(const decode_counts& window) noexcept {
  counts_.outside_session += window.outside_session;
  counts_.orphan_synchronizations += window.orphan_synchronizations;
  counts_.orphan_memory_records += window.orphan_memory_records;
  counts_.orphan_memory_pool_records += window.orphan_memory_pool_records;
  counts_.graph_ops += window.graph_ops;
  counts_.captured_graph_ops += window.captured_graph_ops;
  counts_.late_records += window.late_records;
}

std::vector<warning> collection_warnings(const decode_counts& counts,
                                         const std::map<std::uint32_t, overhead_total>& overheads,
                                         const collection_stats& stats) {
  std::vector<warning> warnings;
  const auto dropped = [&warnings](std::string message) {
    warnings.push_back({warning_code::dropped_device_records, warning_source::cupti, std::move(message)});
  };

  if (stats.dropped_records > 0 || stats.refused_requests > 0) {
    const std::uint64_t pool = static_cast<std::uint64_t>(stats.buffer_bytes) * stats.buffer_count;
    const double record_size = counts.records > 0
                                   ? static_cast<double>(counts.record_bytes) / static_cast<double>(counts.records)
                                   : static_cast<double>(sizeof(kernel_record));
    // Every record seen or dropped, 25 % headroom for partly filled buffers, whole buffers, one more
    // buffer than there was.
    const auto wanted = static_cast<std::uint64_t>(
        static_cast<double>(counts.records + stats.dropped_records) * record_size * 1.25);
    const std::uint64_t unit = stats.buffer_bytes > 0 ? stats.buffer_bytes : 1;
    const std::uint64_t suggested = std::max((wanted + unit - 1) / unit, stats.buffer_count + std::uint64_t{1}) * unit;
    std::string message;
    if (stats.dropped_records > 0) {
      message = "CUPTI dropped " + std::to_string(stats.dropped_records) +
                " device activity records for lack of buffer space: ";
    } else {
      message = "CUPTI found no free activity buffer " + std::to_string(stats.refused_requests) +
                " times (it may drop records without counting them): ";
    }
    message += "the pool of " + std::to_string(stats.buffer_count) + " buffers of " + format_bytes(stats.buffer_bytes) +
               " (" + format_bytes(pool) + ", device_options::max_buffer_bytes) was exhausted";
    if (stats.refused_requests > 0) message += " (" + std::to_string(stats.refused_requests) + " requests refused)";
    message += "; " + format_bytes(suggested) +
               " would have sufficed: raise max_buffer_bytes (regionprof run: REGIONPROF_DEVICE_BUFFER_MB)";
    dropped(std::move(message));
  }
  if (!stats.flush_error.empty()) {
    dropped("the forced flush at the end of the session failed (" + stats.flush_error +
            "); records still in CUPTI's buffers are missing");
  }
  if (stats.outstanding_buffers > 0) {
    dropped("CUPTI did not return " + std::to_string(stats.outstanding_buffers) +
            " activity buffers after the forced flush; their records are missing");
  }
  if (stats.spilled_buffers > 0) {
    dropped("the activity buffer pool was exhausted and this CUPTI (activity API before v27) must not be refused "
            "a buffer: " + std::to_string(stats.spilled_records) + " records written to " +
            std::to_string(stats.spilled_buffers) +
            " spill buffers were discarded; raise max_buffer_bytes (regionprof run: REGIONPROF_DEVICE_BUFFER_MB)");
  }
  if (stats.lost_graph_nodes > 0) {
    dropped(std::to_string(stats.lost_graph_nodes) +
            " CUDA graph node creations could not be kept (out of memory); their replays are attributed by launch");
  }
  if (counts.cut_buffers > 0) {
    dropped(std::to_string(counts.cut_buffers) + " activity buffers ended in a truncated or invalid record; " +
            std::to_string(counts.unread_bytes) + " bytes were not decoded");
  }
  for (const std::string& error : counts.walk_errors) {
    dropped("reading an activity buffer failed (" + error + "); the rest of that buffer was skipped");
  }
  if (!counts.skipped_kinds.empty()) {
    std::uint64_t total = 0;
    std::string kinds;
    for (const auto& [kind, count] : counts.skipped_kinds) {
      total += count;
      kinds += (kinds.empty() ? "" : ", ") + activity_kind_name(kind) + ": " + std::to_string(count);
    }
    dropped(std::to_string(total) + " activity records of kinds regionprof does not decode were skipped (" + kinds +
            ")");
  }
  if (counts.orphan_synchronizations > 0) {
    dropped(std::to_string(counts.orphan_synchronizations) +
            " synchronization records whose API call was not recorded were skipped");
  }
  if (counts.orphan_memory_records > 0) {
    dropped(std::to_string(counts.orphan_memory_records) +
            " memory allocation and free records whose API call was not recorded were skipped");
  }
  if (counts.orphan_memory_pool_records > 0) {
    dropped(std::to_string(counts.orphan_memory_pool_records) +
            " memory pool records whose API call was not recorded were skipped");
  }
  if (counts.late_records > 0) {
    warnings.push_back({warning_code::late_device_records, warning_source::cupti,
                        std::to_string(counts.late_records) +
                            " device activity records (API calls and the kernels, copies, memsets and "
                            "synchronizations they launched) reached regionprof after the window of their launch "
                            "had been written, and are in no window's profile; use longer windows (more runs in "
                            "each)"});
  }

  if (counts.untimed > 0 || counts.outside_session > 0) {
    std::string message;
    if (counts.untimed > 0) {
      message = std::to_string(counts.untimed) +
                " device activity records had a zero or inverted timestamp (CUPTI's device-side buffer was full, or "
                "the work had not finished at the forced flush)";
    }
    if (counts.outside_session > 0) {
      message += (message.empty() ? "" : "; ") + std::to_string(counts.outside_session) +
                 " activity records were timed outside the session (before its start or after its stop by more than "
                 "10 ms: a record of another session, or one stamped on another clock)";
    }
    warnings.push_back({warning_code::clock_anomaly, warning_source::cupti,
                        message + "; they were skipped, so no device time is negative or huge"});
  }

  if (!overheads.empty()) {
    std::uint64_t records = 0;
    std::uint64_t ns = 0;
    std::string parts;
    for (const auto& [kind, total] : overheads) {
      records += total.count;
      ns += total.ns;
      parts += (parts.empty() ? "" : "; ") + overhead_name(kind) + ": " + std::to_string(total.count) + ", " +
               format_ms(total.ns);
    }
    warnings.push_back({warning_code::cupti_overhead, warning_source::cupti,
                        "CUPTI's own overhead: " + std::to_string(records) + " records, " + format_ms(ns) +
                            " in total (" + parts + "); the CPU times above include it"});
  }
  return warnings;
}

}  // namespace regionprof::collect
