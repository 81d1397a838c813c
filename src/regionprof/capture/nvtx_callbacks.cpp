// The NVTX v3 tool: callbacks for the CORE and CORE2 modules, and the export-table attach; the entry
// points beside NVTX (push_default_range, pop_default_range, record_memory_event) share its hot path.
//
// NVTX_NO_IMPL: this file implements a tool, not an NVTX instance (the program's own NVTX headers do).
// Handles given to NVTX encode our ids: a domain handle is its domain id (nullptr: the default domain),
// a registered string handle is its string id. Never throws into NVTX: every callback is noexcept.
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include <cstdint>
#include <cstring>
#include <cwchar>
#include <string>
#include <string_view>

#include "regionprof/capture/capture.hpp"
#include "regionprof/capture/capture_state.hpp"
#include "regionprof/trace/torch_op_names.hpp"

namespace regionprof::capture_detail {
namespace {

std::uint16_t domain_id(nvtxDomainHandle_t domain) noexcept {
  return static_cast<std::uint16_t>(reinterpret_cast<std::uintptr_t>(domain));
}

/// UTF-32 (Linux wchar_t) to UTF-8; invalid code points become U+FFFD. Writes at most `capacity` bytes
/// and returns the length the whole conversion needs.
std::size_t to_utf8(const wchar_t* text, char* out, std::size_t capacity) noexcept {
  std::size_t length = 0;
  auto put = [&](unsigned char byte) {
    if (length < capacity) out[length] = static_cast<char>(byte);
    ++length;
  };
  for (; *text != L'\0'; ++text) {
    auto cp = static_cast<std::uint32_t>(*text);
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = 0xFFFD;
    if (cp < 0x80) {
      put(static_cast<unsigned char>(cp));
    } else if (cp < 0x800) {
      put(static_cast<unsigned char>(0xC0 | (cp >> 6)));
      put(static_cast<unsigned char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      put(static_cast<unsigned char>(0xE0 | (cp >> 12)));
      put(static_cast<unsigned char>(0x80 | ((cp >> 6) & 0x3F)));
      put(static_cast<unsigned char>(0x80 | (cp & 0x3F)));
    } else {
      put(static_cast<unsigned char>(0xF0 | (cp >> 18)));
      put(static_cast<unsigned char>(0x80 | ((cp >> 12) & 0x3F)));
      put(static_cast<unsigned char>(0x80 | ((cp >> 6) & 0x3F)));
      put(static_cast<unsigned char>(0x80 | (cp & 0x3F)));
    }
  }
  return length;
}

/// The id of a wide name: converted on the stack (heap only past 512 bytes), then interned by content.
std::uint32_t wide_name_id(thread_buffer* b, const wchar_t* text) noexcept {
  if (text == nullptr) return 0;
  char small[512];
  const std::size_t length = to_utf8(text, small, sizeof(small));
  if (length <= sizeof(small)) return intern_cached(b, small, length);
  try {
    std::string large(length, '\0');
    to_utf8(text, large.data(), large.size());
    return intern_cached(b, large.data(), large.size());
  } catch (...) {
    return 0;
  }
}

std::uint32_t ascii_name_id(thread_buffer* b, const char* text) noexcept {
  return text != nullptr ? intern_cached(b, text, std::strlen(text)) : 0;
}

/// A default-domain ASCII name (nvtxRangePushA, torch's op ranges) without torch's per-call suffix
/// (trace/torch_op_names.hpp): one name per op, found in the thread's cache, instead of a new string
/// per call interned under the registry's lock and kept until the session stops.
std::uint32_t default_ascii_name_id(thread_buffer* b, const char* text) noexcept {
  if (text == nullptr) return 0;
  const std::string_view name = torch_op_name(text);
  return intern_cached(b, name.data(), name.size());
}

[[gnu::noinline]] std::uint32_t unregistered_name_id(thread_buffer* b, const nvtxEventAttributes_t* attributes) noexcept {
  if (attributes == nullptr) return 0;
  switch (attributes->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII: return ascii_name_id(b, attributes->message.ascii);
    case NVTX_MESSAGE_TYPE_UNICODE: return wide_name_id(b, attributes->message.unicode);
    default: return 0;  // no message (NVTX_MESSAGE_UNKNOWN) or a payload type we do not read
  }
}

/// Registered names (the hot case) cost one compare: the handle is the id.
[[gnu::always_inline]] inline std::uint32_t attribute_name_id(thread_buffer* b,
                                                              const nvtxEventAttributes_t* attributes) noexcept {
  if (attributes != nullptr && attributes->messageType == NVTX_MESSAGE_TYPE_REGISTERED) [[likely]] {
    return static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(attributes->message.registered));
  }
  return unregistered_name_id(b, attributes);
}

// ---- push / pop -------------------------------------------------------------------------------------
// Each callback is the relaxed load of active_epoch and, when recording, a tail call into the recording
// path (kept out of line so the not-recording path sets up no stack frame). The push's timestamp is read
// after its name is resolved and the pop's first, so the tool's own work falls outside the range.

template <class Name>
[[gnu::noinline]] int push_recording(std::uint32_t epoch, std::uint16_t domain, Name name_of) noexcept {
  thread_buffer* b = prepare(epoch);
  if (b == nullptr) return NVTX_NO_PUSH_POP_TRACKING;
  const std::uint32_t name = name_of(b);
  append(b, read_ticks(), record_kind::push, domain, name);
  return NVTX_NO_PUSH_POP_TRACKING;
}

template <class Name>
[[gnu::always_inline]] inline int push(std::uint16_t domain, Name name_of) noexcept {
  const std::uint32_t epoch = load_active_epoch();
  if (epoch == 0) return NVTX_NO_PUSH_POP_TRACKING;
  return push_recording(epoch, domain, name_of);
}

[[gnu::noinline]] int pop_recording(std::uint32_t epoch, std::uint16_t domain) noexcept {
  const std::uint64_t ticks = read_ticks();
  thread_buffer* b = prepare(epoch);
  if (b != nullptr) append(b, ticks, record_kind::pop, domain, 0);
  return NVTX_NO_PUSH_POP_TRACKING;
}

[[gnu::always_inline]] inline int pop(std::uint16_t domain) noexcept {
  const std::uint32_t epoch = load_active_epoch();
  if (epoch == 0) return NVTX_NO_PUSH_POP_TRACKING;
  return pop_recording(epoch, domain);
}

int NVTX_API domain_push_ex(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attributes) {
  return push(domain_id(domain), [attributes](thread_buffer* b) { return attribute_name_id(b, attributes); });
}
int NVTX_API domain_pop(nvtxDomainHandle_t domain) { return pop(domain_id(domain)); }
int NVTX_API push_ex(const nvtxEventAttributes_t* attributes) { return domain_push_ex(nullptr, attributes); }
int NVTX_API push_a(const char* message) {
  return push(0, [message](thread_buffer* b) { return default_ascii_name_id(b, message); });
}
int NVTX_API push_w(const wchar_t* message) {
  return push(0, [message](thread_buffer* b) { return wide_name_id(b, message); });
}
int NVTX_API pop_default() { return pop(0); }

// ---- start / end (may end on another thread) ---------------------------------------------------------

template <class Name>
nvtxRangeId_t start(std::uint16_t domain, Name name_of) noexcept {
  const std::uint32_t epoch = load_active_epoch();
  if (epoch == 0) return range_id_not_recorded;
  thread_buffer* b = prepare(epoch);
  if (b == nullptr) return range_id_dropped;
  const std::uint32_t name = name_of(b);
  const std::uint32_t index = append(b, read_ticks(), record_kind::start, domain, name);
  if (index == dropped_index) return range_id_dropped;
  return range_id(b->current->serial, index);
}

void end(nvtxRangeId_t id) noexcept {
  const std::uint32_t epoch = load_active_epoch();
  if (epoch == 0) return;
  const std::uint64_t ticks = read_ticks();
  thread_buffer* b = prepare(epoch);
  if (b == nullptr) return;
  // An id is 48 bits (range_id); higher bits, from an id that is not ours, are cut off.
  append(b, ticks, record_kind::end, static_cast<std::uint16_t>(id >> 32), static_cast<std::uint32_t>(id));
}

nvtxRangeId_t NVTX_API domain_start_ex(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attributes) {
  return start(domain_id(domain), [attributes](thread_buffer* b) { return attribute_name_id(b, attributes); });
}
void NVTX_API domain_end(nvtxDomainHandle_t, nvtxRangeId_t id) { end(id); }
nvtxRangeId_t NVTX_API start_ex(const nvtxEventAttributes_t* attributes) {
  return domain_start_ex(nullptr, attributes);
}
nvtxRangeId_t NVTX_API start_a(const char* message) {
  return start(0, [message](thread_buffer* b) { return default_ascii_name_id(b, message); });
}
nvtxRangeId_t NVTX_API start_w(const wchar_t* message) {
  return start(0, [message](thread_buffer* b) { return wide_name_id(b, message); });
}
void NVTX_API end_default(nvtxRangeId_t id) { end(id); }

// ---- marks (kept beside the trace, see capture_result::marks) ----------------------------------------

/// A mark's payload as a count of work (rule 18): a non-negative integer or finite floating value
/// (rounded to nearest, saturating at 2^64 - 1); false for no payload or a negative or NaN one.
bool work_payload(const nvtxEventAttributes_t* attributes, std::uint64_t& value) noexcept {
  if (attributes == nullptr) return false;
  auto from_double = [&value](double d) {
    if (!(d >= 0.0)) return false;  // negative or NaN
    value = d >= 18446744073709551615.0 ? ~std::uint64_t{0} : static_cast<std::uint64_t>(d + 0.5);
    return true;
  };
  switch (attributes->payloadType) {
    case NVTX_PAYLOAD_TYPE_UNSIGNED_INT64: value = attributes->payload.ullValue; return true;
    case NVTX_PAYLOAD_TYPE_INT64:
      if (attributes->payload.llValue < 0) return false;
      value = static_cast<std::uint64_t>(attributes->payload.llValue);
      return true;
    case NVTX_PAYLOAD_TYPE_UNSIGNED_INT32: value = attributes->payload.uiValue; return true;
    case NVTX_PAYLOAD_TYPE_INT32:
      if (attributes->payload.iValue < 0) return false;
      value = static_cast<std::uint64_t>(attributes->payload.iValue);
      return true;
    case NVTX_PAYLOAD_TYPE_DOUBLE: return from_double(attributes->payload.dValue);
    case NVTX_PAYLOAD_TYPE_FLOAT: return from_double(attributes->payload.fValue);
    default: return false;
  }
}

/// A mark named `regionprof.work.<quantity>` with a work payload becomes a work record (rule 18, no
/// clock read); any other mark keeps its time.
template <class Name>
void mark(std::uint16_t domain, Name name_of, const nvtxEventAttributes_t* attributes = nullptr) noexcept {
  const std::uint32_t epoch = load_active_epoch();
  if (epoch == 0) return;
  thread_buffer* b = prepare(epoch);
  if (b == nullptr) return;
  const std::uint32_t name = name_of(b);
  const std::uint32_t first_work = state().first_work_name;
  if (name - first_work < work_quantity_count && first_work != 0) [[unlikely]] {
    std::uint64_t value = 0;
    if (work_payload(attributes, value)) {
      append_work(b, static_cast<work_quantity>(name - first_work), domain, value);
      return;
    }
  }
  append(b, read_ticks(), record_kind::mark, domain, name);
}

void NVTX_API domain_mark_ex(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attributes) {
  mark(domain_id(domain), [attributes](thread_buffer* b) { return attribute_name_id(b, attributes); }, attributes);
}
void NVTX_API mark_ex(const nvtxEventAttributes_t* attributes) { domain_mark_ex(nullptr, attributes); }
void NVTX_API mark_a(const char* message) {
  mark(0, [message](thread_buffer* b) { return ascii_name_id(b, message); });
}
void NVTX_API mark_w(const wchar_t* message) {
  mark(0, [message](thread_buffer* b) { return wide_name_id(b, message); });
}

// ---- memory events (record_memory_event, not an NVTX call) ------------------------------------------------
// As a push: the relaxed load, then out of line the recording path, which reads the clock last.

[[gnu::noinline]] int memory_recording(std::uint32_t epoch, const memory_payload& event) noexcept {
  thread_buffer* b = prepare<memory_event_records>(epoch);
  if (b == nullptr) return 0;
  return append_memory(b, read_ticks(), event) ? 1 : 0;
}

// ---- domains, registered strings, thread names ---------------------------------------------------------

std::string wide_to_string(const wchar_t* text) {
  if (text == nullptr) return {};
  std::string out(to_utf8(text, nullptr, 0), '\0');
  to_utf8(text, out.data(), out.size());
  return out;
}

nvtxDomainHandle_t domain_from(std::string_view name) noexcept {
  try {
    return reinterpret_cast<nvtxDomainHandle_t>(static_cast<std::uintptr_t>(state().domains.create(name)));
  } catch (...) {
    return nullptr;  // out of memory: the default domain
  }
}
nvtxDomainHandle_t NVTX_API domain_create_a(const char* name) { return domain_from(name != nullptr ? name : ""); }
nvtxDomainHandle_t NVTX_API domain_create_w(const wchar_t* name) {
  try {
    return domain_from(wide_to_string(name));
  } catch (...) {
    return nullptr;
  }
}
void NVTX_API domain_destroy(nvtxDomainHandle_t) {}  // ids live for the process: ranges may outlive it

nvtxStringHandle_t string_from(std::string_view text) noexcept {
  try {
    return reinterpret_cast<nvtxStringHandle_t>(static_cast<std::uintptr_t>(state().strings.intern(text).first));
  } catch (...) {
    return nullptr;  // out of memory: the empty name
  }
}
nvtxStringHandle_t NVTX_API register_string_a(nvtxDomainHandle_t, const char* text) {
  return string_from(text != nullptr ? text : "");
}
nvtxStringHandle_t NVTX_API register_string_w(nvtxDomainHandle_t, const wchar_t* text) {
  try {
    return string_from(wide_to_string(text));
  } catch (...) {
    return nullptr;
  }
}

void name_thread(std::uint32_t tid, std::string name) noexcept {
  try {
    tool_state& s = state();
    std::lock_guard lock(s.registry.mutex);
    s.registry.nvtx_names[tid] = std::move(name);
  } catch (...) {
  }
}
void NVTX_API name_os_thread_a(std::uint32_t tid, const char* name) { name_thread(tid, name != nullptr ? name : ""); }
void NVTX_API name_os_thread_w(std::uint32_t tid, const wchar_t* name) {
  try {
    name_thread(tid, wide_to_string(name));
  } catch (...) {
  }
}

void NVTX_API name_category_a(std::uint32_t, const char*) {}
void NVTX_API name_category_w(std::uint32_t, const wchar_t*) {}
void NVTX_API domain_name_category_a(nvtxDomainHandle_t, std::uint32_t, const char*) {}
void NVTX_API domain_name_category_w(nvtxDomainHandle_t, std::uint32_t, const wchar_t*) {}
nvtxResourceHandle_t NVTX_API domain_resource_create(nvtxDomainHandle_t, nvtxResourceAttributes_t*) {
  return nullptr;
}
void NVTX_API domain_resource_destroy(nvtxResourceHandle_t) {}
void NVTX_API initialize(const void*) {}

// ---- attach ----------------------------------------------------------------------------------------------

template <class F>
void install(NvtxFunctionTable table, unsigned size, unsigned id, F* function) noexcept {
  if (table != nullptr && id < size && table[id] != nullptr) {
    *table[id] = reinterpret_cast<NvtxFunctionPointer>(function);
  }
}

}  // namespace
}  // namespace regionprof::capture_detail

