// The attribution engine: DESIGN.md, Attribution rules 1-10.
//
// Passes (n intervals, m device ops; every pass is linear, none allocates per event):
//   1. classify names (once per distinct name and domain), find the threads that hold run markers;
//   2. order each thread's intervals (thread_order: linear when already ordered, else a radix sort);
//   3. sum each launch's device time by correlation slot (needed by the key averages' subtree totals),
//      count uncorrelated ops and clock anomalies;
//   4. walk each thread once with a stack (rule 1), marker threads first: run ownership (2, 9), topmost
//      regions (3-5), key averages (10) and each launch's owner (run, region) per correlation slot;
//   5. give each device op to its launch's owner (6), union and span per run, then assemble the result.
// Per-event state: the per-thread order (4 B per interval), the stack (depth only), and per correlation
// slot 20 B (interval index, device time, owning run, owning aggregate).
#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <numeric>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analysis/correlation_index.hpp"
#include "analysis/name_classifier.hpp"
#include "analysis/thread_order.hpp"
#include "regionprof/analysis.hpp"

namespace regionprof {

namespace {

using detail::correlation_index;
using detail::effective_end;
using detail::marker_class;
using detail::name_classifier;
using detail::no_class;
using detail::region_class;

constexpr std::uint32_t no_index = static_cast<std::uint32_t>(-1);
/// Run code of a marker discarded by skip_runs (a warm-up run): its contents belong to no run.
constexpr std::uint32_t skipped_run = no_index - 1;
/// Slot owner of a launch from off-thread work left unattributed (cross_thread off).
constexpr std::uint32_t off_thread_run = no_index - 2;
/// Slot aggregate of an off-thread launch with no region of its own: resolved after all walks against
/// the regions open on the marker's thread (rule 9).
constexpr std::uint32_t pending_aggregate = no_index - 1;
/// Key of the synthetic run's base frame, which is no event.
constexpr std::uint32_t no_key = no_index;

constexpr std::int64_t max_ns = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t min_ns = std::numeric_limits<std::int64_t>::min();

/// Who owns an interval (and its subtree unless a run marker below starts a run of its own).
enum class ownership : std::uint8_t {
  none = 0,         ///< no run: outside every marker interval
  on_thread = 1,    ///< a run, through its marker (rules 2-5)
  off_thread = 2,   ///< a run, through the marker interval on another thread (rule 9, cross_thread on)
  skipped = 3,      ///< a marker discarded by skip_runs
  off_counted = 4,  ///< inside another thread's run with cross_thread off: counted (OFF_THREAD_EVENTS)
};

constexpr bool owned(ownership state) noexcept {
  return state == ownership::on_thread || state == ownership::off_thread;
}

struct frame {
  std::int64_t end = 0;     ///< clipped end (rule 1)
  std::int64_t device = 0;  ///< device time launched from this subtree (owned frames)
  std::uint32_t run = no_index;
  std::uint32_t aggregate = no_index;  ///< the topmost region's aggregate in this run, or no_index
  std::uint32_t key = no_key;      ///< name id
  ownership state = ownership::none;
  bool under_marker = false;  ///< this interval is a run marker or has one above it on this thread
};

/// A topmost run marker: [start, end] on `thread`; `run` is its run index or skipped_run.
struct marker_span {
  std::int64_t start = 0;
  std::int64_t end = 0;
  std::uint32_t thread = 0;
  std::uint32_t run = no_index;
};

/// Which run's marker interval contains a time, looking only at markers of other threads (rule 9).
class run_lookup {
 public:
  void build(std::vector<marker_span> markers) {
    markers_ = std::move(markers);
    std::stable_sort(markers_.begin(), markers_.end(),
                     [](const marker_span& a, const marker_span& b) { return a.start < b.start; });
    max_end_.resize(markers_.size());
    std::int64_t high = min_ns;
    for (std::size_t i = 0; i < markers_.size(); ++i) max_end_[i] = high = std::max(high, markers_[i].end);
  }
  bool empty() const noexcept { return markers_.empty(); }
  /// The run code (index or skipped_run) of the latest-starting marker on a thread other than `thread`
  /// whose closed interval contains `time`, or no_index.
  std::uint32_t find(std::uint32_t thread, std::int64_t time) const noexcept {
    auto after = std::upper_bound(markers_.begin(), markers_.end(), time,
                                  [](std::int64_t t, const marker_span& m) { return t < m.start; });
    for (auto i = static_cast<std::size_t>(after - markers_.begin()); i-- > 0 && max_end_[i] >= time;) {
      if (markers_[i].end >= time && markers_[i].thread != thread) return markers_[i].run;
    }
    return no_index;
  }

