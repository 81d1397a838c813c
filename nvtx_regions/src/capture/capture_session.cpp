// capture_session: start and stop recording, collect the chunks, and turn records into a trace.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "capture/capture_route.hpp"
#include "capture/capture_state.hpp"
#include "regionprof/capture.hpp"

namespace regionprof {
namespace capture_detail {
namespace {

/// A run of records of one thread: a handed-over chunk (read in place) or a copy of a live thread's
/// current chunk.
struct segment {
  std::uint64_t thread_serial = 0;
  std::uint64_t chunk_serial = 0;
  std::uint64_t base = 0;  ///< ticks of a record = base + its delta
  const record* records = nullptr;
  std::uint32_t count = 0;
  bool copied = false;
};

struct thread_snapshot {
  std::uint64_t serial = 0;
  std::int64_t tid = 0;
  std::string name;
  bool over_cap = false;
};

/// Everything stop() takes from the tool's state. Handed-over chunks are returned to the pool when
/// this goes away, whatever happened in between.
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
};

std::string live_thread_name(const thread_info& info) {
  char name[64] = {};
  if (pthread_getname_np(info.handle, name, sizeof(name)) != 0) return info.name;
  return name;
}

/// Takes every chunk of session `epoch`: copies of the live threads' current chunks (up to what they
/// published), then the handed-over chunks. Chunks of earlier sessions are freed. Forgets exited threads.
void collect(std::uint32_t epoch, collection& out) {
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
          auto& copy = out.copies.emplace_back(c->records, c->records + count);
          out.segments.push_back({c->thread_serial, c->serial, base, copy.data(), count, true});
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
  // A chunk both copied (while current) and handed over (filled up since): the handed-over one has more.
  std::unordered_set<std::uint64_t> handed_over;
  for (chunk* c : out.owned) {
    handed_over.insert(c->serial);
    out.segments.push_back({c->thread_serial, c->serial, c->base.load(std::memory_order_relaxed), c->records,
                            c->used.load(std::memory_order_acquire), false});
  }
  std::erase_if(out.segments, [&](const segment& seg) { return seg.copied && handed_over.contains(seg.chunk_serial); });
}

/// Frees everything of session `epoch` without converting it.
void discard(std::uint32_t epoch) noexcept {
  try {
    collection dropped;
    collect(epoch, dropped);
  } catch (...) {
  }
}

std::uint64_t end_range_id(const record& r) noexcept {
  return r.name | (static_cast<std::uint64_t>(r.domain()) << 32);
}

/// Turns collected records into trace intervals (pairing rules in capture.hpp). Linear in the records:
/// an interval's slot is taken when its push or start is read, so intervals come out in input order
/// (push order) without sorting, and names are mapped through a table indexed by registry id.
class converter {
 public:
  converter(const tick_converter& clock, capture_result& result) : clock_(clock), result_(result) {}

  void run(collection& input, std::uint64_t dropped_records) {
    std::stable_sort(input.segments.begin(), input.segments.end(), [](const segment& a, const segment& b) {
      return a.thread_serial != b.thread_serial ? a.thread_serial < b.thread_serial : a.chunk_serial < b.chunk_serial;
    });
    std::unordered_map<std::uint64_t, std::size_t> thread_position;
    for (const thread_snapshot& t : input.threads) thread_position.emplace(t.serial, thread_position.size());
    threads_.resize(input.threads.size());
    names_.assign(state().strings.size(), unmapped);

    for (std::size_t i = 0; i < input.segments.size();) {
      const std::uint64_t serial = input.segments[i].thread_serial;
      std::size_t j = i;
      while (j < input.segments.size() && input.segments[j].thread_serial == serial) ++j;
      auto found = thread_position.find(serial);
      if (found == thread_position.end()) {  // a thread forgotten earlier: cannot happen, but never crash
        found = thread_position.emplace(serial, threads_.size()).first;
        input.threads.push_back({serial, 0, {}, false});
        threads_.emplace_back();
      }
      walk_thread(found->second, input.segments.data() + i, input.segments.data() + j,
                  input.threads[found->second].over_cap);
      i = j;
    }
    match_ends(dropped_records > 0);
    build_trace(input);
  }

  const std::vector<std::string>& open_names() const noexcept { return open_texts_; }

 private:
  static constexpr std::uint32_t unmapped = 0xFFFFFFFFu;
  static constexpr std::uint32_t pending = 0xFFFFFFFEu;

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
  struct thread_records {
    std::vector<pending_interval> intervals;  // in push/start order; `closed` once paired
    std::vector<pending_mark> marks;
    std::vector<pending_work> works;          // rule 18, in record order
    bool any = false;
  };

