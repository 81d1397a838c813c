// Slots, per-thread open stacks and eager bindings (see region_stack.hpp). No torch header here.
#include "regionprof/torch/region_stack.hpp"

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "regionprof/torch/torch.hpp"

namespace regionprof::torch::detail {
namespace {

// Slots live in chunks published once and never freed: readers (the hot path) index them without a
// lock; intern_slot() appends under `slots_mutex`.
constexpr std::size_t chunk_bits = 10;
constexpr std::size_t chunk_size = std::size_t{1} << chunk_bits;
constexpr std::size_t max_chunks = 256;

struct slot_chunk {
  std::array<const registered_region*, chunk_size> regions{};
};

std::mutex slots_mutex;
std::array<std::atomic<slot_chunk*>, max_chunks> slot_chunks{};
std::size_t slot_count = 0;  // guarded by slots_mutex

std::unordered_map<std::string, slot_id>& slot_index() {  // guarded by slots_mutex
  static auto* index = new std::unordered_map<std::string, slot_id>;  // never destroyed
  return *index;
}

struct open_entry {
  slot_id slot;
  bool pushed;  // this entry opened the NVTX range (outermost of its slot on this thread)
};

struct thread_state {
  std::vector<open_entry> stack;
  std::vector<std::uint32_t> depth;  // entries per slot on this thread

  thread_state() { stack.reserve(64); }

  void close(const open_entry& entry) noexcept {
    --depth[entry.slot];
    if (entry.pushed) pop_region();
  }
};

thread_local thread_state this_thread;
std::atomic<std::uint64_t> unmatched{0};
std::atomic<outermost_listener> listener{nullptr};

void tell_outermost(std::int64_t slot) noexcept {
  if (const outermost_listener tell = listener.load(std::memory_order_acquire)) tell(slot);
}

std::mutex backward_mutex;
std::unordered_map<slot_id, const registered_region*>& backward_regions() {  // guarded by backward_mutex
  static auto* map = new std::unordered_map<slot_id, const registered_region*>;  // never destroyed
  return *map;
}

// Eager bindings: the map changes under `bindings_mutex` and bumps `bindings_generation`; each thread
// caches lookups (hits and misses) until the generation changes.
std::mutex bindings_mutex;
std::unordered_map<const void*, slot_id>& bindings() {  // guarded by bindings_mutex
  static auto* map = new std::unordered_map<const void*, slot_id>;  // never destroyed
  return *map;
}
std::atomic<std::uint64_t> bindings_generation{1};

struct binding_cache {
  std::uint64_t generation = 0;
  std::unordered_map<const void*, std::int64_t> slots;
};
thread_local binding_cache this_thread_bindings;

}  // namespace

slot_id intern_slot(region_kind kind, std::string_view name) {
  std::string key{to_string(kind)};
  key.append(":").append(name);
  std::lock_guard lock(slots_mutex);
  auto& index = slot_index();
  if (const auto found = index.find(key); found != index.end()) return found->second;
  if (slot_count == chunk_size * max_chunks) {
    throw std::length_error("regionprof::torch: more than " + std::to_string(chunk_size * max_chunks) +
                            " distinct module regions in one process");
  }
  const auto slot = static_cast<slot_id>(slot_count);
  auto& chunk_pointer = slot_chunks[slot >> chunk_bits];
  slot_chunk* chunk = chunk_pointer.load(std::memory_order_relaxed);
  if (chunk == nullptr) {
    chunk = new slot_chunk;  // never freed: slots outlive every instrumentation
    chunk_pointer.store(chunk, std::memory_order_release);
  }
  chunk->regions[slot & (chunk_size - 1)] = new registered_region(kind, name);  // never freed
  index.emplace(std::move(key), slot);
  ++slot_count;
  return slot;
}

const registered_region& slot_region(slot_id slot) noexcept {
  const slot_chunk* chunk = slot_chunks[slot >> chunk_bits].load(std::memory_order_acquire);
  return *chunk->regions[slot & (chunk_size - 1)];
}

const registered_region& backward_region(slot_id slot) {
  std::lock_guard lock(backward_mutex);
  const registered_region*& region = backward_regions()[slot];
  if (region == nullptr) {
    const std::string& forward = slot_region(slot).range_name();  // `<kind>:<name>`, the kind without ':'
    const std::size_t colon = forward.find(':');
    region = new registered_region(forward.substr(0, colon) + "_backward", forward.substr(colon + 1));  // never freed
  }
  return *region;
}

void set_outermost_listener(outermost_listener tell) noexcept { listener.store(tell, std::memory_order_release); }

void enter(slot_id slot) noexcept {
  thread_state& state = this_thread;
  try {
    if (slot >= state.depth.size()) state.depth.resize(slot + 1, 0);
    const bool push = state.depth[slot] == 0;
    state.stack.push_back({slot, push});
    ++state.depth[slot];
    if (push) push_region(slot_region(slot));
    if (state.stack.size() == 1) tell_outermost(slot);
  } catch (...) {
    // Out of memory growing this thread's stack: the region is not opened, and its exit will be
    // counted as unmatched.
  }
}

void exit(slot_id slot) noexcept {
  thread_state& state = this_thread;
  if (slot >= state.depth.size() || state.depth[slot] == 0) {
    unmatched.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  while (!state.stack.empty()) {
    const open_entry entry = state.stack.back();
    state.stack.pop_back();
    state.close(entry);
    if (state.stack.empty()) tell_outermost(no_slot);
    if (entry.slot == slot) return;
  }
}

std::size_t open_depth() noexcept { return this_thread.stack.size(); }

void unwind_to(std::size_t depth) noexcept {
  thread_state& state = this_thread;
  while (state.stack.size() > depth) {
    const open_entry entry = state.stack.back();
    state.stack.pop_back();
    state.close(entry);
    if (state.stack.empty()) tell_outermost(no_slot);
  }
}

std::uint64_t unmatched_exits() noexcept { return unmatched.load(std::memory_order_relaxed); }

void bind_module(const void* module, slot_id slot) {
  std::lock_guard lock(bindings_mutex);
  bindings()[module] = slot;
  bindings_generation.fetch_add(1, std::memory_order_release);
}

void unbind_module(const void* module) noexcept {
  try {
    std::lock_guard lock(bindings_mutex);
    bindings().erase(module);
    bindings_generation.fetch_add(1, std::memory_order_release);
  } catch (...) {
    // std::mutex::lock failed: nothing else can be done in a destructor path.
  }
}

std::int64_t bound_slot(const void* module) noexcept {
  binding_cache& cache = this_thread_bindings;
  const std::uint64_t generation = bindings_generation.load(std::memory_order_acquire);
  try {
    if (cache.generation != generation) {
      cache.slots.clear();
      cache.generation = generation;
    }
    if (const auto found = cache.slots.find(module); found != cache.slots.end()) return found->second;
    std::int64_t slot = no_slot;
    {
      std::lock_guard lock(bindings_mutex);
      const auto& map = bindings();
      if (const auto found = map.find(module); found != map.end()) slot = found->second;
    }
    cache.slots.emplace(module, slot);
    return slot;
  } catch (...) {
    return no_slot;
  }
}

}  // namespace regionprof::torch::detail

namespace regionprof::torch {

module_scope::module_scope(const ::torch::nn::Module& module) noexcept
    : slot_(detail::bound_slot(&module)) {
  if (slot_ != detail::no_slot) detail::enter(static_cast<detail::slot_id>(slot_));
}

module_scope::~module_scope() {
  if (slot_ != detail::no_slot) detail::exit(static_cast<detail::slot_id>(slot_));
}

}  // namespace regionprof::torch
