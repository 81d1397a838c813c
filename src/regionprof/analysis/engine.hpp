// The attribution engine's shared state: docs/design.md, rules 1-15, 18, 20 and 21.
//
// Passes (n intervals, m device ops; every pass is linear, none allocates per event):
//   1. classify names (name_classifier, once per distinct name and domain), find the threads that hold
//      run markers (run_markers.cpp);
//   2. order each thread's intervals (thread_order: linear when already ordered, else a radix sort);
//   3. sum each launch's device time by correlation slot (needed by the key averages' subtree totals),
//      count uncorrelated ops and clock anomalies (device_ops.cpp);
//   4. walk each thread once with a stack (rule 1), marker threads first: run ownership (2, 9), topmost
//      regions (3-5), key averages (10: each op's under its owner, rule 20) and each launch's owner (run,
//      region) per correlation slot (thread_walk.cpp);
//      and, with analysis_options::region_tree, each region instance's tree node (rule 14);
//      and each memory event's owner at its instant (21: the thread's events, ordered once, merged into its walk);
//   5. give each device op to its launch's owner (6) and its row among that owner's ops (20), union and
//      span per run (device_ops.cpp), then assemble the result (assemble.cpp, key_averages.cpp: the
//      key averages and the ops per region, warnings.cpp).
// After the walks: off-thread launches and memory events outside a region resolved (rule 9), the memory
// peaks over the topmost instances' and the runs' spans (memory.cpp).
// Per-event state: the per-thread order (4 B per interval), the stack (depth only), and per correlation
// slot 20 B (interval index, device time, owning run, owning aggregate). Per run: 24 B (run_state), plus
// 72 B with device ops (run_device_state), plus a run_side once cross_thread or the region tree needs
// one, plus a marker_span (32 B) and its prefix maximum (8 B) when other threads may need rule 9's lookup. The region tree adds per
// (run, path) node one tree_stats (56 B) and its run's path -> node entry (12 B in a table at most half
// full), per distinct path 16 B (at most region_tree_max_nodes nodes), nothing per plain event; with
// cross_thread, one region_instance per nested region instance too. Ops per region (rule 20): 48 B per
// distinct (owner, name, type) and its table entry, 32 B per name for the two-entry caches. Memory (rule
// 21), only with memory events: 4 B per event (their order), per (owner, device) one entry, and with
// totals 16 B per event with a total and 24 B per topmost region instance for the peaks.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "regionprof/analysis/analysis.hpp"
#include "regionprof/analysis/correlation_index.hpp"
#include "regionprof/analysis/name_classifier.hpp"
#include "regionprof/analysis/thread_order.hpp"
#include "regionprof/analysis/typed_index.hpp"

namespace regionprof::detail::attribution {

/// Key of the synthetic run's base frame, which is no event.
inline constexpr name_id no_key = static_cast<name_id>(-1);
/// engine::synthetic_thread_ when there is no synthetic run.
inline constexpr std::uint32_t no_thread = static_cast<std::uint32_t>(-1);

inline constexpr std::int64_t max_ns = std::numeric_limits<std::int64_t>::max();
inline constexpr std::int64_t min_ns = std::numeric_limits<std::int64_t>::min();

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

/// A topmost run marker: [start, end] ns on `thread`; `run` is its run index or no_run::skipped.
struct marker_span {
  std::int64_t start = 0;
  std::int64_t end = 0;
  std::uint32_t thread = 0;
  std::uint32_t ordinal = 0;  ///< its rank among its thread's topmost markers, in walk order
  run_index run;
};

/// Which run's marker interval contains a time, looking only at markers of other threads (rule 9).
class run_lookup {
 public:
  void build(std::vector<marker_span> markers);
  bool empty() const noexcept { return markers_.empty(); }
  /// The run (index or no_run::skipped) of the latest-starting marker on a thread other than `thread`
  /// whose closed interval contains `time` (ns), or no_run::none.
  run_index find(std::uint32_t thread, std::int64_t time) const noexcept {
    auto after = std::upper_bound(markers_.begin(), markers_.end(), time,
                                  [](std::int64_t t, const marker_span& m) { return t < m.start; });
    for (auto i = static_cast<std::size_t>(after - markers_.begin()); i-- > 0 && max_end_[i] >= time;) {
      if (markers_[i].end >= time && markers_[i].thread != thread) return markers_[i].run;
    }
    return no_run::none;
  }