  void use_name(std::uint32_t name) {
    if (name >= names_.size()) names_.resize(std::size_t{name} + 1, unmapped);
    if (names_[name] == unmapped) {
      names_[name] = pending;
      used_names_.push_back(name);
    }
  }

  std::size_t open_slot(thread_records& out, const record& r, std::uint64_t ticks) {
    use_name(r.name);
    out.intervals.push_back({ticks, 0, r.name, r.domain(), false});
    return out.intervals.size() - 1;
  }

  void walk_thread(std::size_t thread, const segment* begin, const segment* end, bool over_cap) {
    thread_records& out = threads_[thread];
    std::size_t records = 0;
    for (const segment* seg = begin; seg != end; ++seg) records += seg->count;
    out.intervals.reserve(records / 2 + 1);  // a range is two records
    std::vector<std::pair<std::uint16_t, std::vector<std::size_t>>> stacks;  // per domain; few per thread
    auto stack_of = [&stacks](std::uint16_t domain) -> std::vector<std::size_t>& {
      for (auto& [id, stack] : stacks) {
        if (id == domain) return stack;
      }
      return stacks.emplace_back(domain, std::vector<std::size_t>{}).second;
    };
    for (const segment* seg = begin; seg != end; ++seg) {
      out.any = out.any || seg->count > 0;
      result_.stats.records += seg->count;
      for (std::uint32_t index = 0; index < seg->count; ++index) {
        const record& r = seg->records[index];
        const std::uint64_t ticks = seg->base + r.tick_delta();
        switch (r.kind()) {
          case record_kind::push: stack_of(r.domain()).push_back(open_slot(out, r, ticks)); break;
          case record_kind::pop: {
            auto& stack = stack_of(r.domain());
            if (stack.empty()) {
              ++result_.stats.unmatched_pops;
            } else {
              pending_interval& open = out.intervals[stack.back()];
              stack.pop_back();
              open.end = ticks;
              open.closed = true;
            }
            break;
          }
          case record_kind::start:
            started_.insert_or_assign(range_id(seg->chunk_serial, index), started_range{thread, open_slot(out, r, ticks)});
            break;
          case record_kind::end: ended_.push_back({end_range_id(r), ticks}); break;
          case record_kind::mark:
            use_name(r.name);
            out.marks.push_back({ticks, r.name, r.domain()});
            break;
          case record_kind::work: {  // rule 18: to the innermost push range of its domain open here
            auto& stack = stack_of(r.domain());
            if (stack.empty()) {
              ++result_.stats.unattached_work;
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
    for (auto& [domain, stack] : stacks) {
      for (std::size_t slot : stack) left_open(out.intervals[slot].name, over_cap);
    }
  }

  void left_open(std::uint32_t name, bool lost_to_cap) {
    if (lost_to_cap) {
      ++result_.stats.lost_to_cap;
      return;
    }
    ++result_.stats.open_at_stop;
    if (open_names_.size() < 3) open_names_.push_back(name);
  }

  void match_ends(bool session_dropped) {
    for (const ended_range& e : ended_) {
      if (e.id == range_id_dropped) {
        ++result_.stats.lost_to_cap;
        continue;
      }
      auto found = started_.find(e.id);
      if (found == started_.end() || found->second.ended) {
        ++result_.stats.unmatched_ends;
        continue;
      }
      started_range& s = found->second;
      s.ended = true;
      pending_interval& interval = threads_[s.thread].intervals[s.slot];
      interval.end = e.ticks;
      interval.closed = true;
    }
    // In order of their start, so the names a warning quotes do not depend on hashing.
    std::vector<const pending_interval*> open;
    for (const auto& [id, s] : started_) {
      if (!s.ended) open.push_back(&threads_[s.thread].intervals[s.slot]);
    }
    std::sort(open.begin(), open.end(),
              [](const pending_interval* a, const pending_interval* b) { return a->start < b->start; });
    for (const pending_interval* p : open) left_open(p->name, session_dropped);
  }

  void build_trace(const collection& input) {
    trace& t = result_.data;
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
    for (const thread_records& records : threads_) total += records.intervals.size();
    t.intervals.reserve(t.intervals.size() + total);
    for (std::size_t i = 0; i < threads_.size(); ++i) {
      const thread_records& records = threads_[i];
      if (!records.any) continue;
      const thread_snapshot& info = input.threads[i];
      const auto named = input.nvtx_names.find(info.tid);
      const thread_index thread =
          t.add_thread(pid, info.tid, named != input.nvtx_names.end() ? named->second : info.name);
      std::vector<pending_work> works = records.works;  // rule 18: merged with the intervals by slot
      std::stable_sort(works.begin(), works.end(),
                       [](const pending_work& a, const pending_work& b) { return a.slot < b.slot; });
      std::size_t next_work = 0;
      for (std::size_t slot = 0; slot < records.intervals.size(); ++slot) {
        const pending_interval& p = records.intervals[slot];
        if (!p.closed) {
          while (next_work < works.size() && works[next_work].slot == slot) {
            ++next_work;
            ++result_.stats.unattached_work;  // its range was left open or lost (counted there too)
          }
          continue;
        }
        if (next_work < works.size() && works[next_work].slot == slot) {
          interval_work entry{static_cast<std::uint32_t>(t.intervals.size()), {}};
          for (; next_work < works.size() && works[next_work].slot == slot; ++next_work) {
            entry.work += works[next_work].work;
          }
          t.declared_work.push_back(entry);
        }
        const std::int64_t start = clock_.to_ns(p.start);
        std::int64_t end = clock_.to_ns(p.end);
        if (end < start) {  // a start/end range ended on a core whose TSC read lower: keep it, zero-length
          end = start;
          ++result_.stats.clamped_ranges;
        }
        t.intervals.push_back({start, end, names_[p.name], thread, 0, domain_of(p.domain), interval_kind::range, 0});
      }
      for (const pending_mark& m : records.marks) {
        result_.marks.push_back({clock_.to_ns(m.ticks), names_[m.name], thread, domain_of(m.domain)});
      }
    }
    result_.stats.marks = result_.marks.size();
    for (std::uint32_t id : open_names_) open_texts_.emplace_back(t.strings.view(names_[id]));
  }

  const tick_converter& clock_;
  capture_result& result_;
  std::vector<thread_records> threads_;
  std::vector<name_id> names_;  // registry id -> trace id (unmapped / pending until build_trace)
  std::vector<std::uint32_t> used_names_;
  std::unordered_map<std::uint64_t, started_range> started_;
  std::vector<ended_range> ended_;
  std::vector<std::uint32_t> open_names_;
  std::vector<std::string> open_texts_;
};

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
  if (st.dropped_records > 0) {
    warnings.push_back({warning_code::dropped_host_records, warning_source::nvtx,
                        std::to_string(st.dropped_records) +
                            " NVTX record(s) were dropped after the capture reached its memory cap of " +
                            std::to_string(cap_bytes) + " bytes, and " + std::to_string(st.lost_to_cap) +
                            " range(s) lost their start or end to it and were left out; raise "
                            "capture_options::memory_cap_bytes (a range costs 24 bytes)"});
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

capture_session::capture_session(const capture_options& options) : options_(options) {
  using namespace capture_detail;
  tool_state& s = state();
  bool expected = false;
  if (!s.session_open.compare_exchange_strong(expected, true, std::memory_order_acq_rel)) {
    throw std::logic_error(
        "regionprof: a capture session is already active in this process (regionprof::profile and "
        "capture_session record one session at a time); stop the other session first");
  }
  choose_capture_clock();
  discard(0);  // chunks left over from earlier sessions (exited threads) go back to the pool
  s.session_bytes.store(0, std::memory_order_relaxed);
  s.dropped.store(0, std::memory_order_relaxed);
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

  collection input;
  collect(epoch, input);
  const tick_converter clock = tick_converter::calibrate(s.session_start, end);

  capture_result result;
  result.stats.dropped_records = s.dropped.load(std::memory_order_relaxed);
  result.stats.chunk_bytes = s.session_bytes.load(std::memory_order_relaxed);
  result.stats.domains_past_limit = s.domains.overflowed();
  result.stats.tool_attached = s.attached.load(std::memory_order_acquire);
  result.stats.clock_is_tsc = clock_is_tsc;
  result.stats.ns_per_tick = clock.ns_per_tick();
  converter convert(clock, result);
  convert.run(input, result.stats.dropped_records);
  add_warnings(result, convert.open_names(), options_.memory_cap_bytes);
  if (std::string conflict = nvtx_tool_conflict(); !conflict.empty()) {
    result.data.warnings.push_back({warning_code::nvtx_tool_conflict, warning_source::nvtx, std::move(conflict)});
  }
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
