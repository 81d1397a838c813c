// capture_session: start and stop recording, collect the chunks, and turn records into a trace; cut a long
// session into windows at run-marker boundaries (docs/capture.md, "Windows").
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "regionprof/capture/capture.hpp"
#include "regionprof/capture/capture_route.hpp"
#include "regionprof/capture/capture_state.hpp"

namespace regionprof {
namespace capture_detail {
namespace {

/// A run of records of one thread: part of a handed-over chunk (read in place) or a copy of part of a
/// live thread's current chunk. `first_index` is the index of records[0] in its chunk (range ids).
struct segment {
  std::uint64_t thread_serial = 0;
  std::uint64_t chunk_serial = 0;
  std::uint64_t base = 0;  ///< ticks of a record = base + its delta
  const record* records = nullptr;
  std::uint32_t first_index = 0;
  std::uint32_t count = 0;
};

struct thread_snapshot {
  std::uint64_t serial = 0;
  std::int64_t tid = 0;
  std::string name;
  bool over_cap = false;
};

/// Records of a chunk already converted, by chunk serial: a later collection of the session reads each
/// chunk from there (serials are never reused). Empty for a session that never cut a window.
using consumed_records = std::unordered_map<std::uint64_t, std::uint32_t>;

/// Everything one collection takes from the tool's state. Handed-over chunks are returned to the pool
/// when this goes away, whatever happened in between (release() does it earlier, counting them).
struct collection {
  std::vector<segment> segments;
  std::vector<std::vector<record>> copies;
  std::vector<chunk*> owned;
  std::vector<thread_snapshot> threads;
  std::unordered_map<std::int64_t, std::string> nvtx_names;

  collection() = default;
  collection(const collection&) = delete;
  collection& operator=(const collection&) = delete;
  ~collection() { release_chunks(owned); }