 private:
  std::vector<marker_span> markers_;   ///< by start, ties in discovery order
  std::vector<std::int64_t> max_end_;  ///< prefix maximum of the ends: stops the backward scan early
};

/// Key averages of one name on the CPU (rule 10), ns.
struct cpu_key_stats {
  std::uint64_t count = 0;
  std::int64_t self_cpu = 0;
  std::int64_t total_cpu = 0;
  std::int64_t self_device = 0;
  std::int64_t total_device = 0;
  std::uint64_t self_allocated = 0;   ///< bytes (rule 21)
  std::uint64_t total_allocated = 0;  ///< bytes
};

/// Key averages of one name on the CPU or the device within one owner: a region (classifier region
/// index) or the runs' residual (rule 20). CUDA entries keep only count and total_device.
struct region_op_stats {
  std::uint32_t owner = 0;  ///< classifier region index, or engine::residual_owner()
  name_id name = 0;
  device_type type = device_type::cpu;
  cpu_key_stats stats;
};

/// A key-average row before it is made: its name, type and figures (CUDA: count and total_device). The
/// views sort these and make only the rows they keep, so a long name is copied once per row kept.
struct row_source {
  name_id name = 0;
  device_type type = device_type::cpu;
  const cpu_key_stats* stats = nullptr;
};

/// The region op entries of the two owners a name had last (engine::region_op()), the latest first: a
/// name that alternates between a region and the residual (every few tasks of a worker) still hits.
struct op_cache_entry {
  static constexpr std::uint32_t no_owner = static_cast<std::uint32_t>(-1);
  std::uint32_t owner[2] = {no_owner, no_owner};
  region_op_index entry[2];
};

/// One region's totals in one run, ns.
struct aggregate {
  run_index run = run_index::at(0);  ///< always an index
  std::uint32_t region = 0;          ///< classifier region index
  std::uint64_t calls = 0;
  std::int64_t cpu = 0;
  std::int64_t device = 0;
  std::int64_t off_cpu = 0;
  bool off_thread = false;
  std::int64_t first_seen = max_ns;  ///< earliest start of an owning instance
  tree_node_index tree_root;         ///< the topmost tree node of this (run, region); none: tree off
};

/// One (run, path) node of the region tree (docs/design.md, rule 14), ns. Inclusive device and both
/// self times are derived in assemble(); a node's parent is always created before it.
struct tree_stats {
  tree_node_index parent;    ///< none for a topmost node
  std::uint32_t region = 0;  ///< classifier region index
  tree_path_index path;      ///< its path among all runs' distinct paths
  run_index run;             ///< always an index
  tree_node_index first_child;   ///< the children as a list, the latest created first
  tree_node_index next_sibling;  ///< the child of `parent` created before this one
  std::uint64_t calls = 0;   ///< instances on the marker's thread
  std::int64_t cpu = 0;      ///< inclusive: their clipped durations
  std::int64_t self_device = 0;  ///< launched while this node was the innermost open region
  std::int64_t first_seen = max_ns;  ///< earliest start of an instance (on or off the marker's thread)
};

/// One distinct path of region ids (all runs together): its parent path and last region. Few (as many as
/// a run's distinct nestings, not runs x nestings), so their lookups stay in cache.
struct tree_path_entry {
  tree_path_index parent;  ///< none for a path of one region
  std::uint32_t region = 0;
  std::uint32_t depth = 0;  ///< 0 for a path of one region (path length - 1)
  // One-entry cache of engine::child_node(): the child path looked up last.
  std::uint32_t last_child_region = static_cast<std::uint32_t>(-1);
  tree_path_index last_child;
};

/// A 64-bit key -> typed index map: open addressing with linear probing in a power-of-two table at most
/// half full; two flat arrays, no allocation per entry. Keys never equal ~0 (callers' keys hold an index
/// below first_state_value in their high or low 32 bits).
template <typename Index>
class flat_index_map {
 public:
  /// The index stored under `key`, or the none state.
  Index find(std::uint64_t key) const noexcept {
    if (keys_.empty()) return Index::states::none;
    for (std::size_t at = slot(key);; at = (at + 1) & mask_) {
      if (keys_[at] == key) return values_[at];
      if (keys_[at] == empty_key) return Index::states::none;
    }
  }
  std::size_t size() const noexcept { return size_; }
  /// Room for `count` entries without growing; only while empty (a hint, e.g. the previous run's size).
  void reserve(std::size_t count) {
    if (size_ != 0 || 2 * count <= keys_.size()) return;
    std::size_t capacity = 16;
    while (capacity < 2 * count) capacity *= 2;
    keys_.assign(capacity, empty_key);
    values_.assign(capacity, Index::states::none);
    set_capacity(capacity);
  }
  /// Precondition: find(key) is none.
  void insert(std::uint64_t key, Index value) {
    if (2 * (size_ + 1) > keys_.size()) grow();
    std::size_t at = slot(key);
    while (keys_[at] != empty_key) at = (at + 1) & mask_;
    keys_[at] = key;
    values_[at] = value;
    ++size_;
  }

