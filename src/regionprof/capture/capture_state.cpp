// The capture's slow paths: thread registration and exit, chunk hand-over and the pool, the registries.
#include "regionprof/capture/capture_state.hpp"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <new>
#include <utility>

namespace regionprof::capture_detail {

std::atomic<std::uint32_t> active_epoch{0};
__thread thread_buffer* this_thread_buffer = nullptr;

namespace {

/// At most this much chunk memory is kept for reuse between sessions; the rest is freed.
constexpr std::size_t pool_cap_chunks = 512;  // 32 MiB

pthread_key_t exit_key;

void count_drop(dropped_event what) noexcept {
  (what == dropped_event::memory ? state().dropped_memory : state().dropped).fetch_add(1, std::memory_order_relaxed);
}

/// Takes one chunk's worth of the session's memory cap; false when that would exceed it.
bool charge_chunk() noexcept {
  tool_state& s = state();
  std::size_t taken = s.session_bytes.load(std::memory_order_relaxed);
  do {
    if (taken + chunk_bytes > s.session_cap.load(std::memory_order_relaxed)) return false;
  } while (!s.session_bytes.compare_exchange_weak(taken, taken + chunk_bytes, std::memory_order_relaxed));
  return true;
}

/// The next chunk serial: 64-bit, so it never wraps; serials whose range-id bits are 0 are skipped (see
/// range_id), so no range id is 0 or 1.
std::uint64_t next_chunk_serial() noexcept {
  std::uint64_t serial = state().next_chunk_serial.fetch_add(1, std::memory_order_relaxed);
  if ((serial & range_id_serial_mask) == 0) serial = state().next_chunk_serial.fetch_add(1, std::memory_order_relaxed);
  return serial;
}

/// Points `c` at session `epoch` for the calling thread, empty, with tick base `base`. The epoch is
/// published last: a collector that sees it also sees the rest of the header.
void start_chunk(thread_buffer* b, chunk* c, std::uint32_t epoch, std::uint64_t base) noexcept {
  c->next = nullptr;
  c->thread_serial = b->serial;
  c->serial = next_chunk_serial();
  c->base.store(base, std::memory_order_relaxed);
  c->used.store(0, std::memory_order_relaxed);
  c->epoch.store(epoch, std::memory_order_release);
  b->current = c;
  b->used = 0;
  b->base = base;
  b->current_published.store(c, std::memory_order_release);
}

chunk* take_chunk() noexcept {
  tool_state& s = state();
  {
    std::lock_guard lock(s.pool_mutex);
    if (!s.pool.empty()) {
      chunk* c = s.pool.back();
      s.pool.pop_back();
      return c;
    }
  }
  return new (std::nothrow) chunk;
}

/// From now until session `epoch` ends, the calling thread drops every event (memory cap); this one, a
/// `what`, is counted.
void drop_until_session_ends(thread_buffer* b, std::uint32_t epoch, dropped_event what) noexcept {
  b->used = records_per_chunk;  // prepare() takes the slow path from now on
  b->over_cap = true;
  b->over_cap_epoch.store(epoch, std::memory_order_relaxed);
  count_drop(what);
}

/// Hands the current chunk (if any) over and starts a fresh one with tick base `base`. False when the
/// memory cap (or memory) refuses it: the event, a `what`, is dropped and counted, and so is every later
/// one of this thread in this session.
bool replace_chunk(thread_buffer* b, std::uint32_t epoch, std::uint64_t base, dropped_event what) noexcept {
  if (b->current != nullptr) {
    // Handed over before it is unpublished: a collector finds it in one place or the other (see the
    // ownership rules in capture_state.hpp); the other order loses it to a collector that runs between.
    chunk* full = b->current;
    hand_over(full);
    b->current = nullptr;
    b->current_published.store(nullptr, std::memory_order_release);
  }
  chunk* fresh = nullptr;
  if (charge_chunk()) {
    fresh = take_chunk();
    if (fresh == nullptr) state().session_bytes.fetch_sub(chunk_bytes, std::memory_order_relaxed);
  }
  if (fresh == nullptr) {  // over the cap (or out of memory): drop until the session ends
    drop_until_session_ends(b, epoch, what);
    return false;
  }
  start_chunk(b, fresh, epoch, base);
  return true;
}

std::string os_thread_name(pthread_t thread) {
  char name[64] = {};
  if (pthread_getname_np(thread, name, sizeof(name)) != 0) return {};
  return name;
}

/// Thread exit (pthread key destructor): the thread's chunk goes to the collector; nothing is lost.
void on_thread_exit(void* value) noexcept {
  auto* b = static_cast<thread_buffer*>(value);
  tool_state& s = state();
  {
    std::lock_guard lock(s.registry.mutex);
    for (thread_info& info : s.registry.threads) {
      if (info.serial != b->serial) continue;
      info.name = os_thread_name(pthread_self());
      info.over_cap_epoch = b->over_cap_epoch.load(std::memory_order_relaxed);
      info.buffer = nullptr;
      break;
    }
    // Pushed under the registry lock: a collector that sees this thread exited also drains this chunk.
    if (b->current != nullptr) hand_over(b->current);
  }
  if (this_thread_buffer == b) this_thread_buffer = nullptr;
  delete b;
}

thread_buffer* register_this_thread() noexcept {
  auto* b = new (std::nothrow) thread_buffer;
  if (b == nullptr) return nullptr;
  b->tid = static_cast<std::int64_t>(::syscall(SYS_gettid));
  tool_state& s = state();
  try {
    std::lock_guard lock(s.registry.mutex);
    b->serial = s.registry.next_serial++;
    s.registry.threads.push_back({b->serial, b->tid, os_thread_name(pthread_self()), pthread_self(), 0, b});
  } catch (...) {
    delete b;
    return nullptr;
  }
  this_thread_buffer = b;
  pthread_setspecific(exit_key, b);
  return b;
}

tool_state* fork_state = nullptr;  // set once, before the atfork handlers can run

/// Every mutex of the tool, taken in lock order (registry, pool, then the leaves) before fork() and
/// released after it in both processes: no mutex is inherited held by a thread the child lacks.
void before_fork() noexcept {
  fork_state->registry.mutex.lock();
  fork_state->pool_mutex.lock();
  fork_state->strings.fork_mutex().lock();
  fork_state->domains.fork_mutex().lock();
}

void after_fork() noexcept {
  fork_state->domains.fork_mutex().unlock();
  fork_state->strings.fork_mutex().unlock();
  fork_state->pool_mutex.unlock();
  fork_state->registry.mutex.unlock();
}

/// In the child, only the forking thread exists: every other thread is recorded as exited (its thread
/// descriptor, which a live thread's name is read through, may be unmapped in the child). Its current
/// chunk, whose published records are as valid as a paused thread's, is handed over unless it already is
/// (it was between the two steps of replace_chunk). Runs with every lock held and no other thread.
void after_fork_in_child() noexcept {
  tool_state& s = *fork_state;
  for (thread_info& info : s.registry.threads) {
    if (info.buffer == nullptr || info.buffer == this_thread_buffer) continue;
    thread_buffer* ghost = info.buffer;
    if (chunk* c = ghost->current_published.load(std::memory_order_acquire); c != nullptr) {
      bool handed_over = false;
      for (chunk* h = s.handover.load(std::memory_order_acquire); h != nullptr && !handed_over; h = h->next) {
        handed_over = h == c;
      }
      if (!handed_over) hand_over(c);
    }
    info.over_cap_epoch = ghost->over_cap_epoch.load(std::memory_order_relaxed);
    info.buffer = nullptr;
    delete ghost;
  }
  after_fork();
}

}  // namespace

tool_state& state() noexcept {
  // Never destroyed: NVTX calls from static destructors and late-exiting threads stay safe.
  static tool_state* const instance = [] {
    pthread_key_create(&exit_key, [](void* value) { on_thread_exit(value); });
    fork_state = new tool_state;
    try {
      for (std::size_t q = 0; q < work_quantity_count; ++q) {
        const std::uint32_t id = fork_state->strings.intern(work_mark_names[q]).first;
        if (q == 0) fork_state->first_work_name = id;
      }
    } catch (...) {
      fork_state->first_work_name = 0;  // out of memory: no work marks are recognised
    }
    pthread_atfork(before_fork, after_fork, after_fork_in_child);
    return fork_state;
  }();
  return *instance;
}

thread_buffer* prepare_slow(std::uint32_t epoch, dropped_event what) noexcept {
  thread_buffer* b = this_thread_buffer;
  if (b == nullptr) {
    b = register_this_thread();
    if (b == nullptr) {
      count_drop(what);
      return nullptr;
    }
  }
  if (b->epoch != epoch) {
    // This thread's first record in session `epoch`. Its current chunk, if any, holds an earlier
    // session's records, which that session's stop() has already copied: reuse it.
    if (active_epoch.load(std::memory_order_acquire) != epoch) return nullptr;  // raced with stop()
    b->epoch = epoch;
    b->over_cap = false;
    if (b->current != nullptr) {
      if (charge_chunk()) {
        start_chunk(b, b->current, epoch, base_for(read_ticks()));
        return b;
      }
      drop_until_session_ends(b, epoch, what);  // keeps the chunk for a later session
      return nullptr;
    }
    b->used = records_per_chunk;  // no chunk yet: take one below
  }
  if (b->over_cap) {
    count_drop(what);
    return nullptr;
  }
  // The current chunk has no room for the event (or there is none): hand it over, take a fresh one.
  return replace_chunk(b, epoch, base_for(read_ticks()), what) ? b : nullptr;
}

bool rebase(thread_buffer* b, std::uint64_t ticks, dropped_event what) noexcept {
  const std::uint64_t base = base_for(ticks);
  if (b->used == 0) {
    // Nothing published against the old base (a collector reading this chunk now copies no record):
    // rebase in place; the release of `used` that publishes the next record publishes the new base.
    b->base = base;
    b->current->base.store(base, std::memory_order_relaxed);
    return true;
  }
  return replace_chunk(b, b->epoch, base, what);
}

std::uint32_t append_rebased(thread_buffer* b, std::uint64_t ticks, record_kind kind, std::uint16_t domain,
                             std::uint32_t name) noexcept {
  if (!rebase(b, ticks, dropped_event::nvtx)) return dropped_index;
  const std::uint64_t base = b->base;
  const std::uint32_t index = b->used;
  b->current->records[index] = make_record(ticks - base, kind, domain, name);
  b->used = index + 1;
  b->current->used.store(index + 1, std::memory_order_release);
  return index;
}

void hand_over(chunk* c) noexcept {
  tool_state& s = state();
  chunk* head = s.handover.load(std::memory_order_relaxed);
  do {
    c->next = head;
  } while (!s.handover.compare_exchange_weak(head, c, std::memory_order_release, std::memory_order_relaxed));
}

std::size_t release_chunks(const std::vector<chunk*>& chunks, std::vector<std::uint64_t>* pushed_back) noexcept {
  if (chunks.empty()) return 0;
  tool_state& s = state();
  std::lock_guard registry_lock(s.registry.mutex);
  std::vector<const chunk*> published;
  const auto keep = [pushed_back](chunk* c) noexcept {
    const std::uint64_t serial = c->serial;
    hand_over(c);
    if (pushed_back == nullptr) return;
    try {
      pushed_back->push_back(serial);
    } catch (...) {
    }
  };
  try {
    published.reserve(s.registry.threads.size());
  } catch (...) {
    for (chunk* c : chunks) keep(c);  // kept for a later collection rather than risk a dangling pointer
    return 0;
  }
  for (const thread_info& info : s.registry.threads) {
    if (info.buffer != nullptr) published.push_back(info.buffer->current_published.load(std::memory_order_acquire));
  }
  std::sort(published.begin(), published.end());
  std::lock_guard lock(s.pool_mutex);
  std::size_t released = 0;
  for (chunk* c : chunks) {
    if (std::binary_search(published.begin(), published.end(), c)) {
      keep(c);  // its owner has handed it over but not yet unpublished it
      continue;
    }
    ++released;
    if (s.pool.size() < pool_cap_chunks) {
      try {
        s.pool.push_back(c);
        continue;
      } catch (...) {
      }
    }
    delete c;
  }
  return released;
}

namespace {

std::uint64_t hash_bytes(const char* text, std::size_t length) noexcept {
  std::uint64_t h = 0x9E3779B97F4A7C15ull ^ length;
  while (length >= 8) {
    std::uint64_t word = 0;
    std::memcpy(&word, text, 8);
    h = (h ^ word) * 0xFF51AFD7ED558CCDull;
    h ^= h >> 32;
    text += 8;
    length -= 8;
  }
  if (length > 0) {
    std::uint64_t word = 0;
    std::memcpy(&word, text, length);
    h = (h ^ word) * 0xC4CEB9FE1A85EC53ull;
  }
  return h ^ (h >> 29);
}

}  // namespace

std::uint32_t intern_cached(thread_buffer* b, const char* text, std::size_t length) noexcept {
  const std::uint64_t hash = hash_bytes(text, length);
  static_assert(name_cache_ways == 2, "the lookup below checks two ways");
  constexpr std::size_t sets = name_cache_size / name_cache_ways;
  name_cache_entry* set = &b->cache[((hash >> 24) & (sets - 1)) * name_cache_ways];
  const auto holds = [&](const name_cache_entry& e) {
    return e.hash == hash && e.length == length && std::memcmp(e.text, text, length) == 0;
  };
  if (holds(set[0])) return set[0].id;
  if (holds(set[1])) {
    std::swap(set[0], set[1]);
    return set[0].id;
  }
  try {
    const auto [id, stored] = state().strings.intern({text, length});
    set[1] = set[0];
    set[0] = {hash, stored, static_cast<std::uint32_t>(length), id};
    return id;
  } catch (...) {
    return 0;  // out of memory: the range keeps an empty name rather than failing the program
  }
}

// ---- registries -------------------------------------------------------------------------------------

std::pair<std::uint32_t, const char*> string_registry::intern(std::string_view text) {
  std::lock_guard lock(mutex_);
  const name_id id = table_.intern(text);
  return {id, table_.view(id).data()};
}

std::size_t string_registry::size() {
  std::lock_guard lock(mutex_);
  return table_.size();
}

void string_registry::texts_of(const std::vector<std::uint32_t>& ids, std::vector<std::string>& out) {
  std::lock_guard lock(mutex_);
  out.clear();
  out.reserve(ids.size());
  for (std::uint32_t id : ids) out.emplace_back(id < table_.size() ? table_.view(id) : std::string_view{});
}

domain_registry::domain_registry() { create({}); }

std::uint16_t domain_registry::create(std::string_view name) {
  std::lock_guard lock(mutex_);
  if (auto found = index_.find(std::string(name)); found != index_.end()) return found->second;
  if (names_.size() > 0xFFFF) {
    overflowed_.fetch_add(1, std::memory_order_relaxed);
    return 0xFFFF;
  }
  const auto id = static_cast<std::uint16_t>(names_.size());
  names_.emplace_back(name);
  index_.emplace(std::string(name), id);
  return id;
}

std::vector<std::string> domain_registry::names() {
  std::lock_guard lock(mutex_);
  return names_;
}

}  // namespace regionprof::capture_detail