  /// Gives the handed-over chunks back (pool, and out of the session's memory count); forgets them in
  /// `consumed`, except those some thread still publishes (they come back in a later collection).
  void release(consumed_records& consumed) noexcept {
    std::vector<chunk*> chunks = std::exchange(owned, {});
    std::vector<std::uint64_t> serials;  // read before the release: a released chunk may be reused at once
    std::vector<std::uint64_t> pushed_back;
    try {
      serials.reserve(chunks.size());
      pushed_back.reserve(chunks.size());
    } catch (...) {
      owned = std::move(chunks);  // released with the collection, still in `consumed`: read from there if they come back
      return;
    }
    for (const chunk* c : chunks) serials.push_back(c->serial);
    const std::size_t released = release_chunks(chunks, &pushed_back);
    state().session_bytes.fetch_sub(std::min(released * chunk_bytes, state().session_bytes.load()),
                                    std::memory_order_relaxed);
    std::sort(pushed_back.begin(), pushed_back.end());
    for (std::uint64_t serial : serials) {
      if (!std::binary_search(pushed_back.begin(), pushed_back.end(), serial)) consumed.erase(serial);
    }
  }
};

std::string live_thread_name(const thread_info& info) {
  char name[64] = {};
  if (pthread_getname_np(info.handle, name, sizeof(name)) != 0) return info.name;
  return name;
}

/// Takes the records of session `epoch` not taken before (`consumed`): copies of what the live threads'
/// current chunks have published beyond it, then the rest of each handed-over chunk. Chunks of earlier
/// sessions are freed. Forgets exited threads. A chunk both copied (while current) and handed over
/// (filled up since) gives two segments: the copy, then the records after it.
void collect(std::uint32_t epoch, collection& out, consumed_records& consumed) {
  tool_state& s = state();
  std::vector<chunk*> stale;
  {
    std::lock_guard lock(s.registry.mutex);
    for (const thread_info& info : s.registry.threads) {
      const bool alive = info.buffer != nullptr;
      bool over_cap = info.over_cap_epoch == epoch;
      if (alive) {
        over_cap = info.buffer->over_cap_epoch.load(std::memory_order_relaxed) == epoch;
        const chunk* c = info.buffer->current_published.load(std::memory_order_acquire);
        if (c != nullptr && c->epoch.load(std::memory_order_acquire) == epoch) {
          const std::uint32_t count = c->used.load(std::memory_order_acquire);
          // After the acquire of `used`: the base its records were written against (an empty chunk may be
          // rebased meanwhile, and then no record is copied).
          const std::uint64_t base = c->base.load(std::memory_order_relaxed);
          const auto found = consumed.find(c->serial);
          const std::uint32_t from = found != consumed.end() ? found->second : 0;
          if (count > from) {
            auto& copy = out.copies.emplace_back(c->records + from, c->records + count);
            out.segments.push_back({c->thread_serial, c->serial, base, copy.data(), from, count - from});
            consumed[c->serial] = count;
          }
        }
      }
      out.threads.push_back({info.serial, info.tid, alive ? live_thread_name(info) : info.name, over_cap});
    }
    out.nvtx_names = s.registry.nvtx_names;
    // Drained under the registry lock: a thread that exited before this point handed its chunk over first.
    chunk* c = s.handover.exchange(nullptr, std::memory_order_acquire);
    while (c != nullptr) {
      chunk* next = c->next;
      if (c->epoch.load(std::memory_order_relaxed) == epoch) {
        out.owned.push_back(c);
      } else {
        stale.push_back(c);
      }
      c = next;
    }
    std::erase_if(s.registry.threads, [](const thread_info& info) { return info.buffer == nullptr; });
  }
  release_chunks(stale);
  for (chunk* c : out.owned) {
    const std::uint32_t used = c->used.load(std::memory_order_acquire);
    const auto found = consumed.find(c->serial);
    const std::uint32_t from = found != consumed.end() ? found->second : 0;
    if (used > from) {
      out.segments.push_back({c->thread_serial, c->serial, c->base.load(std::memory_order_relaxed),
                              c->records + from, from, used - from});
    }
    consumed[c->serial] = std::max(used, from);
  }
}

/// Frees everything of session `epoch` without converting it.
void discard(std::uint32_t epoch) noexcept {
  try {
    collection dropped;
    consumed_records none;
    collect(epoch, dropped, none);
  } catch (...) {
  }
}

std::uint64_t end_range_id(const record& r) noexcept {
  return r.name | (static_cast<std::uint64_t>(r.domain()) << 32);
}

}  // namespace

/// Turns collected records into trace intervals (pairing rules in capture.hpp), incrementally: add()
/// walks each collection's new records, keeping per thread the open pushes and every interval not yet
/// emitted; emit() moves the closed intervals that start before a cut (all of them at stop) into a
/// trace, and only at stop counts what is still open. Linear in the records: an interval's slot is
/// taken when its push or start is read, so intervals come out in input order (push order) without
/// sorting, and names are mapped through a table indexed by registry id.
class converter {
 public:
  void add(collection& input) {
    for (const thread_snapshot& t : input.threads) {
      thread_records& records = thread_of(t.serial);
      records.tid = t.tid;
      records.name = t.name;
      records.over_cap = records.over_cap || t.over_cap;
    }
    nvtx_names_ = std::move(input.nvtx_names);
    std::stable_sort(input.segments.begin(), input.segments.end(), [](const segment& a, const segment& b) {
      if (a.thread_serial != b.thread_serial) return a.thread_serial < b.thread_serial;
      return a.chunk_serial != b.chunk_serial ? a.chunk_serial < b.chunk_serial : a.first_index < b.first_index;
    });
    for (std::size_t i = 0; i < input.segments.size();) {
      const std::uint64_t serial = input.segments[i].thread_serial;
      std::size_t j = i;
      while (j < input.segments.size() && input.segments[j].thread_serial == serial) ++j;
      walk_thread(position_.at_or_add(serial, *this), input.segments.data() + i, input.segments.data() + j);
      i = j;
    }
    match_ends();
  }

  /// The tick at which a window of `runs` topmost run markers ends (the latest end among the first `runs`
  /// by start), or nullopt while fewer have closed.
  std::optional<std::uint64_t> run_cut(std::size_t runs, const run_marker_predicate& is_marker) {
    struct marker {
      std::uint64_t start;
      std::uint64_t end;
      bool open;
    };
    std::vector<marker> found;
    for (const thread_records& records : threads_) {
      bool covered = false;  // an earlier topmost marker of this thread, ending at covered_end (open: max)
      std::uint64_t covered_end = 0;
      std::size_t of_thread = 0;
      for (const pending_interval& p : records.intervals) {
        if (!marks_run(p.name, p.domain, is_marker)) continue;
        if (covered && p.start < covered_end) continue;  // nested in a marker: not a run of its own
        const std::uint64_t end = p.closed ? p.end : std::numeric_limits<std::uint64_t>::max();
        found.push_back({p.start, end, !p.closed});
        covered = true;
        covered_end = end;
        // A thread's topmost markers come in start order: the first `runs` overall are among its first `runs`.
        if (++of_thread == runs) break;
      }
    }
    if (runs == 0 || found.size() < runs) return std::nullopt;
    std::stable_sort(found.begin(), found.end(), [](const marker& a, const marker& b) { return a.start < b.start; });
    std::uint64_t cut = 0;
    for (std::size_t i = 0; i < runs; ++i) {
      if (found[i].open) return std::nullopt;
      cut = std::max(cut, found[i].end);
    }
    return cut;
  }