 private:
  static constexpr std::uint64_t empty_key = ~std::uint64_t{0};
  std::size_t slot(std::uint64_t key) const noexcept {
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_) & mask_;
  }
  void grow() {
    std::vector<std::uint64_t> old_keys = std::move(keys_);
    std::vector<Index> old_values = std::move(values_);
    const std::size_t capacity = old_keys.empty() ? 16 : 2 * old_keys.size();
    keys_.assign(capacity, empty_key);
    values_.assign(capacity, Index::states::none);
    set_capacity(capacity);
    size_ = 0;
    for (std::size_t i = 0; i < old_keys.size(); ++i) {
      if (old_keys[i] != empty_key) insert(old_keys[i], old_values[i]);
    }
  }

  void set_capacity(std::size_t capacity) noexcept {
    mask_ = capacity - 1;
    shift_ = 64;
    for (std::size_t c = capacity; c > 1; c >>= 1) --shift_;  // the product's top log2(capacity) bits
  }

  std::vector<std::uint64_t> keys_;
  std::vector<Index> values_;
  std::size_t size_ = 0;
  std::size_t mask_ = 0;
  unsigned shift_ = 64;
};

inline constexpr std::uint32_t no_instance = static_cast<std::uint32_t>(-1);

/// An off-thread launch outside any region of its thread (rule 9), resolved after all walks: its slot,
/// its call's start and the slot's device time (ns), kept so that resolve_pending() reads neither the
/// interval nor the slot again.
struct pending_launch {
  std::uint32_t slot = 0;
  std::int64_t start = 0;
  std::int64_t device = 0;
};

/// A region instance on the marker's thread (rule 9's "region open at that moment"), ns: the topmost
/// ones, and with the region tree the nested ones too, in start order.
struct region_instance {
  std::int64_t start = 0;
  std::int64_t end = 0;
  aggregate_index aggregate;  ///< always an index: the topmost region's
  tree_node_index node;       ///< its tree node (none: tree off)
  std::uint32_t parent = no_instance;  ///< the enclosing region instance in the same vector, or none
};

/// A memory event outside any region of its thread, inside another thread's run with cross_thread
/// (rule 21, as rule 9's launches): resolved after all walks.
struct pending_memory {
  std::uint32_t event = 0;  ///< index into trace::memory_events
  std::int64_t time = 0;    ///< ns
};