 private:
  std::vector<marker_span> markers_;
  std::vector<std::int64_t> max_end_;  ///< prefix maximum of the ends: stops the backward scan early
};

struct cpu_key_stats {
  std::uint64_t count = 0;
  std::int64_t self_cpu = 0;
  std::int64_t total_cpu = 0;
  std::int64_t self_device = 0;
  std::int64_t total_device = 0;
};

struct device_key_stats {
  std::uint64_t count = 0;
  std::int64_t total = 0;
};

/// One region's totals in one run.
struct aggregate {
  std::uint32_t run = 0;
  std::uint32_t region = 0;  ///< classifier region index
  std::uint64_t calls = 0;
  std::int64_t cpu = 0;
  std::int64_t device = 0;
  std::int64_t off_cpu = 0;
  bool off_thread = false;
  std::int64_t first_seen = max_ns;  ///< earliest start of an owning instance
};

/// A topmost region instance on the marker's thread (rule 9's "region open at that moment").
struct region_instance {
  std::int64_t start = 0;
  std::int64_t end = 0;
  std::uint32_t aggregate = 0;
};

struct run_state {
  std::int64_t start = 0;
  std::int64_t end = 0;
  std::uint32_t thread = 0;
  std::int64_t device = 0;
  std::int64_t first_op = max_ns;
  std::int64_t last_op = min_ns;
  std::uint64_t ops = 0;
  // Union sweep over the run's ops in input order; valid while they arrive in start order.
  std::int64_t busy = 0;
  std::int64_t open_start = 0;
  std::int64_t open_end = min_ns;
  std::int64_t last_start = min_ns;
  bool unordered = false;
  std::vector<region_instance> instances;  ///< cross_thread only, in start order
};

run_state new_run(std::int64_t start, std::int64_t end, std::uint32_t thread) {
  run_state r;
  r.start = start;
  r.end = end;
  r.thread = thread;
  return r;
}

std::string thread_label(const trace& input, std::uint32_t thread) {
  if (thread >= input.threads.size()) return "thread #" + std::to_string(thread);
  const thread_info& info = input.threads[thread];
  std::string label = "tid " + std::to_string(info.tid);
  if (info.name != 0 && info.name < input.strings.size()) label += " '" + std::string(input.strings.view(info.name)) + "'";
  return label;
}

std::int64_t duration(const device_op& op) noexcept { return op.end_ns > op.start_ns ? op.end_ns - op.start_ns : 0; }

class engine {
 public:
  engine(const trace& input, const analysis_options& options)
      : in_(input), options_(options), classes_(input, options), correlation_(input.intervals) {}

  analysis_result run();

 private:
  name_id name_of(const cpu_interval& interval) const noexcept {
    return interval.name < in_.strings.size() ? interval.name : name_id{0};
  }
  std::uint32_t classify(const cpu_interval& interval) {
    if (interval.name >= in_.strings.size()) return no_class;
    return classes_.classify(interval);
  }

  void find_marker_threads();
  void sum_launches();
  void discover_markers();
  void walk(std::uint32_t thread);
  void pop(std::vector<frame>& stack);
  void begin_topmost_region(frame& f, std::uint32_t region, std::int64_t start, std::int64_t end);
  std::uint32_t aggregate_of(std::uint32_t run, std::uint32_t region);
  void resolve_pending();
  void attribute_device_ops();
  void finish_unordered_unions();
  analysis_result assemble();
  void add_warnings(analysis_result& result) const;

  const trace& in_;
  const analysis_options& options_;
  name_classifier classes_;
  correlation_index correlation_;
  detail::thread_order order_;
  bool device_data_ = false;

  // Threads and runs.
  std::size_t thread_count_ = 0;
  std::vector<std::uint32_t> marker_threads_;  ///< threads holding a marker-classified range, ascending
  std::vector<std::vector<std::uint32_t>> thread_runs_;  ///< per thread: run codes of its topmost markers
  bool runs_known_ = false;  ///< thread_runs_ filled by discover_markers()
  std::uint32_t synthetic_thread_ = no_index;  ///< the thread of the synthetic run (no markers at all)
  std::size_t marker_count_ = 0;           ///< topmost markers, skipped ones included
  std::vector<run_state> runs_;
  std::vector<marker_span> markers_;  ///< topmost markers for the off-thread lookup
  run_lookup lookup_;
  std::vector<frame> stack_;

  // Per correlation slot.
  std::vector<std::int64_t> slot_device_;
  std::vector<std::uint32_t> slot_run_;
  std::vector<std::uint32_t> slot_aggregate_;
  std::vector<std::uint32_t> pending_slots_;

  // Regions and key averages.
  std::vector<aggregate> aggregates_;
  std::vector<std::uint32_t> region_last_run_;        ///< per region: run of its last aggregate
  std::vector<std::uint32_t> region_last_aggregate_;  ///< ... and that aggregate
  std::unordered_map<std::uint64_t, std::uint32_t> aggregate_index_;  // (run, region), per aggregate
  std::vector<cpu_key_stats> cpu_keys_;
  std::vector<device_key_stats> device_keys_;