  /// Moves into `result` every closed interval that starts before `cut` and every mark before it (`last`:
  /// all of them, and what is still open is counted), with the counts since the previous emit.
  void emit(const tick_converter& clock, std::uint64_t cut, bool last, capture_result& result) {
    if (last) cut = std::numeric_limits<std::uint64_t>::max();
    result.stats = std::exchange(counts_, capture_stats{});
    stats_ = &result.stats;
    std::vector<std::uint32_t> open_names;
    if (last) count_open(open_names);
    const auto emitted = [cut](const pending_interval& p) { return p.closed && p.start < cut; };

    trace& t = result.data;
    names_.assign(state().strings.size(), unmapped);
    used_names_.clear();
    for (const thread_records& records : threads_) {
      for (const pending_interval& p : records.intervals) {
        if (emitted(p)) use_name(p.name);
      }
      for (const pending_mark& m : records.marks) {
        if (m.ticks < cut) use_name(m.name);
      }
    }
    for (std::uint32_t id : open_names) use_name(id);
    std::vector<std::string> texts;
    state().strings.texts_of(used_names_, texts);
    for (std::size_t i = 0; i < used_names_.size(); ++i) names_[used_names_[i]] = t.strings.intern(texts[i]);

    const std::vector<std::string> domain_names = state().domains.names();
    std::vector<domain_index> domains(domain_names.size() + 1, 0xFFFF);
    domains[0] = 0;
    auto domain_of = [&](std::uint16_t id) -> domain_index {
      if (id >= domains.size()) return t.domain({});
      if (domains[id] == 0xFFFF) domains[id] = t.domain(domain_names[id]);
      return domains[id];
    };

    const auto pid = static_cast<std::int64_t>(::getpid());
    std::size_t total = 0;
    for (const thread_records& records : threads_) {
      total += static_cast<std::size_t>(std::count_if(records.intervals.begin(), records.intervals.end(), emitted));
    }
    t.intervals.reserve(t.intervals.size() + total);
    std::vector<std::vector<std::size_t>> moved(threads_.size());  // old slot -> new slot of kept intervals
    for (std::size_t i = 0; i < threads_.size(); ++i) {
      thread_records& records = threads_[i];
      const bool any = records.walked || std::any_of(records.intervals.begin(), records.intervals.end(), emitted) ||
                       std::any_of(records.marks.begin(), records.marks.end(),
                                   [cut](const pending_mark& m) { return m.ticks < cut; }) ||
                       std::any_of(records.memory.begin(), records.memory.end(),
                                   [cut](const pending_memory& m) { return m.ticks < cut; });
      records.walked = false;
      std::optional<thread_index> thread;
      if (any) {
        const auto named = nvtx_names_.find(records.tid);
        thread = t.add_thread(pid, records.tid, named != nvtx_names_.end() ? named->second : records.name);
      }
      std::size_t kept = 0;  // the intervals that stay are compacted in place, in order
      std::vector<std::size_t>& slot = moved[i];
      if (!last) slot.assign(records.intervals.size(), emitted_slot);
      // Rule 18: declared work goes with its interval, by slot: into this window's declared_work when
      // the interval is emitted, to the interval's new slot when it stays, unattached when it never closed.
      std::stable_sort(records.works.begin(), records.works.end(),
                       [](const pending_work& a, const pending_work& b) { return a.slot < b.slot; });
      std::vector<pending_work> later_works;
      std::size_t next_work = 0;
      for (std::size_t j = 0; j < records.intervals.size(); ++j) {
        const pending_interval p = records.intervals[j];
        if (!emitted(p)) {
          for (; next_work < records.works.size() && records.works[next_work].slot == j; ++next_work) {
            if (last) {
              ++result.stats.unattached_work;  // its range was left open or lost (counted there too)
            } else {
              later_works.push_back({kept, records.works[next_work].work});
            }
          }
          if (!last) {
            slot[j] = kept;
            records.intervals[kept++] = p;
          }
          continue;
        }
        if (next_work < records.works.size() && records.works[next_work].slot == j) {
          interval_work entry{static_cast<std::uint32_t>(t.intervals.size()), {}};
          for (; next_work < records.works.size() && records.works[next_work].slot == j; ++next_work) {
            entry.work += records.works[next_work].work;
          }
          t.declared_work.push_back(entry);
        }
        const std::int64_t start = clock.to_ns(p.start);
        std::int64_t end = clock.to_ns(p.end);
        if (end < start) {  // a start/end range ended on a core whose TSC read lower: keep it, zero-length
          end = start;
          ++result.stats.clamped_ranges;
        }
        t.intervals.push_back({start, end, names_[p.name], *thread, 0, domain_of(p.domain), interval_kind::range, 0});
      }
      std::vector<pending_mark> later;
      for (const pending_mark& m : records.marks) {
        if (m.ticks < cut) {
          result.marks.push_back({clock.to_ns(m.ticks), names_[m.name], *thread, domain_of(m.domain)});
        } else {
          later.push_back(m);
        }
      }
      std::vector<pending_memory> later_memory;
      for (const pending_memory& m : records.memory) {
        if (m.ticks < cut) {
          t.memory_events.push_back({clock.to_ns(m.ticks), m.event.bytes, m.event.total_allocated, *thread,
                                     m.event.device, m.event.kind, 0});
          ++result.stats.memory_events;
        } else {
          later_memory.push_back(m);
        }
      }
      records.intervals.resize(last ? 0 : kept);
      records.works = std::move(later_works);
      records.marks = std::move(later);
      records.memory = std::move(later_memory);
      for (auto& [domain, stack] : records.stacks) {
        for (std::size_t& s : stack) s = last ? s : slot[s];
      }
    }
    if (last) {
      threads_.clear();
      started_.clear();
    } else {
      for (auto it = started_.begin(); it != started_.end();) {
        const std::size_t slot = moved[it->second.thread][it->second.slot];
        if (slot == emitted_slot) {  // ended, and its interval is in this window
          it = started_.erase(it);
          continue;
        }
        it->second.slot = slot;
        ++it;
      }
    }
    result.stats.marks = result.marks.size();
    open_texts_.clear();
    for (std::uint32_t id : open_names) open_texts_.emplace_back(t.strings.view(names_[id]));
    stats_ = &counts_;
  }