/// The innermost of `instances` (start order, nesting through `parent`) open at `time` (closed
/// intervals), or no_instance. `cursor` carries the search from one call to the next: times that come in
/// order gallop forward from the previous one's instance.
std::uint32_t open_instance(const std::vector<region_instance>& instances, std::int64_t time, std::size_t& cursor);

/// One owner's memory on one device (rule 21): a region aggregate's, a run's residual's, or a run's peak.
struct memory_entry {
  std::uint64_t key = 0;  ///< memory_key(owner code, device)
  device_memory figures;
};

/// The key of (owner code, device): ordered by owner, then device ascending (`cpu` first).
inline std::uint64_t memory_key(std::uint64_t code, memory_device device) noexcept {
  return (code << 16) | static_cast<std::uint16_t>(device + 1);
}

/// One run: its marker interval (or the synthetic run's span), ns, and its thread. Everything else a run
/// may need lives beside runs_, made only when the trace needs it (run_device_state, run_side): a trace
/// of nothing but short runs costs 24 B per run here (docs/design.md, rule 13).
struct run_state {
  std::int64_t start = 0;
  std::int64_t end = 0;
  std::uint32_t thread = 0;
};

inline run_state new_run(std::int64_t start, std::int64_t end, std::uint32_t thread) { return {start, end, thread}; }

/// One run's device ops' totals, ns; one per run only when the trace has device ops (engine::run_devices_).
struct run_device_state {
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
};

/// A run's state for cross-thread attribution and the region tree; one per run only once some run needs
/// one (engine::side_of()).
struct run_side {
  std::vector<region_instance> instances;  ///< cross_thread only, in start order
  /// Off-thread launches outside any region of their thread, in walk order (rule 9), until
  /// resolve_pending(): kept per run so that its lookups stay in this run's instances.
  std::vector<pending_launch> pending;
  std::vector<pending_memory> pending_memory_events;  ///< rule 21: memory events as `pending`'s launches
  flat_index_map<tree_node_index> tree_nodes;  ///< region tree: path index -> this run's nested node
};

/// A device op's duration, ns; 0 when it ends before it starts.
inline std::int64_t duration(const device_op& op) noexcept {
  return op.end_ns > op.start_ns ? op.end_ns - op.start_ns : 0;
}

/// `tid N 'name'` for messages.
std::string thread_label(const trace& input, std::uint32_t thread);

/// Tag: the engine may release its input's CPU intervals (analyze_releasing_intervals).
struct release_intervals_t {};

class engine {
 public:
  engine(const trace& input, const analysis_options& options)
      : in_(input), options_(options), classes_(input, options), correlation_(input.intervals) {
    index_declared_work();
  }

  /// run() releases `input`'s CPU intervals (the engine's own input, given non-const) once the passes
  /// that read them are done, before the result is assembled.
  engine(trace& input, const analysis_options& options, release_intervals_t)
      : engine(static_cast<const trace&>(input), options) {
    releasable_ = &input;
  }

  analysis_result run();

 private:
  name_id name_of(const cpu_interval& interval) const noexcept {
    return interval.name < in_.strings.size() ? interval.name : name_id{0};
  }
  std::uint32_t classify(const cpu_interval& interval) {
    if (interval.name >= in_.strings.size()) return no_class;
    return classes_.classify(interval);
  }