  // Counts for warnings.
  std::uint64_t overlaps_ = 0;
  std::string overlap_example_;
  std::uint64_t nested_markers_ = 0;
  std::map<std::string, std::uint64_t> unmapped_by_kind_;
  std::uint64_t off_thread_intervals_ = 0;
  std::uint64_t off_thread_ops_ = 0;
  std::vector<std::uint32_t> off_threads_;  ///< threads with counted off-thread work, first seen order
  std::uint64_t uncorrelated_zero_ = 0;
  std::uint64_t uncorrelated_unmatched_ = 0;
  std::int64_t uncorrelated_time_ = 0;
  std::uint64_t clock_anomalies_ = 0;
  std::int64_t clock_anomaly_max_ = 0;
};

void engine::find_marker_threads() {
  thread_count_ = in_.threads.size();
  for (const cpu_interval& interval : in_.intervals) {
    thread_count_ = std::max<std::size_t>(thread_count_, std::size_t{interval.thread} + 1);
  }
  std::vector<bool> has_marker(thread_count_, false);
  for (const cpu_interval& interval : in_.intervals) {
    if (classify(interval) == marker_class) has_marker[interval.thread] = true;
  }
  for (std::uint32_t t = 0; t < thread_count_; ++t) {
    if (has_marker[t]) marker_threads_.push_back(t);
  }
}

void engine::sum_launches() {
  slot_device_.assign(correlation_.size(), 0);
  for (const device_op& op : in_.device_ops) {
    const std::uint32_t slot = correlation_.slot(op.correlation_id);
    if (slot == correlation_index::none) continue;  // counted in attribute_device_ops()
    slot_device_[slot] += duration(op);
    const std::int64_t call_start = in_.intervals[correlation_.call(slot)].start_ns;
    if (op.start_ns < call_start) {
      ++clock_anomalies_;
      clock_anomaly_max_ = std::max(clock_anomaly_max_, call_start - op.start_ns);
    }
  }
  slot_run_.assign(correlation_.size(), no_index);
  slot_aggregate_.assign(correlation_.size(), no_index);
}

// Rule 2 with several marker threads: run i is the i-th topmost marker in time across threads, so every
// marker thread's markers are found (a light walk with clipping) before the full walks need run indices.
void engine::discover_markers() {
  std::vector<marker_span> found;
  struct light_frame {
    std::int64_t end;
    bool under_marker;
  };
  std::vector<light_frame> stack;
  for (std::uint32_t t : marker_threads_) {
    stack.clear();
    std::uint32_t ordinal = 0;
    for (std::uint32_t index : order_.of(t)) {
      const cpu_interval& interval = in_.intervals[index];
      const std::int64_t start = interval.start_ns;
      std::int64_t end = effective_end(interval);
      while (!stack.empty()) {
        if (end <= stack.back().end) break;
        if (start < stack.back().end) {
          end = stack.back().end;
          break;
        }
        stack.pop_back();
      }
      const bool parent_under = !stack.empty() && stack.back().under_marker;
      const bool topmost_marker = !parent_under && classify(interval) == marker_class;
      if (topmost_marker) found.push_back({start, end, t, ordinal++});
      stack.push_back({end, parent_under || topmost_marker});
    }
  }
  // Built thread by thread in walk order: a stable sort by start breaks ties by thread, then walk order.
  std::stable_sort(found.begin(), found.end(), [](const marker_span& a, const marker_span& b) { return a.start < b.start; });
  thread_runs_.assign(thread_count_, {});
  std::vector<std::uint32_t> per_thread(thread_count_, 0);
  for (const marker_span& m : found) ++per_thread[m.thread];
  for (std::uint32_t t = 0; t < thread_count_; ++t) thread_runs_[t].resize(per_thread[t]);
  const std::size_t skip = options_.skip_runs;
  for (std::size_t i = 0; i < found.size(); ++i) {
    marker_span& m = found[i];
    const std::uint32_t code = i < skip ? skipped_run : static_cast<std::uint32_t>(i - skip);
    thread_runs_[m.thread][m.run] = code;
    m.run = code;
    if (code != skipped_run) runs_.push_back(new_run(m.start, m.end, m.thread));
  }
  marker_count_ = found.size();
  markers_ = std::move(found);
  lookup_.build(markers_);
  runs_known_ = true;
}

std::uint32_t engine::aggregate_of(std::uint32_t run, std::uint32_t region) {
  if (region >= region_last_run_.size()) {
    region_last_run_.resize(region + 1, no_index);
    region_last_aggregate_.resize(region + 1, no_index);
  }
  if (region_last_run_[region] == run) return region_last_aggregate_[region];
  const std::uint64_t key = (std::uint64_t{run} << 32) | region;
  auto [it, added] = aggregate_index_.try_emplace(key, static_cast<std::uint32_t>(aggregates_.size()));
  if (added) aggregates_.push_back({.run = run, .region = region});
  region_last_run_[region] = run;
  region_last_aggregate_[region] = it->second;
  return it->second;
}

void engine::begin_topmost_region(frame& f, std::uint32_t region, std::int64_t start, std::int64_t end) {
  const std::uint32_t index = aggregate_of(f.run, region);
  aggregate& a = aggregates_[index];
  if (f.state == ownership::on_thread) {
    ++a.calls;
    a.cpu += end - start;
    if (options_.cross_thread) runs_[f.run].instances.push_back({start, end, index});
  } else {
    a.off_cpu += end - start;
    a.off_thread = true;
  }
  a.first_seen = std::min(a.first_seen, start);
  f.aggregate = index;
}

void engine::pop(std::vector<frame>& stack) {
  const frame done = stack.back();
  stack.pop_back();
  if (!owned(done.state) || done.key == no_key) return;
  cpu_keys_[done.key].total_device += done.device;
  if (!stack.empty() && owned(stack.back().state) && stack.back().run == done.run) stack.back().device += done.device;
}

void engine::walk(std::uint32_t thread) {
  std::vector<frame>& stack = stack_;
  stack.clear();
  const bool synthetic = thread == synthetic_thread_;
  if (synthetic) {
    frame base;
    base.end = max_ns;
    base.run = 0;
    base.state = ownership::on_thread;
    base.under_marker = true;
    stack.push_back(base);
  }
  // Only markers of other threads can make work here off-thread work (rule 9).
  const bool only_marker_thread = marker_threads_.size() == 1 && marker_threads_[0] == thread;
  const bool lookups = !synthetic && !only_marker_thread && !lookup_.empty();
  std::uint32_t ordinal = 0;
  const std::vector<std::uint32_t>* known_runs = runs_known_ ? &thread_runs_[thread] : nullptr;

  for (std::uint32_t index : order_.of(thread)) {
    const cpu_interval& interval = in_.intervals[index];
    const std::int64_t start = interval.start_ns;
    std::int64_t end = effective_end(interval);
    while (!stack.empty()) {
      const frame& top = stack.back();
      if (end <= top.end) break;  // contained: a child of top (top.start <= start by the order)
      if (start < top.end) {      // starts inside top, ends after it: clip (rule 1)
        if (overlaps_++ == 0) {
          overlap_example_ = "'" + std::string(in_.strings.view(name_of(interval))) + "' inside '" +
                             std::string(in_.strings.view(top.key == no_key ? 0 : top.key)) + "' on " +
                             thread_label(in_, thread);
        }
        end = top.end;
        break;
      }
      pop(stack);
    }
    const std::int64_t length = end - start;
    const std::uint32_t cls = classify(interval);
    const frame* parent = stack.empty() ? nullptr : &stack.back();
    frame f;
    f.end = end;
    f.key = name_of(interval);

    if (cls == marker_class && !(parent && parent->under_marker)) {
      // A topmost marker on this thread: a run of its own (rule 2), or a skipped warm-up run.
      std::uint32_t code;
      if (known_runs) {
        // discover_markers() found the same markers with the same walk: ordinal is in range.
        code = ordinal < known_runs->size() ? (*known_runs)[ordinal] : skipped_run;
      } else {
        code = ordinal < options_.skip_runs ? skipped_run : static_cast<std::uint32_t>(ordinal - options_.skip_runs);
        if (code != skipped_run) runs_.push_back(new_run(start, end, thread));
        markers_.push_back({start, end, thread, code});
      }
      ++ordinal;
      f.run = code;
      f.state = code == skipped_run ? ownership::skipped : ownership::on_thread;
      f.under_marker = true;
    } else if (parent && parent->state != ownership::none) {
      f.run = parent->run;
      f.state = parent->state;
      f.under_marker = parent->under_marker;
      f.aggregate = parent->aggregate;
      if (cls == marker_class) ++nested_markers_;
      if (cls >= region_class && owned(f.state) && f.aggregate == no_index) {
        begin_topmost_region(f, cls - region_class, start, end);
      }
      if (f.state == ownership::off_counted) ++off_thread_intervals_;
    } else {
      // No run above it on this thread: rule 9 decides by the marker intervals of other threads.
      const std::uint32_t code = lookups ? lookup_.find(thread, start) : no_index;
      if (code == no_index) {
        if (cls >= region_class) ++unmapped_by_kind_[classes_.regions()[cls - region_class].kind];
      } else if (code == skipped_run) {
        f.state = ownership::skipped;
      } else if (options_.cross_thread) {
        f.run = code;
        f.state = ownership::off_thread;
        if (cls >= region_class) begin_topmost_region(f, cls - region_class, start, end);
      } else {
        f.state = ownership::off_counted;
        ++off_thread_intervals_;
        if (std::find(off_threads_.begin(), off_threads_.end(), thread) == off_threads_.end()) {
          off_threads_.push_back(thread);
        }
      }
    }

    if (owned(f.state)) {
      cpu_key_stats& stats = cpu_keys_[f.key];
      ++stats.count;
      stats.total_cpu += length;
      stats.self_cpu += length;
      if (parent && owned(parent->state) && parent->run == f.run && parent->key != no_key) {
        cpu_keys_[parent->key].self_cpu -= length;
      }
    }
    if (is_api_call(interval.kind) && f.state != ownership::none && f.state != ownership::skipped) {
      const std::uint32_t slot = correlation_.slot(interval.correlation_id);
      if (slot != correlation_index::none && correlation_.call(slot) == index) {
        if (f.state == ownership::off_counted) {
          slot_run_[slot] = off_thread_run;
        } else {
          f.device = slot_device_[slot];
          cpu_keys_[f.key].self_device += f.device;
          slot_run_[slot] = f.run;
          if (f.aggregate != no_index) {
            slot_aggregate_[slot] = f.aggregate;
          } else if (f.state == ownership::off_thread) {
            slot_aggregate_[slot] = pending_aggregate;
            pending_slots_.push_back(slot);
          }
        }
      }
    }
    stack.push_back(f);
  }
  while (!stack.empty()) pop(stack);
}

// Rule 9: an off-thread launch outside any region of its own thread goes to the topmost region open on
// the marker's thread when the launching call started, else to the residual.
void engine::resolve_pending() {
  for (std::uint32_t slot : pending_slots_) {
    const std::int64_t time = in_.intervals[correlation_.call(slot)].start_ns;
    const std::vector<region_instance>& instances = runs_[slot_run_[slot]].instances;
    auto after = std::upper_bound(instances.begin(), instances.end(), time,
                                  [](std::int64_t t, const region_instance& r) { return t < r.start; });
    std::uint32_t result = no_index;
    if (after != instances.begin() && std::prev(after)->end >= time) result = std::prev(after)->aggregate;
    slot_aggregate_[slot] = result;
  }
  pending_slots_.clear();
  pending_slots_.shrink_to_fit();
}

void engine::attribute_device_ops() {
  for (const device_op& op : in_.device_ops) {
    const std::int64_t length = duration(op);
    const std::uint32_t slot = correlation_.slot(op.correlation_id);
    if (slot == correlation_index::none) {
      ++(op.correlation_id == 0 ? uncorrelated_zero_ : uncorrelated_unmatched_);
      uncorrelated_time_ += length;
      continue;
    }
    const std::uint32_t run = slot_run_[slot];
    if (run == off_thread_run) {
      ++off_thread_ops_;
      continue;
    }
    if (run >= runs_.size()) continue;  // launched outside every run
    run_state& r = runs_[run];
    r.device += length;
    ++r.ops;
    const std::int64_t end = op.start_ns + length;
    r.first_op = std::min(r.first_op, op.start_ns);
    r.last_op = std::max(r.last_op, end);
    if (op.start_ns < r.last_start) r.unordered = true;
    r.last_start = op.start_ns;
    if (!r.unordered) {
      if (op.start_ns > r.open_end) {
        if (r.open_end != min_ns) r.busy += r.open_end - r.open_start;
        r.open_start = op.start_ns;
        r.open_end = end;
      } else {
        r.open_end = std::max(r.open_end, end);
      }
    }
    if (const std::uint32_t a = slot_aggregate_[slot]; a != no_index) aggregates_[a].device += length;
    const name_id name = op.name < in_.strings.size() ? op.name : name_id{0};
    ++device_keys_[name].count;
    device_keys_[name].total += length;
  }
  for (run_state& r : runs_) {
    if (!r.unordered && r.open_end != min_ns) r.busy += r.open_end - r.open_start;
  }
  finish_unordered_unions();
}

// Device busy time of runs whose ops did not arrive in start order: gather each such run's ops, sort by
// start and sweep. Memory: 4 bytes per op of those runs, plus 16 bytes per op of the largest one.
void engine::finish_unordered_unions() {
  std::vector<std::uint32_t> first(runs_.size() + 1, 0);
  bool any = false;
  for (std::size_t r = 0; r < runs_.size(); ++r) {
    any = any || runs_[r].unordered;
    first[r + 1] = first[r] + (runs_[r].unordered ? static_cast<std::uint32_t>(runs_[r].ops) : 0);
  }
  if (!any) return;
  std::vector<std::uint32_t> grouped(first.back());
  {
    std::vector<std::uint32_t> cursor(first.begin(), first.end() - 1);
    for (std::size_t i = 0; i < in_.device_ops.size(); ++i) {
      const std::uint32_t slot = correlation_.slot(in_.device_ops[i].correlation_id);
      if (slot == correlation_index::none) continue;
      const std::uint32_t run = slot_run_[slot];
      if (run < runs_.size() && runs_[run].unordered) grouped[cursor[run]++] = static_cast<std::uint32_t>(i);
    }
  }
  std::vector<std::pair<std::int64_t, std::int64_t>> spans;
  for (std::size_t r = 0; r < runs_.size(); ++r) {
    if (!runs_[r].unordered) continue;
    spans.clear();
    for (std::uint32_t k = first[r]; k < first[r + 1]; ++k) {
      const device_op& op = in_.device_ops[grouped[k]];
      spans.emplace_back(op.start_ns, op.start_ns + duration(op));
    }
    std::sort(spans.begin(), spans.end());
    std::int64_t busy = 0;
    std::int64_t open_start = spans.front().first;
    std::int64_t open_end = spans.front().second;
    for (const auto& [s, e] : spans) {
      if (s > open_end) {
        busy += open_end - open_start;
        open_start = s;
        open_end = e;
      } else {
        open_end = std::max(open_end, e);
      }
    }
    runs_[r].busy = busy + (open_end - open_start);
  }
}

analysis_result engine::run() {
  device_data_ = in_.has_device_data();
  find_marker_threads();
  order_ = detail::order_by_thread(in_.intervals, thread_count_);
  cpu_keys_.assign(in_.strings.size(), {});
  device_keys_.assign(in_.strings.size(), {});
  sum_launches();

  if (marker_threads_.size() > 1) discover_markers();
  std::vector<std::uint32_t> walk_order;
  if (!marker_threads_.empty()) {
    walk_order = marker_threads_;
  } else if (!in_.intervals.empty()) {
    // No marker at all (rule 2): one synthetic run spanning the busiest thread (ties: lowest index).
    std::uint32_t busiest = 0;
    for (std::uint32_t t = 1; t < thread_count_; ++t) {
      if (order_.of(t).size() > order_.of(busiest).size()) busiest = t;
    }
    synthetic_thread_ = busiest;
    std::int64_t low = max_ns;
    std::int64_t high = min_ns;
    for (std::uint32_t index : order_.of(busiest)) {
      low = std::min(low, in_.intervals[index].start_ns);
      high = std::max(high, effective_end(in_.intervals[index]));
    }
    runs_.push_back(new_run(low, high, busiest));
    markers_.push_back({low, high, busiest, 0});
    walk_order.push_back(busiest);
  }
  for (std::size_t w = 0; w < walk_order.size(); ++w) {
    walk(walk_order[w]);
    if (w == 0 && !runs_known_) {
      marker_count_ = markers_.size();
      lookup_.build(markers_);  // the only marker thread (or the synthetic run) is now known
    }
  }
  for (std::uint32_t t = 0; t < thread_count_; ++t) {
    if (std::find(walk_order.begin(), walk_order.end(), t) == walk_order.end()) walk(t);
  }
  order_ = {};
  stack_ = {};
  resolve_pending();
  attribute_device_ops();
  return assemble();
}

analysis_result engine::assemble() {
  analysis_result result;
  result.has_device_data = device_data_;

  // Regions that own something in some run, ordered by first appearance in time.
  const std::size_t region_count = classes_.regions().size();
  std::vector<std::int64_t> region_first(region_count, max_ns);
  for (const aggregate& a : aggregates_) region_first[a.region] = std::min(region_first[a.region], a.first_seen);
  std::vector<std::uint32_t> region_order;
  std::vector<bool> seen(region_count, false);
  for (const aggregate& a : aggregates_) seen[a.region] = true;
  for (std::uint32_t r = 0; r < region_count; ++r) {
    if (seen[r]) region_order.push_back(r);
  }
  std::stable_sort(region_order.begin(), region_order.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return region_first[a] < region_first[b]; });
  std::vector<std::uint32_t> result_index(region_count, no_index);
  for (std::uint32_t region : region_order) {
    const detail::region_def& def = classes_.regions()[region];
    result_index[region] = static_cast<std::uint32_t>(result.regions.size());
    auto type = in_.module_types.find(def.id);
    result.regions.push_back({def.id, def.name, def.kind, type == in_.module_types.end() ? "-" : type->second});
  }

