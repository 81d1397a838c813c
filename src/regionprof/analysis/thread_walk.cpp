// One walk per thread with a stack (docs/design.md, rule 1): run ownership (rules 2, 9), topmost regions
// (rules 3-5), CPU key averages (rule 10), each launch's owner (run, aggregate) per correlation slot,
// each region instance's node of the region tree (rule 14), and each op's row among its region's ops
// (rule 20).
// Nothing allocates per plain event: the stack keeps its capacity across threads; only markers, new
// aggregates, region instances, pending slots and the first overlap's message append.
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "regionprof/analysis/engine.hpp"

namespace regionprof::detail::attribution {

namespace {

/// One open interval of a thread walk. `run` is a run index when owned(state), no_run::skipped when
/// state is skipped, else no_run::none. Internal linkage: see engine::walk() in engine.hpp.
struct frame {
  std::int64_t end = 0;     ///< clipped end, ns (rule 1)
  std::int64_t device = 0;  ///< device time launched from this subtree, ns (owned frames)
  run_index run;
  aggregate_index aggregate;  ///< the topmost region's aggregate in this run, or no_aggregate::none
  tree_node_index node;       ///< the innermost region's tree node (rule 14), or none
  std::uint32_t instance = no_instance;  ///< the innermost region's entry in run_side::instances
  name_id key = no_key;       ///< name id
  region_op_index op;         ///< its row among its owner's ops (rule 20), or none
  std::uint32_t owner = 0;    ///< rule 20: the topmost region's classifier index, or engine::residual_owner()
  ownership state = ownership::none;
  bool under_marker = false;  ///< this interval is a run marker or has one above it on this thread
};

}  // namespace

aggregate_index engine::aggregate_of(run_index run, std::uint32_t region) {
  if (region >= region_last_run_.size()) {
    region_last_run_.resize(region + 1, no_run::none);
    region_last_aggregate_.resize(region + 1, no_aggregate::none);
  }
  if (region_last_run_[region] == run) return region_last_aggregate_[region];
  const std::uint64_t key = (std::uint64_t{run.index()} << 32) | region;
  auto [it, added] = aggregate_index_.try_emplace(key, aggregates_.next());
  if (added) aggregates_.push_back({.run = run, .region = region});
  region_last_run_[region] = run;
  region_last_aggregate_[region] = it->second;
  return it->second;
}

void engine::index_declared_work() {
  if (in_.declared_work.empty()) return;
  work_by_interval_.reserve(in_.declared_work.size());
  for (std::size_t i = 0; i < in_.declared_work.size(); ++i) {
    work_by_interval_.emplace_back(in_.declared_work[i].interval, static_cast<std::uint32_t>(i));
  }
  std::sort(work_by_interval_.begin(), work_by_interval_.end());
}

void engine::add_declared_work(aggregate_index index, std::uint32_t interval) {
  auto at = std::lower_bound(work_by_interval_.begin(), work_by_interval_.end(), std::make_pair(interval, std::uint32_t{0}));
  for (; at != work_by_interval_.end() && at->first == interval; ++at) {
    if (aggregate_work_.size() <= index.index()) aggregate_work_.resize(index.index() + 1);
    aggregate_work_[index.index()] += in_.declared_work[at->second].work;
  }
}

// The aggregate of a topmost region instance [start, end] ns owned by `run` (owned(state)), and its
// topmost tree node (rule 14: the node counts what the aggregate counts). `*instance` becomes the
// instance's entry in run_side::instances when one is kept (on the marker's thread, cross_thread).
// `interval` (the instance's index in trace::intervals) brings its declared work (rule 18).
aggregate_index engine::begin_topmost_region(run_index run, ownership state, std::uint32_t region, std::int64_t start,
                                             std::int64_t end, std::uint32_t* instance, std::uint32_t interval) {
  const aggregate_index index = aggregate_of(run, region);
  aggregate& a = aggregates_[index];
  tree_stats* node = nullptr;
  if (options_.region_tree) {
    if (!a.tree_root.is_index()) a.tree_root = new_tree_node(run, no_tree_node::none, region, root_path(region));
    node = &tree_[a.tree_root];
    node->first_seen = std::min(node->first_seen, start);
  }
  if (memory_peaks_) topmost_spans_.push_back({index, start, end});  // rule 21
  if (state == ownership::on_thread) {
    ++a.calls;
    a.cpu += end - start;
    if (!work_by_interval_.empty()) add_declared_work(index, interval);  // rule 18
    if (node) {
      ++node->calls;
      node->cpu += end - start;
    }
    if (options_.cross_thread) {
      std::vector<region_instance>& instances = side_of(run).instances;
      *instance = static_cast<std::uint32_t>(instances.size());
      instances.push_back({start, end, index, a.tree_root, no_instance});
    }
  } else {
    a.off_cpu += end - start;
    a.off_thread = true;
  }
  a.first_seen = std::min(a.first_seen, start);
  return index;
}

template <typename Frame>
void engine::pop(std::vector<Frame>& stack) {
  const Frame done = stack.back();
  stack.pop_back();
  if (!owned(done.state) || done.key == no_key) return;
  stats_of(done.op, done.key).total_device += done.device;
  if (!stack.empty() && owned(stack.back().state) && stack.back().run == done.run) stack.back().device += done.device;
}

template <typename Frame>
void engine::walk(std::uint32_t thread, std::vector<Frame>& stack) {
  stack.clear();
  const bool synthetic = thread == synthetic_thread_;
  if (synthetic) {
    Frame base;
    base.end = max_ns;
    base.owner = residual_owner();
    base.run = run_index::at(0);
    base.state = ownership::on_thread;
    base.under_marker = true;
    stack.push_back(base);
  }
  // Only markers of other threads can make work here off-thread work (rule 9).
  const bool only_marker_thread = marker_threads_.size() == 1 && marker_threads_[0] == thread;
  const bool lookups = !synthetic && !only_marker_thread && !lookup_.empty();
  std::uint32_t ordinal = 0;
  run_index previous_run = no_run::none;  ///< the last run of this thread's topmost markers
  const std::vector<run_index>* known_runs = runs_known_ ? &thread_runs_[thread] : nullptr;
  // Rule 21: this thread's memory events in time order, each placed once every interval starting at or
  // before it is open and every interval ending before it is closed (closed intervals).
  const std::uint32_t* memory = nullptr;
  const std::uint32_t* memory_end = nullptr;
  if (!memory_order_.empty()) {
    memory = memory_order_.data() + memory_thread_begin_[thread];
    memory_end = memory_order_.data() + memory_thread_begin_[thread + 1];
  }
  const auto place_memory_before = [&](std::int64_t limit) {  // limit max_ns: every event left
    for (; memory != memory_end && (limit == max_ns || in_.memory_events[*memory].time_ns < limit); ++memory) {
      const std::int64_t time = in_.memory_events[*memory].time_ns;
      while (!stack.empty() && stack.back().end < time) pop(stack);
      const Frame* top = stack.empty() ? nullptr : &stack.back();
      if (top == nullptr) {
        place_memory_event(*memory, thread, ownership::none, no_run::none, no_aggregate::none, lookups);
        continue;
      }
      place_memory_event(*memory, thread, top->state, top->run, top->aggregate, lookups);
      // Rule 21's key-average bytes: an allocation is its innermost open interval's (self) and every
      // open interval's of that run (total).
      const memory_event& event = in_.memory_events[*memory];
      if (event.kind != memory_event_kind::allocation || !owned(top->state) || event.bytes <= 0) continue;
      const auto bytes = static_cast<std::uint64_t>(event.bytes);
      if (top->key != no_key) stats_of(top->op, top->key).self_allocated += bytes;
      for (const Frame& open : stack) {
        if (owned(open.state) && open.run == top->run && open.key != no_key) {
          stats_of(open.op, open.key).total_allocated += bytes;
        }
      }
    }
  };

  for (std::uint32_t index : order_.of(thread)) {
    const cpu_interval& interval = in_.intervals[index];
    const std::int64_t start = interval.start_ns;
    std::int64_t end = effective_end(interval);
    if (memory != memory_end) place_memory_before(start);
    while (!stack.empty()) {
      const Frame& top = stack.back();
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
    const Frame* parent = stack.empty() ? nullptr : &stack.back();
    Frame f;
    f.end = end;
    f.key = name_of(interval);
    f.owner = residual_owner();
    bool run_marker = false;

    if (cls == marker_class && !(parent && parent->under_marker)) {
      run_marker = true;
      // A topmost marker on this thread: a run of its own (rule 2), or a skipped warm-up run.
      run_index code;
      if (known_runs) {
        // discover_markers() found the same markers with the same walk: ordinal is in range.
        code = ordinal < known_runs->size() ? (*known_runs)[ordinal] : run_index{no_run::skipped};
      } else {
        code = ordinal < options_.skip_runs ? run_index{no_run::skipped} : run_index::at(ordinal - options_.skip_runs);
        if (code != no_run::skipped) runs_.push_back(new_run(start, end, thread));
        ++marker_count_;
        if (keep_markers_) markers_.push_back({start, end, thread, ordinal, code});
      }
      ++ordinal;
      if (code.is_index() && previous_run.is_index() && options_.region_tree) {
        // Runs repeat: size this run's tables as the previous one on this thread ended (rule 14).
        // Only once some run has side state: a trace without nested regions or cross_thread has none.
        if (previous_run.index() < run_sides_.size()) {
          const std::size_t nodes = run_sides_[previous_run.index()].tree_nodes.size();
          const std::size_t instances = run_sides_[previous_run.index()].instances.size();
          if (nodes > 0 || instances > 0) {
            run_side& r = side_of(code);
            r.tree_nodes.reserve(nodes);
            if (options_.cross_thread) r.instances.reserve(instances);
          }
        }
      }
      if (code.is_index()) previous_run = code;
      f.run = code;
      f.state = code == no_run::skipped ? ownership::skipped : ownership::on_thread;
      f.under_marker = true;
    } else if (parent && parent->state != ownership::none) {
      f.run = parent->run;
      f.state = parent->state;
      f.under_marker = parent->under_marker;
      f.aggregate = parent->aggregate;
      f.owner = parent->owner;
      f.node = parent->node;
      f.instance = parent->instance;
      if (cls == marker_class) ++nested_markers_;
      if (cls >= region_class && owned(f.state)) {
        if (f.aggregate == no_aggregate::none) {
          f.aggregate = begin_topmost_region(f.run, f.state, cls - region_class, start, end, &f.instance, index);
          f.node = aggregates_[f.aggregate].tree_root;
          f.owner = cls - region_class;
        } else if (f.node.is_index()) {
          // A region below a region: a deeper tree node (rule 14); the topmost aggregate is unchanged.
          const tree_node_index child = child_node(f.run, f.node, cls - region_class);
          if (child.is_index()) {  // else folded into f.node by the cap (REGION_TREE_TRUNCATED)
            tree_stats& n = tree_[child];
            n.first_seen = std::min(n.first_seen, start);
            if (f.state == ownership::on_thread) {
              ++n.calls;
              n.cpu += length;
              if (options_.cross_thread) {
                std::vector<region_instance>& instances = side_of(f.run).instances;
                const auto entry = static_cast<std::uint32_t>(instances.size());
                instances.push_back({start, end, f.aggregate, child, f.instance});
                f.instance = entry;
              }
            }
            f.node = child;
          }
        }
      }
      if (f.state == ownership::off_counted) ++off_thread_intervals_;
    } else {
      // No run above it on this thread: rule 9 decides by the marker intervals of other threads.
      const run_index code = lookups ? lookup_.find(thread, start) : run_index{no_run::none};
      if (code == no_run::none) {
        if (cls >= region_class) ++unmapped_by_kind_[classes_.regions()[cls - region_class].kind];
      } else if (code == no_run::skipped) {
        f.state = ownership::skipped;
      } else if (options_.cross_thread) {
        f.run = code;
        f.state = ownership::off_thread;
        if (cls >= region_class) {
          f.aggregate = begin_topmost_region(f.run, f.state, cls - region_class, start, end, &f.instance, index);
          f.node = aggregates_[f.aggregate].tree_root;
          f.owner = cls - region_class;
        }
      } else {
        f.state = ownership::off_counted;
        ++off_thread_intervals_;
        if (std::find(off_threads_.begin(), off_threads_.end(), thread) == off_threads_.end()) {
          off_threads_.push_back(thread);
        }
      }
    }

    if (owned(f.state)) {
      // Rule 20: an op of the topmost region that owns it, or of the residual; the run's marker and
      // region instances are no ops.
      if (cls < region_class && !run_marker) {
        f.op = region_op(f.owner, f.key, device_type::cpu);
      }
      cpu_key_stats& stats = stats_of(f.op, f.key);
      ++stats.count;
      stats.total_cpu += length;
      stats.self_cpu += length;
      if (parent && owned(parent->state) && parent->run == f.run && parent->key != no_key) {
        stats_of(parent->op, parent->key).self_cpu -= length;
      }
    }
    if (is_api_call(interval.kind) && f.state != ownership::none && f.state != ownership::skipped) {
      const std::uint32_t slot = correlation_.slot(interval.correlation_id);
      if (slot != correlation_index::none && correlation_.call(slot) == index) {
        if (f.state == ownership::off_counted) {
          slot_run_[slot] = no_run::off_thread;
        } else {
          f.device = slot_device_[slot];
          stats_of(f.op, f.key).self_device += f.device;
          // Rule 14: the innermost region, less what goes to capture-time regions (rule 15).
          if (f.node.is_index()) tree_[f.node].self_device += f.device - captured_device(slot);
          slot_run_[slot] = f.run;
          if (f.aggregate != no_aggregate::none) {
            slot_aggregate_[slot] = f.aggregate;
          } else if (f.state == ownership::off_thread) {
            slot_aggregate_[slot] = no_aggregate::pending;
            side_of(f.run).pending.push_back({slot, start, f.device});
            any_pending_ = true;
          }
        }
      }
    }
    stack.push_back(f);
  }
  if (memory != memory_end) place_memory_before(max_ns);  // the rest
  while (!stack.empty()) pop(stack);
}

// Marker threads first (`order`), then the others: the lookup of rule 9 needs every marker.
void engine::walk_threads(const std::vector<std::uint32_t>& order) {
  std::vector<frame> stack;  // capacity kept across threads
  // Which threads were walked: searching `order` per thread is quadratic with a marker on every thread.
  std::vector<bool> walked(thread_count_, false);
  if (!runs_known_ && !order.empty()) {
    // Rule 9's lookup serves only the threads walked after the first: without another thread that holds
    // intervals, the markers are not kept (32 B per run).
    keep_markers_ = false;
    for (std::uint32_t t = 0; t < thread_count_ && !keep_markers_; ++t) {
      keep_markers_ = t != order[0] && (!order_.of(t).empty() || has_memory_events(t));
    }
    if (keep_markers_) markers_.reserve(marker_intervals_ + markers_.size());
  }
  for (std::size_t w = 0; w < order.size(); ++w) {
    walk(order[w], stack);
    walked[order[w]] = true;
    if (w == 0 && !runs_known_ && keep_markers_) {
      lookup_.build(std::move(markers_));  // the only marker thread (or the synthetic run) is now known
    }
  }
  for (std::uint32_t t = 0; t < thread_count_; ++t) {
    if (!walked[t]) walk(t, stack);
  }
}

}  // namespace regionprof::detail::attribution