  const std::vector<std::string>& open_names() const noexcept { return open_texts_; }
  /// The session dropped records at its cap (a start/end range left open then counts as lost to it).
  void set_dropped(bool dropped) noexcept { dropped_ = dropped; }

 private:
  static constexpr std::uint32_t unmapped = 0xFFFFFFFFu;
  static constexpr std::uint32_t pending = 0xFFFFFFFEu;
  static constexpr std::size_t emitted_slot = std::numeric_limits<std::size_t>::max();

  struct pending_interval {
    std::uint64_t start;
    std::uint64_t end;
    std::uint32_t name;
    std::uint16_t domain;
    bool closed;
  };
  struct started_range {
    std::size_t thread;
    std::size_t slot;
    bool ended = false;
  };
  struct ended_range {
    std::uint64_t id;
    std::uint64_t ticks;
  };
  struct pending_mark {
    std::uint64_t ticks;
    std::uint32_t name;
    std::uint16_t domain;
  };
  struct pending_work {
    std::size_t slot;  // into thread_records::intervals
    declared_work work;
  };
  struct pending_memory {
    std::uint64_t ticks;
    memory_payload event;
  };
  /// One thread's state: its intervals not yet emitted (in push/start order; `closed` once paired), its
  /// marks not yet emitted, and its open pushes per domain (slots into `intervals`).
  struct thread_records {
    std::uint64_t serial = 0;
    std::int64_t tid = 0;
    std::string name;
    bool over_cap = false;
    bool walked = false;  // records walked since the last emit
    std::vector<pending_interval> intervals;
    std::vector<pending_mark> marks;
    std::vector<pending_work> works;  // rule 18, in record order: slots into `intervals`
    std::vector<pending_memory> memory;  // rule 21, in record order; not yet emitted
    std::vector<std::pair<std::uint16_t, std::vector<std::size_t>>> stacks;  // per domain; few per thread
  };
  struct positions {
    std::unordered_map<std::uint64_t, std::size_t> of;
    std::size_t at_or_add(std::uint64_t serial, converter& owner) {
      const auto [it, added] = of.emplace(serial, owner.threads_.size());
      if (added) owner.threads_.emplace_back().serial = serial;
      return it->second;
    }
  };