  // Each run's aggregates, ordered by first appearance in the run.
  std::vector<std::uint32_t> by_run(aggregates_.size());
  std::iota(by_run.begin(), by_run.end(), 0u);
  std::stable_sort(by_run.begin(), by_run.end(), [&](std::uint32_t a, std::uint32_t b) {
    if (aggregates_[a].run != aggregates_[b].run) return aggregates_[a].run < aggregates_[b].run;
    return aggregates_[a].first_seen < aggregates_[b].first_seen;
  });
  std::size_t next = 0;
  result.runs.reserve(runs_.size());
  for (std::size_t r = 0; r < runs_.size(); ++r) {
    const run_state& state = runs_[r];
    run_result run;
    run.run_index = r;
    run.cpu_time_ns = state.end - state.start;
    run.wall_time_ns = r < in_.run_wall_times_ns.size() ? in_.run_wall_times_ns[r] : run.cpu_time_ns;
    std::int64_t region_cpu = 0;
    std::int64_t region_device = 0;
    for (; next < by_run.size() && aggregates_[by_run[next]].run == r; ++next) {
      const aggregate& a = aggregates_[by_run[next]];
      region_aggregate out;
      out.region = result_index[a.region];
      out.calls = a.calls;
      out.cpu_time_ns = a.cpu;
      if (device_data_) out.device_time_ns = a.device;
      if (a.off_thread) out.off_thread_cpu_time_ns = a.off_cpu;
      region_cpu += a.cpu;
      region_device += a.device;
      run.regions.push_back(out);
    }
    run.residual_cpu_ns = std::max<std::int64_t>(0, run.cpu_time_ns - region_cpu);
    if (device_data_) {
      run.device_time_ns = state.device;
      run.device_busy_ns = state.busy;
      run.device_span_ns = state.ops == 0 ? 0 : state.last_op - state.first_op;
      run.residual_device_ns = std::max<std::int64_t>(0, state.device - region_device);
    }
    result.runs.push_back(std::move(run));
  }