  // run_markers.cpp
  void find_marker_threads();
  void discover_markers();
  std::vector<std::uint32_t> walk_order();
  // thread_walk.cpp. walk() and pop() are templates only so that the frame type stays local to that file:
  // with internal linkage GCC 12 (-O2) inlines the per-event stack push, as it did with one file.
  void walk_threads(const std::vector<std::uint32_t>& order);
  template <typename Frame>
  void walk(std::uint32_t thread, std::vector<Frame>& stack);
  template <typename Frame>
  void pop(std::vector<Frame>& stack);
  aggregate_index begin_topmost_region(run_index run, ownership state, std::uint32_t region, std::int64_t start,
                                       std::int64_t end, std::uint32_t* instance, std::uint32_t interval);
  /// Rule 18: sorts trace::declared_work by interval into work_by_interval_ (nothing without it).
  void index_declared_work();
  /// Rule 18: adds the work declared by `interval` (a topmost region instance on the marker's thread) to
  /// the aggregate's work.
  void add_declared_work(aggregate_index index, std::uint32_t interval);
  // region_tree.cpp (rule 14)
  tree_node_index new_tree_node(run_index run, tree_node_index parent, std::uint32_t region, tree_path_index path);
  /// The path of one region, created when new.
  tree_path_index root_path(std::uint32_t region);
  /// The child of `parent` (a node of `run`) for `region`, created when new; none when the node cap
  /// refuses it.
  tree_node_index child_node(run_index run, tree_node_index parent, std::uint32_t region);
  void assemble_tree(analysis_result& result, const std::vector<aggregate_index>& by_run,
                     const std::vector<std::uint32_t>& result_index);
  aggregate_index aggregate_of(run_index run, std::uint32_t region);
  /// `run`'s side state. The first call makes one for every run so far, and later runs get theirs as they
  /// need one; a reference stays valid until the next call.
  run_side& side_of(run_index run) {
    if (run.index() >= run_sides_.size()) run_sides_.resize(std::max(runs_.size(), std::size_t{run.index()} + 1));
    return run_sides_[run.index()];
  }
  // device_ops.cpp
  void sum_launches();
  void resolve_pending();
  void attribute_device_ops();
  void finish_unordered_unions();
  // graph_capture.cpp (rule 15)
  void resolve_captures();
  /// Device time of slot's ops that go to their capture-time region, ns: the launch's tree node gives
  /// it up (the launch's aggregate never receives it).
  std::int64_t captured_device(std::uint32_t slot) const noexcept {
    return slot_captured_.empty() ? 0 : slot_captured_[slot];
  }
  /// The capture-time owner of op `op` in `run` (rule 15): its aggregate (none: captured outside every
  /// region) and innermost tree node; false when the op goes by its launch.
  bool capture_owner(std::uint32_t op, run_index run, aggregate_index& owner, tree_node_index& node);
  // memory.cpp (rule 21)
  bool has_memory_events(std::uint32_t thread) const noexcept {
    return !memory_order_.empty() && memory_thread_begin_[thread] != memory_thread_begin_[thread + 1];
  }
  /// Orders the memory events by (thread, time, input order) and notes whether peaks are needed.
  void order_memory_events();
  /// The owner of memory event `event` at its instant on `thread`, from the innermost open interval's
  /// ownership (`state`, `run`, `aggregate`; ownership::none when no interval is open or it is in no run).
  void place_memory_event(std::uint32_t event, std::uint32_t thread, ownership state, run_index run,
                          aggregate_index aggregate, bool lookups);
  /// Adds `event` to `aggregate` (an index), or when none to `run`'s residual.
  void own_memory_event(std::uint32_t event, run_index run, aggregate_index aggregate);
  memory_entry& memory_entry_of(std::uint64_t code, memory_device device);
  /// The peaks of the region aggregates (their topmost spans) and the runs (their marker spans), and the
  /// charted runs' timelines (memory_timelines_).
  void add_memory_peaks();
  /// The figures of one owner code, by device; empty when it has none.
  memory_figures memory_figures_of(const std::vector<std::pair<std::uint64_t, std::uint32_t>>& sorted,
                                   std::uint64_t code) const;
  /// Each run's, residual's and region aggregate's memory figures, and the timelines, into `result` (after
  /// the runs and regions are; `result_index`: per classifier region, its index in result.regions).
  void assemble_memory(analysis_result& result, const std::vector<aggregate_index>& by_run,
                       const std::vector<std::uint32_t>& result_index);
  // device_split.cpp
  void add_device_figures(analysis_result& result) const;
  // key_averages.cpp: ops per region (rule 20)
  /// The owner of the residual: one past the classifier's regions.
  std::uint32_t residual_owner() const noexcept { return static_cast<std::uint32_t>(classes_.regions().size()); }
  /// `owner`'s entry for (name, type), created when new: a two-entry cache per name, then a table.
  region_op_index region_op(std::uint32_t owner, name_id name, device_type type) {
    op_cache_entry& last = (type == device_type::cpu ? last_cpu_op_ : last_device_op_)[name];
    return last.owner[0] == owner ? last.entry[0] : region_op_lookup(last, owner, name, type);
  }
  region_op_index region_op_lookup(op_cache_entry& last, std::uint32_t owner, name_id name, device_type type);
  void add_region_ops(analysis_result& result, const std::vector<std::uint32_t>& result_index) const;
  /// Where an owned interval's figures go (rule 10): its op entry, else its name's.
  cpu_key_stats& stats_of(region_op_index op, name_id key) noexcept {
    return op.is_index() ? region_ops_[op].stats : cpu_keys_[key];
  }
  /// At most `limit` rows of `sources`: descending by `metric`, then ascending by key, then CPU before
  /// CUDA (rule 10); only those rows are made (key_averages.cpp).
  template <typename Metric>
  std::vector<key_average_row> first_rows(std::vector<row_source> sources, Metric metric, std::size_t limit) const;
  /// Rule 10's rows of one name: a CPU row (device fields iff device data) and a CUDA row.
  key_average_row cpu_row(name_id name, const cpu_key_stats& stats) const;
  key_average_row device_row(name_id name, std::uint64_t count, std::int64_t total) const;
  // assemble.cpp, key_averages.cpp, warnings.cpp
  analysis_result assemble();
  /// Folds the ops' figures into cpu_keys_: after add_region_ops().
  void add_key_averages(analysis_result& result);
  void add_warnings(analysis_result& result) const;