  thread_records& thread_of(std::uint64_t serial) { return threads_[position_.at_or_add(serial, *this)]; }

  bool marks_run(std::uint32_t name, std::uint16_t domain, const run_marker_predicate& is_marker) {
    const std::uint64_t key = (std::uint64_t{name} << 16) | domain;
    if (const auto found = marker_names_.find(key); found != marker_names_.end()) return found->second;
    std::vector<std::string> text;
    state().strings.texts_of({name}, text);
    const std::vector<std::string> domain_names = state().domains.names();
    const std::string_view domain_name = domain < domain_names.size() ? std::string_view(domain_names[domain]) : "";
    const bool marker = is_marker(text.front(), domain_name);
    marker_names_.emplace(key, marker);
    return marker;
  }

  void use_name(std::uint32_t name) {
    if (name >= names_.size()) names_.resize(std::size_t{name} + 1, unmapped);
    if (names_[name] == unmapped) {
      names_[name] = pending;
      used_names_.push_back(name);
    }
  }

  static std::size_t open_slot(thread_records& out, const record& r, std::uint64_t ticks) {
    out.intervals.push_back({ticks, 0, r.name, r.domain(), false});
    return out.intervals.size() - 1;
  }

  void walk_thread(std::size_t thread, const segment* begin, const segment* end) {
    thread_records& out = threads_[thread];
    std::size_t records = 0;
    for (const segment* seg = begin; seg != end; ++seg) records += seg->count;
    if (out.intervals.empty()) out.intervals.reserve(records / 2 + 1);  // a range is two records; later, growth
    auto stack_of = [&out](std::uint16_t domain) -> std::vector<std::size_t>& {
      for (auto& [id, stack] : out.stacks) {
        if (id == domain) return stack;
      }
      return out.stacks.emplace_back(domain, std::vector<std::size_t>{}).second;
    };
    for (const segment* seg = begin; seg != end; ++seg) {
      out.walked = out.walked || seg->count > 0;
      stats_->records += seg->count;
      for (std::uint32_t i = 0; i < seg->count; ++i) {
        const record& r = seg->records[i];
        const std::uint64_t ticks = seg->base + r.tick_delta();
        switch (r.kind()) {
          case record_kind::memory:
            // Its payload follows in the same segment: the two are published by one release of `used`,
            // and a segment starts and ends at a published count.
            if (i + 1 < seg->count) {
              ++i;
              out.memory.push_back({ticks, memory_payload_of(r, seg->records[i])});
            }
            break;
          case record_kind::push: stack_of(r.domain()).push_back(open_slot(out, r, ticks)); break;
          case record_kind::pop: {
            auto& stack = stack_of(r.domain());
            if (stack.empty()) {
              ++stats_->unmatched_pops;
            } else {
              pending_interval& open = out.intervals[stack.back()];
              stack.pop_back();
              open.end = ticks;
              open.closed = true;
            }
            break;
          }
          case record_kind::start:
            started_.insert_or_assign(range_id(seg->chunk_serial, seg->first_index + i),
                                      started_range{thread, open_slot(out, r, ticks)});
            break;
          case record_kind::end: ended_.push_back({end_range_id(r), ticks}); break;
          case record_kind::mark:
            out.marks.push_back({ticks, r.name, r.domain()});
            break;
          case record_kind::work: {  // rule 18: to the innermost push range of its domain open here
            auto& stack = stack_of(r.domain());
            if (stack.empty()) {
              ++stats_->unattached_work;
              break;
            }
            declared_work work;
            const std::uint64_t value = work_value(r);
            switch (work_quantity_of(r)) {
              case work_quantity::bytes: work.bytes = value; break;
              case work_quantity::flops: work.flops = value; break;
              default: work.items = value; break;
            }
            out.works.push_back({stack.back(), work});
            break;
          }
        }
      }
    }
  }