  // Key averages (rule 10): one row per (name, device type) seen in a run.
  std::vector<key_average_row> rows;
  for (std::size_t name = 0; name < cpu_keys_.size(); ++name) {
    const cpu_key_stats& s = cpu_keys_[name];
    if (s.count == 0) continue;
    key_average_row row;
    row.key = std::string(in_.strings.view(static_cast<name_id>(name)));
    row.type = device_type::cpu;
    row.count = s.count;
    row.self_cpu_time_ns = s.self_cpu;
    row.cpu_time_total_ns = s.total_cpu;
    if (device_data_) {
      row.self_device_time_ns = s.self_device;
      row.device_time_total_ns = s.total_device;
    }
    rows.push_back(std::move(row));
  }
  for (std::size_t name = 0; name < device_keys_.size(); ++name) {
    const device_key_stats& s = device_keys_[name];
    if (s.count == 0) continue;
    key_average_row row;
    row.key = std::string(in_.strings.view(static_cast<name_id>(name)));
    row.type = device_type::cuda;
    row.count = s.count;
    row.self_device_time_ns = s.total;
    row.device_time_total_ns = s.total;
    rows.push_back(std::move(row));
  }
  auto view = [&](const char* sort_by, auto metric) {
    key_average_view v;
    v.sort_by = sort_by;
    v.row_limit = options_.row_limit;
    std::vector<const key_average_row*> sorted;
    sorted.reserve(rows.size());
    for (const key_average_row& row : rows) sorted.push_back(&row);
    std::sort(sorted.begin(), sorted.end(), [&](const key_average_row* a, const key_average_row* b) {
      const std::int64_t ma = metric(*a);
      const std::int64_t mb = metric(*b);
      if (ma != mb) return ma > mb;
      if (a->key != b->key) return a->key < b->key;
      return a->type < b->type;
    });
    if (sorted.size() > options_.row_limit) sorted.resize(options_.row_limit);
    for (const key_average_row* row : sorted) v.rows.push_back(*row);
    return v;
  };
  result.cpu_time_total = view("cpu_time_total", [](const key_average_row& r) { return r.cpu_time_total_ns; });
  if (device_data_) {
    result.device_time_total =
        view("device_time_total", [](const key_average_row& r) { return r.device_time_total_ns.value_or(0); });
  }