  const trace& in_;
  trace* releasable_ = nullptr;  ///< in_, when run() may release its intervals
  std::size_t interval_count_ = 0;  ///< in_.intervals.size(), kept past their release (warnings)
  const analysis_options& options_;
  name_classifier classes_;
  correlation_index correlation_;
  thread_order order_;
  bool device_data_ = false;

  // Threads and runs.
  std::size_t thread_count_ = 0;
  std::vector<std::uint32_t> marker_threads_;  ///< threads holding a marker-classified range, ascending
  std::vector<std::vector<run_index>> thread_runs_;  ///< per thread: runs of its topmost markers
  bool runs_known_ = false;  ///< thread_runs_ filled by discover_markers()
  std::uint32_t synthetic_thread_ = no_thread;  ///< the thread of the synthetic run (no markers at all)
  std::size_t marker_count_ = 0;           ///< topmost markers, skipped ones included
  std::size_t marker_intervals_ = 0;       ///< marker-classified intervals: at least the runs and markers
  index_vector<run_index, run_state> runs_;
  index_vector<run_index, run_device_state> run_devices_;  ///< one per run when the trace has device ops
  std::vector<run_side> run_sides_;  ///< empty, or one per run once some run needed one (side_of())
  std::vector<marker_span> markers_;  ///< topmost markers, until moved into lookup_
  bool keep_markers_ = true;          ///< some thread walked after the first may need lookup_ (rule 9)
  run_lookup lookup_;

  // Per correlation slot.
  std::vector<std::int64_t> slot_device_;  ///< ns
  std::vector<run_index> slot_run_;        ///< a run, no_run::off_thread, or no_run::none
  std::vector<aggregate_index> slot_aggregate_;  ///< no_aggregate::pending only until resolve_pending()
  bool any_pending_ = false;  ///< some run_side::pending is not empty