namespace regionprof {

int attach_nvtx_capture(const void* (*get_export_table)(std::uint32_t)) noexcept {
  using namespace capture_detail;
  if (get_export_table == nullptr) return 0;
  const auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
  if (callbacks == nullptr || callbacks->struct_size < sizeof(NvtxExportTableCallbacks) ||
      callbacks->GetModuleFunctionTable == nullptr) {
    return 0;
  }
  state();  // the tool's state exists before NVTX can call us

  NvtxFunctionTable core = nullptr;
  unsigned core_size = 0;
  if (callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &core, &core_size) == 0) return 0;
  install(core, core_size, NVTX_CBID_CORE_MarkEx, &mark_ex);
  install(core, core_size, NVTX_CBID_CORE_MarkA, &mark_a);
  install(core, core_size, NVTX_CBID_CORE_MarkW, &mark_w);
  install(core, core_size, NVTX_CBID_CORE_RangeStartEx, &start_ex);
  install(core, core_size, NVTX_CBID_CORE_RangeStartA, &start_a);
  install(core, core_size, NVTX_CBID_CORE_RangeStartW, &start_w);
  install(core, core_size, NVTX_CBID_CORE_RangeEnd, &end_default);
  install(core, core_size, NVTX_CBID_CORE_RangePushEx, &push_ex);
  install(core, core_size, NVTX_CBID_CORE_RangePushA, &push_a);
  install(core, core_size, NVTX_CBID_CORE_RangePushW, &push_w);
  install(core, core_size, NVTX_CBID_CORE_RangePop, &pop_default);
  install(core, core_size, NVTX_CBID_CORE_NameCategoryA, &name_category_a);
  install(core, core_size, NVTX_CBID_CORE_NameCategoryW, &name_category_w);
  install(core, core_size, NVTX_CBID_CORE_NameOsThreadA, &name_os_thread_a);
  install(core, core_size, NVTX_CBID_CORE_NameOsThreadW, &name_os_thread_w);