  void left_open(std::uint32_t name, bool lost_to_cap, std::vector<std::uint32_t>& open_names) {
    if (lost_to_cap) {
      ++stats_->lost_to_cap;
      return;
    }
    ++stats_->open_at_stop;
    if (open_names.size() < 3) open_names.push_back(name);
  }

  /// Pairs the ends seen so far with their starts; an end whose start has not been seen yet (its thread
  /// published it after the collection passed that thread) waits for a later collection, or stop().
  void match_ends() {
    std::vector<ended_range> waiting;
    for (const ended_range& e : ended_) {
      if (e.id == range_id_dropped) {
        ++stats_->lost_to_cap;
        continue;
      }
      auto found = started_.find(e.id);
      if (found == started_.end()) {
        waiting.push_back(e);
        continue;
      }
      started_range& s = found->second;
      if (s.ended) {
        ++stats_->unmatched_ends;
        continue;
      }
      s.ended = true;
      pending_interval& interval = threads_[s.thread].intervals[s.slot];
      interval.end = e.ticks;
      interval.closed = true;
    }
    ended_ = std::move(waiting);
  }

  /// At stop: the pushes still open, the started ranges never ended (in order of their start, so the
  /// names a warning quotes do not depend on hashing), the ends whose start never came.
  void count_open(std::vector<std::uint32_t>& open_names) {
    const bool session_dropped = dropped_;
    for (thread_records& records : threads_) {
      for (auto& [domain, stack] : records.stacks) {
        for (std::size_t slot : stack) left_open(records.intervals[slot].name, records.over_cap, open_names);
      }
    }
    std::vector<const pending_interval*> open;
    for (const auto& [id, s] : started_) {
      if (!s.ended) open.push_back(&threads_[s.thread].intervals[s.slot]);
    }
    std::sort(open.begin(), open.end(),
              [](const pending_interval* a, const pending_interval* b) { return a->start < b->start; });
    for (const pending_interval* p : open) left_open(p->name, session_dropped, open_names);
    stats_->unmatched_ends += ended_.size();
    ended_.clear();
  }