  add_warnings(result);
  return result;
}

void engine::add_warnings(analysis_result& result) const {
  result.warnings = in_.warnings;
  auto warn = [&](warning_code code, std::string message) {
    result.warnings.push_back({code, warning_source::core, std::move(message)});
  };
  const std::string marker_rule = classes_.marker_description();
  if (marker_threads_.empty()) {
    if (in_.intervals.empty()) {
      warn(warning_code::no_run_markers,
           "no run marker (" + marker_rule + ") and no CPU interval in the trace: nothing to attribute, 0 runs. "
           "Record the CPU side (NVTX ranges or CPU ops) and mark each measured run.");
    } else {
      const run_state& r = runs_.front();
      warn(warning_code::no_run_markers,
           "no range matched the run marker rule (" + marker_rule + ") among " +
               std::to_string(in_.intervals.size()) +
               " CPU intervals; the whole trace is analysed as 1 synthetic run spanning " +
               thread_label(in_, r.thread) + " from its first interval's start to its last interval's end (" +
               std::to_string(r.end - r.start) +
               " ns). Mark each measured run with that range, or set the run marker rule to your trace's step "
               "name (e.g. regex 'ProfilerStep#\\d+').");
    }
  }
  if (nested_markers_ > 0) {
    warn(warning_code::run_count_mismatch,
         std::to_string(nested_markers_) + " run marker(s) (" + marker_rule +
             ") lie inside another run marker on the same thread and are not runs of their own (their time "
             "belongs to the enclosing run); " + std::to_string(runs_.size()) +
             " run(s) were found. Emit run markers at the top level only, once per measured run.");
  }
  if (marker_count_ > 0 && runs_.empty()) {
    warn(warning_code::run_count_mismatch,
         std::to_string(marker_count_) + " run marker(s) found but skip_runs = " + std::to_string(options_.skip_runs) +
             " discards all of them: no run is measured. Lower skip_runs or record more runs.");
  }
  if (!in_.run_wall_times_ns.empty() && in_.run_wall_times_ns.size() != runs_.size()) {
    warn(warning_code::run_count_mismatch,
         "the trace carries " + std::to_string(in_.run_wall_times_ns.size()) + " harness wall time(s) but " +
             std::to_string(runs_.size()) + " run(s) were found from run markers (" + marker_rule +
             ", skip_runs = " + std::to_string(options_.skip_runs) +
             "); wall times are matched to runs in order and a run without one reports its marker's duration. "
             "Check skip_runs and that each measured run emits exactly one marker.");
  }
  if (overlaps_ > 0) {
    warn(warning_code::overlapping_ranges,
         std::to_string(overlaps_) + " CPU interval(s) started inside another interval on the same thread but "
             "ended after it (e.g. " + overlap_example_ +
             "); each was clipped to end with the enclosing interval, so its CPU time is lower than recorded. "
             "Check for ranges that are not properly nested (asynchronous ranges, push/pop on different threads).");
  }
  if (!unmapped_by_kind_.empty()) {
    std::uint64_t total = 0;
    std::string kinds;
    for (const auto& [kind, count] : unmapped_by_kind_) {
      total += count;
      kinds += (kinds.empty() ? "" : ", ") + kind + ": " + std::to_string(count);
    }
    warn(warning_code::unmapped_region_events,
         std::to_string(total) + " region range(s) have no run marker above them and are not attributed (" +
             kinds + "). Emit regions inside the measured runs' markers (" + marker_rule +
             "), or set the run marker rule to the range that marks your runs.");
  }
  if (off_thread_intervals_ + off_thread_ops_ > 0) {
    std::string threads;
    for (std::size_t i = 0; i < off_threads_.size() && i < 8; ++i) {
      threads += (i ? ", " : "") + thread_label(in_, off_threads_[i]);
    }
    if (off_threads_.size() > 8) threads += ", ...";
    warn(warning_code::off_thread_events,
         std::to_string(off_thread_intervals_) + " CPU interval(s) and " + std::to_string(off_thread_ops_) +
             " device op(s) they launched run on threads without a run marker above them (" + threads +
             ") inside a run's marker interval on another thread, and are not attributed. Enable cross_thread "
             "to attribute them to that run.");
  }
  if (uncorrelated_zero_ + uncorrelated_unmatched_ > 0) {
    warn(warning_code::uncorrelated_device_ops,
         std::to_string(uncorrelated_zero_ + uncorrelated_unmatched_) + " device op(s) (" +
             std::to_string(uncorrelated_time_) + " ns of device time) have no launching API call in the trace (" +
             std::to_string(uncorrelated_zero_) + " without a correlation id, " +
             std::to_string(uncorrelated_unmatched_) +
             " whose id no API call carries) and belong to no run. Record the CUDA runtime and driver API "
             "together with the device activity.");
  }
  if (clock_anomalies_ > 0) {
    warn(warning_code::clock_anomaly,
         std::to_string(clock_anomalies_) + " device op(s) start before the API call that launched them (by up "
             "to " + std::to_string(clock_anomaly_max_) +
             " ns): the CPU and device clocks disagree. Attribution by correlation id is unaffected, but "
             "timelines and spans are skewed; record CPU and device timestamps on one clock.");
  }
}

}  // namespace

analysis_result analyze(const trace& input, const analysis_options& options) {
  // Interval and op indices are 32-bit (4 bytes per event of analysis state).
  if (input.intervals.size() >= no_index - 2 || input.device_ops.size() >= no_index - 2) {
    throw std::length_error("regionprof::analyze: " + std::to_string(input.intervals.size()) + " CPU intervals and " +
                            std::to_string(input.device_ops.size()) +
                            " device ops; one analysis handles fewer than 2^32 - 3 of each. Split the trace.");
  }
  engine e(input, options);
  return e.run();
}

}  // namespace regionprof