  // CUDA graph replays by capture (rule 15); all empty unless graph_attribution::capture finds captures.
  std::vector<std::int64_t> slot_captured_;       ///< per slot: device time going by capture, ns
  std::vector<std::uint32_t> op_capture_path_;    ///< per device op: index into capture_paths_, or none
  std::vector<std::pair<std::uint32_t, std::uint32_t>> capture_paths_;  ///< [begin, end) into capture_regions_
  std::vector<std::uint32_t> capture_regions_;    ///< the paths: classifier region indices, topmost first
  std::uint64_t uncaptured_graph_ops_ = 0;        ///< graph replay ops without capture information
  std::int64_t uncaptured_graph_time_ = 0;        ///< their device time, ns

  // Regions and key averages.
  index_vector<aggregate_index, aggregate> aggregates_;
  /// Rule 18: (interval, entry of trace::declared_work) by interval; empty without declared work.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> work_by_interval_;
  /// Rule 18: per aggregate index, the work its instances declared; sized only once some instance has work.
  std::vector<declared_work> aggregate_work_;
  std::vector<run_index> region_last_run_;              ///< per region: run of its last aggregate
  std::vector<aggregate_index> region_last_aggregate_;  ///< ... and that aggregate
  std::unordered_map<std::uint64_t, aggregate_index> aggregate_index_;  // (run, region), per aggregate
  /// Rule 10 of the intervals that are no op (run markers, region instances), by name; the ops' rows are
  /// region_ops_, summed over their owners when the key averages are assembled.
  std::vector<cpu_key_stats> cpu_keys_;

  // Ops per region (rule 20): per (owner, name, type) one entry; per name the entry used last on the CPU
  // and on the device, and (owner, name) -> entry per type.
  index_vector<region_op_index, region_op_stats> region_ops_;
  std::vector<op_cache_entry> last_cpu_op_;
  std::vector<op_cache_entry> last_device_op_;
  flat_index_map<region_op_index> cpu_op_entries_;
  flat_index_map<region_op_index> device_op_entries_;

  // The region tree (rule 14): nodes of all runs; the distinct paths, per region its one-region path,
  // and (parent path, region) -> child path. Each run maps path -> node (run_side::tree_nodes).
  index_vector<tree_node_index, tree_stats> tree_;
  index_vector<tree_path_index, tree_path_entry> tree_paths_;
  std::vector<tree_path_index> root_paths_;
  flat_index_map<tree_path_index> path_children_;
  std::uint64_t tree_truncated_ = 0;  ///< nested instances folded into their parent node by the cap

  // Memory (rule 21); all empty without memory events. Owner codes: 3 a (aggregate a), 3 r + 1 (run r's
  // residual), 3 r + 2 (run r's peak).
  std::vector<std::uint32_t> memory_order_;         ///< event indices by (thread, time, input order)
  std::vector<std::uint32_t> memory_thread_begin_;  ///< per thread, its first entry in memory_order_; one more
  bool memory_peaks_ = false;                       ///< some event carries its device's total
  /// Topmost region instances (on and off the marker's thread): (aggregate, start, end), for the peaks.
  struct topmost_span {
    aggregate_index aggregate;
    std::int64_t start = 0;
    std::int64_t end = 0;
  };
  std::vector<topmost_span> topmost_spans_;
  /// The charted runs' timelines, their spans' `region` a classifier region index until assemble_memory().
  std::vector<memory_timeline> memory_timelines_;
  std::vector<memory_entry> memory_entries_;
  std::unordered_map<std::uint64_t, std::uint32_t> memory_entry_index_;  ///< key -> memory_entries_ index
  std::uint64_t off_thread_memory_events_ = 0;
  std::uint64_t out_of_memory_events_ = 0;
  /// The earliest failed allocation a run owns: its event, run and aggregate (none: the residual).
  std::uint32_t first_out_of_memory_ = no_instance;
  run_index first_out_of_memory_run_;
  aggregate_index first_out_of_memory_owner_;

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
  std::int64_t uncorrelated_time_ = 0;  ///< ns
  std::uint64_t clock_anomalies_ = 0;
  std::int64_t clock_anomaly_max_ = 0;  ///< ns
};

}  // namespace regionprof::detail::attribution