  std::vector<thread_records> threads_;
  positions position_;
  std::unordered_map<std::int64_t, std::string> nvtx_names_;
  std::vector<name_id> names_;  // registry id -> trace id (unmapped / pending until emit)
  std::vector<std::uint32_t> used_names_;
  std::unordered_map<std::uint64_t, started_range> started_;
  std::vector<ended_range> ended_;
  std::unordered_map<std::uint64_t, bool> marker_names_;  // (name, domain) -> marks a run
  std::vector<std::string> open_texts_;
  capture_stats counts_;  // since the last emit
  capture_stats* stats_ = &counts_;
  bool dropped_ = false;
};

/// What cut_window carries from one call to the next: the converter's open state and how far each chunk
/// has been read.
struct window_state {
  converter convert;
  consumed_records consumed;
};

namespace {

void add_warnings(capture_result& result, const std::vector<std::string>& open_names, std::size_t cap_bytes) {
  const capture_stats& st = result.stats;
  auto& warnings = result.data.warnings;
  if (st.unmatched_pops + st.unmatched_ends + st.open_at_stop > 0) {
    std::string message = "NVTX ranges did not balance: " + std::to_string(st.unmatched_pops) +
                          " pop(s) had no open push of their domain on their thread, " +
                          std::to_string(st.unmatched_ends) + " range end(s) had no recorded start " +
                          "(opened before the capture started, or popped/ended twice), and " +
                          std::to_string(st.open_at_stop) +
                          " range(s) were still open when the capture stopped and were left out";
    if (!open_names.empty()) {
      message += " (first:";
      for (const std::string& name : open_names) message += " '" + name + "'";
      message += ")";
    }
    message += "; close every range inside the profiled code";
    warnings.push_back({warning_code::unbalanced_ranges, warning_source::nvtx, std::move(message)});
  }
  if (st.dropped_records + st.dropped_memory_events > 0) {
    const std::string memory = st.dropped_memory_events == 0
                                   ? std::string()
                                   : " and " + std::to_string(st.dropped_memory_events) + " memory event(s)";
    warnings.push_back({warning_code::dropped_host_records, warning_source::nvtx,
                        std::to_string(st.dropped_records) + " NVTX record(s)" + memory +
                            " were dropped after the capture reached its memory cap of " +
                            std::to_string(cap_bytes) + " bytes, and " + std::to_string(st.lost_to_cap) +
                            " range(s) lost their start or end to it and were left out; raise "
                            "capture_options::memory_cap_bytes (a range costs 24 bytes, a memory event 24)"});
  }
  if (st.clamped_ranges > 0) {
    warnings.push_back({warning_code::clock_anomaly, warning_source::nvtx,
                        std::to_string(st.clamped_ranges) +
                            " start/end range(s) ended before they started (clock skew between cores) and "
                            "were kept with zero length"});
  }
  if (st.unattached_work > 0) {
    warnings.push_back({warning_code::unattached_work, warning_source::nvtx,
                        std::to_string(st.unattached_work) +
                            " work declaration(s) (regionprof.work.* marks) had no push range of their domain open "
                            "on their thread, or their range was left open or lost, so no region's throughput "
                            "counts them; declare work inside the region it belongs to"});
  }
  if (st.domains_past_limit > 0) {
    warnings.push_back({warning_code::dropped_host_records, warning_source::nvtx,
                        std::to_string(st.domains_past_limit) +
                            " NVTX domain(s) were created past the capture's limit of 65,535 named domains; each "
                            "shares the id of the last domain created before the limit, so its ranges and marks "
                            "are recorded in that domain. Create fewer domains (one per library or component)"});
  }
}

}  // namespace
}  // namespace capture_detail

capture_claim::capture_claim() {
  bool expected = false;
  if (!capture_detail::state().session_open.compare_exchange_strong(expected, true, std::memory_order_acq_rel)) {
    throw std::logic_error(
        "regionprof: a capture session is already active in this process (regionprof::profile and "
        "capture_session record one session at a time); stop the other session first");
  }
  held_ = true;
}

capture_claim::~capture_claim() {
  if (held_) capture_detail::state().session_open.store(false, std::memory_order_release);
}

capture_claim::capture_claim(capture_claim&& other) noexcept : held_(std::exchange(other.held_, false)) {}

capture_session::capture_session(const capture_options& options) : capture_session(capture_claim{}, options) {}

capture_session::capture_session(capture_claim&& claim, const capture_options& options) : options_(options) {
  using namespace capture_detail;
  if (!claim.held_) {
    throw std::logic_error(
        "regionprof: capture_session started on a capture_claim that holds nothing (moved from, or already "
        "taken by a session)");
  }
  windows_ = std::make_unique<window_state>();
  claim.held_ = false;  // the session's from here: stop() or the destructor gives it back
  tool_state& s = state();
  choose_capture_clock();
  discard(0);  // chunks left over from earlier sessions (exited threads) go back to the pool
  s.session_bytes.store(0, std::memory_order_relaxed);
  s.dropped.store(0, std::memory_order_relaxed);
  s.dropped_memory.store(0, std::memory_order_relaxed);
  s.session_cap.store(options.memory_cap_bytes, std::memory_order_relaxed);
  s.last_epoch = s.last_epoch == 0xFFFFFFFFu ? 1 : s.last_epoch + 1;
  epoch_ = s.last_epoch;
  s.session_start = sample_clock();
  active_epoch.store(epoch_, std::memory_order_release);
}

capture_session::~capture_session() {
  if (epoch_ == 0) return;
  using namespace capture_detail;
  active_epoch.store(0, std::memory_order_release);
  discard(epoch_);
  epoch_ = 0;
  state().session_open.store(false, std::memory_order_release);
}

std::size_t capture_session::chunk_bytes() const noexcept {
  return capture_detail::state().session_bytes.load(std::memory_order_relaxed);
}

namespace {

/// The counts every result of a session carries, as of now.
void session_stats(capture_result& result, const capture_detail::tick_converter& clock) {
  using namespace capture_detail;
  tool_state& s = state();
  result.stats.dropped_records = s.dropped.load(std::memory_order_relaxed);
  result.stats.dropped_memory_events = s.dropped_memory.load(std::memory_order_relaxed);
  result.stats.chunk_bytes = s.session_bytes.load(std::memory_order_relaxed);
  result.stats.domains_past_limit = s.domains.overflowed();
  result.stats.tool_attached = s.attached.load(std::memory_order_acquire);
  result.stats.clock_is_tsc = clock_is_tsc;
  result.stats.ns_per_tick = clock.ns_per_tick();
}

}  // namespace

std::optional<capture_result> capture_session::cut_window(std::size_t runs, const run_marker_predicate& is_marker) {
  using namespace capture_detail;
  if (epoch_ == 0) throw std::logic_error("regionprof: capture_session::cut_window() after stop()");
  tool_state& s = state();
  {
    collection input;
    collect(epoch_, input, windows_->consumed);
    windows_->convert.add(input);
    input.release(windows_->consumed);  // converted: their records now live in the converter
  }
  const std::optional<std::uint64_t> cut = windows_->convert.run_cut(runs, is_marker);
  if (!cut) return std::nullopt;
  // The rate so far, from the session's start: each window's times use the best calibration at its cut.
  const tick_converter clock = tick_converter::calibrate(s.session_start, sample_clock());
  capture_result result;
  windows_->convert.emit(clock, *cut, false, result);
  session_stats(result, clock);
  // Drops are counted once, in the window that saw them (the cap applies to the records kept at a time).
  result.stats.dropped_records -= std::min(result.stats.dropped_records, reported_drops_);
  reported_drops_ += result.stats.dropped_records;
  result.stats.dropped_memory_events -= std::min(result.stats.dropped_memory_events, reported_memory_drops_);
  reported_memory_drops_ += result.stats.dropped_memory_events;
  add_warnings(result, {}, options_.memory_cap_bytes);
  return result;
}

capture_result capture_session::stop() {
  using namespace capture_detail;
  if (epoch_ == 0) throw std::logic_error("regionprof: capture_session::stop() called twice");
  tool_state& s = state();
  active_epoch.store(0, std::memory_order_release);
  const clock_sample end = sample_clock();
  const std::uint32_t epoch = std::exchange(epoch_, 0);
  struct reopen {
    tool_state& s;
    ~reopen() { s.session_open.store(false, std::memory_order_release); }
  } reopen_on_exit{s};

  const tick_converter clock = tick_converter::calibrate(s.session_start, end);
  capture_result result;
  {
    collection input;
    collect(epoch, input, windows_->consumed);
    windows_->convert.add(input);
  }
  const std::uint64_t dropped =
      s.dropped.load(std::memory_order_relaxed) + s.dropped_memory.load(std::memory_order_relaxed);
  windows_->convert.set_dropped(dropped > 0);
  windows_->convert.emit(clock, 0, true, result);
  session_stats(result, clock);
  result.stats.dropped_records -= std::min(result.stats.dropped_records, reported_drops_);
  result.stats.dropped_memory_events -= std::min(result.stats.dropped_memory_events, reported_memory_drops_);
  add_warnings(result, windows_->convert.open_names(), options_.memory_cap_bytes);
  if (std::string conflict = nvtx_tool_conflict(); !conflict.empty()) {
    result.data.warnings.push_back({warning_code::nvtx_tool_conflict, warning_source::nvtx, std::move(conflict)});
  }
  windows_.reset();
  return result;
}

bool capture_session_active() noexcept {
  return capture_detail::state().session_open.load(std::memory_order_acquire);
}

std::string nvtx_tool_conflict() {
  if (nvtx_capture_attached()) return {};
  const char* path = std::getenv("NVTX_INJECTION64_PATH");
  if (path == nullptr) return {};
  const std::string route = capture_detail::route_name;
  if (*path == '\0') {
    return "NVTX_INJECTION64_PATH is set but empty, so NVTX attaches no tool at all and regionprof's " + route +
           " capture tool never ran: no NVTX range was recorded. Unset NVTX_INJECTION64_PATH to profile regions";
  }
  std::string message = std::string("NVTX_INJECTION64_PATH=") + path +
                        " names another NVTX tool, which NVTX attaches instead of regionprof's " + route +
                        " capture tool (the environment variable wins): no NVTX range was recorded, so runs "
                        "are timed by the harness's wall clock only and no region owns time";
  if (std::string_view(path).find("regionprof") != std::string_view::npos) {
    message += ". It is regionprof's own injection library: a program that profiles itself with "
               "regionprof::profile needs no `regionprof run`";
  }
  message += ". Unset NVTX_INJECTION64_PATH to profile regions";
  return message;
}

}  // namespace regionprof