  NvtxFunctionTable core2 = nullptr;
  unsigned core2_size = 0;
  if (callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &core2, &core2_size) == 0) return 0;
  install(core2, core2_size, NVTX_CBID_CORE2_DomainMarkEx, &domain_mark_ex);
  install(core2, core2_size, NVTX_CBID_CORE2_DomainRangeStartEx, &domain_start_ex);
  install(core2, core2_size, NVTX_CBID_CORE2_DomainRangeEnd, &domain_end);
  install(core2, core2_size, NVTX_CBID_CORE2_DomainRangePushEx, &domain_push_ex);
  install(core2, core2_size, NVTX_CBID_CORE2_DomainRangePop, &domain_pop);
  install(core2, core2_size, NVTX_CBID_CORE2_DomainResourceCreate, &domain_resource_create);
  install(core2, core2_size, NVTX_CBID_CORE2_DomainResourceDestroy, &domain_resource_destroy);
  install(core2, core2_size, NVTX_CBID_CORE2_DomainNameCategoryA, &domain_name_category_a);
  install(core2, core2_size, NVTX_CBID_CORE2_DomainNameCategoryW, &domain_name_category_w);
  install(core2, core2_size, NVTX_CBID_CORE2_DomainRegisterStringA, &register_string_a);
  install(core2, core2_size, NVTX_CBID_CORE2_DomainRegisterStringW, &register_string_w);
  install(core2, core2_size, NVTX_CBID_CORE2_DomainCreateA, &domain_create_a);
  install(core2, core2_size, NVTX_CBID_CORE2_DomainCreateW, &domain_create_w);
  install(core2, core2_size, NVTX_CBID_CORE2_DomainDestroy, &domain_destroy);
  install(core2, core2_size, NVTX_CBID_CORE2_Initialize, &initialize);

  // The version-info table asks tools to state the NVTX version they were built against.
  if (const auto* version = static_cast<const NvtxExportTableVersionInfo*>(get_export_table(NVTX_ETID_VERSIONINFO));
      version != nullptr && version->struct_size >= sizeof(NvtxExportTableVersionInfo) &&
      version->SetInjectionNvtxVersion != nullptr) {
    version->SetInjectionNvtxVersion(NVTX_VERSION);
  }
  state().attached.store(true, std::memory_order_release);
  return 1;
}

int push_default_range(const char* name) noexcept { return capture_detail::push_a(name); }
int pop_default_range() noexcept { return capture_detail::pop_default(); }

int record_memory_event(std::int64_t bytes, std::int64_t total_allocated, memory_device device,
                        memory_event_kind kind) noexcept {
  const std::uint32_t epoch = capture_detail::load_active_epoch();
  if (epoch == 0) return 0;
  if (device < cpu_memory || device > max_memory_device || kind > memory_event_kind::out_of_memory ||
      !memory_event_fits(kind, bytes, total_allocated)) [[unlikely]] {
    return -1;
  }
  return capture_detail::memory_recording(epoch, {bytes, total_allocated, device, kind});
}

bool nvtx_capture_attached() noexcept { return capture_detail::state().attached.load(std::memory_order_acquire); }

}  // namespace regionprof
