// Memory per region (docs/design.md, rule 21): the events' order per thread, each event's owner (placed
// during its thread's walk, thread_walk.cpp), the sums per owner and device, the peaks over the topmost
// instances' and the runs' spans, and the figures of the result.
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "regionprof/analysis/engine.hpp"

namespace regionprof::detail::attribution {

namespace {

constexpr std::uint64_t aggregate_code(aggregate_index aggregate) noexcept {
  return 3 * std::uint64_t{aggregate.index()};
}
constexpr std::uint64_t residual_code(run_index run) noexcept { return 3 * std::uint64_t{run.index()} + 1; }
constexpr std::uint64_t run_peak_code(run_index run) noexcept { return 3 * std::uint64_t{run.index()} + 2; }

/// |bytes| as an unsigned count (exact for INT64_MIN too).
constexpr std::uint64_t magnitude(std::int64_t bytes) noexcept {
  return bytes < 0 ? std::uint64_t{0} - static_cast<std::uint64_t>(bytes) : static_cast<std::uint64_t>(bytes);
}

/// Range maximum over one device's totals in time order: a bottom-up segment tree, 2 n values.
class max_tree {
 public:
  explicit max_tree(std::vector<std::pair<std::int64_t, std::int64_t>> events)  // (time, total), any order
      : times_(events.size()), values_(2 * events.size()) {
    std::sort(events.begin(), events.end());
    const std::size_t n = events.size();
    for (std::size_t i = 0; i < n; ++i) {
      times_[i] = events[i].first;
      values_[n + i] = events[i].second;
    }
    for (std::size_t i = n; i-- > 1;) values_[i] = std::max(values_[2 * i], values_[2 * i + 1]);
  }

  /// The indices [first, last) (for time() and total(), in time order) of the events at times in
  /// [start, end] ns.
  std::pair<std::size_t, std::size_t> range(std::int64_t start, std::int64_t end) const noexcept {
    return {static_cast<std::size_t>(std::lower_bound(times_.begin(), times_.end(), start) - times_.begin()),
            static_cast<std::size_t>(std::upper_bound(times_.begin(), times_.end(), end) - times_.begin())};
  }
  std::int64_t time(std::size_t i) const noexcept { return times_[i]; }
  std::int64_t total(std::size_t i) const noexcept { return values_[times_.size() + i]; }

  /// The largest total of an event at a time in [start, end] ns, or false when none is.
  bool max_in(std::int64_t start, std::int64_t end, std::int64_t& out) const noexcept {
    const std::size_t n = times_.size();
    auto [lo, hi] = range(start, end);
    if (lo >= hi) return false;
    std::int64_t best = values_[n + lo];
    for (lo += n, hi += n; lo < hi; lo /= 2, hi /= 2) {
      if (lo & 1) best = std::max(best, values_[lo++]);
      if (hi & 1) best = std::max(best, values_[--hi]);
    }
    out = best;
    return true;
  }

 private:
  std::vector<std::int64_t> times_;
  std::vector<std::int64_t> values_;
};

/// Samples [first, last) of `tree` as one series of a run starting at `start` and ending at `end`, M4
/// downsampled to memory_timeline::max_memory_samples (analysis.hpp).
memory_series series_of(memory_device device, const max_tree& tree, std::size_t first, std::size_t last,
                        std::int64_t start, std::int64_t end) {
  memory_series series{.device = device, .samples = {}};
  const auto sample = [&](std::size_t i) { series.samples.push_back({tree.time(i) - start, tree.total(i)}); };
  if (last - first <= memory_timeline::max_memory_samples) {
    for (std::size_t i = first; i < last; ++i) sample(i);
    return series;
  }
  constexpr std::size_t buckets = memory_timeline::max_memory_samples / 4;
  // In doubles: a sample's bucket, floor(buckets * (time - start) / (end - start + 1)), in [0, buckets).
  const double per_ns = static_cast<double>(buckets) / (static_cast<double>(end) - static_cast<double>(start) + 1.0);
  const auto bucket_of = [&](std::size_t i) {
    const double at = (static_cast<double>(tree.time(i)) - static_cast<double>(start)) * per_ns;
    return std::min(static_cast<std::size_t>(std::max(at, 0.0)), buckets - 1);
  };
  for (std::size_t i = first; i < last;) {
    const std::size_t bucket = bucket_of(i);
    std::size_t low = i;
    std::size_t high = i;
    std::size_t j = i;
    for (; j < last && bucket_of(j) == bucket; ++j) {
      if (tree.total(j) < tree.total(low)) low = j;
      if (tree.total(j) > tree.total(high)) high = j;
    }
    std::size_t keep[] = {i, low, high, j - 1};
    std::sort(std::begin(keep), std::end(keep));
    for (std::size_t k = 0; k < 4; ++k) {
      if (k == 0 || keep[k] != keep[k - 1]) sample(keep[k]);
    }
    i = j;
  }
  return series;
}

/// Adds `d`'s four sums (and its peak, the larger) to `into`'s entry of its device, kept by device.
void add_figures(memory_figures& into, const device_memory& d) {
  auto at = std::lower_bound(into.begin(), into.end(), d.device,
                             [](const device_memory& m, memory_device device) { return m.device < device; });
  if (at == into.end() || at->device != d.device) at = into.insert(at, device_memory{.device = d.device});
  at->allocated_bytes += d.allocated_bytes;
  at->freed_bytes += d.freed_bytes;
  at->allocations += d.allocations;
  at->frees += d.frees;
  if (d.peak_allocated_bytes) {
    const std::int64_t peak = *d.peak_allocated_bytes;
    at->peak_allocated_bytes = std::max(at->peak_allocated_bytes.value_or(peak), peak);
  }
}

}  // namespace

void engine::order_memory_events() {
  const std::vector<memory_event>& events = in_.memory_events;
  if (events.empty()) return;
  memory_thread_begin_.assign(thread_count_ + 2, 0);
  for (const memory_event& e : events) {
    ++memory_thread_begin_[e.thread + 2];
    memory_peaks_ = memory_peaks_ || e.total_allocated != memory_event::no_total;
  }
  for (std::size_t t = 2; t < memory_thread_begin_.size(); ++t) memory_thread_begin_[t] += memory_thread_begin_[t - 1];
  memory_order_.resize(events.size());
  for (std::uint32_t i = 0; i < events.size(); ++i) memory_order_[memory_thread_begin_[events[i].thread + 1]++] = i;
  memory_thread_begin_.pop_back();  // now each thread's begin, and one past the last thread's end
  for (std::size_t t = 0; t + 1 < memory_thread_begin_.size(); ++t) {
    auto first = memory_order_.begin() + memory_thread_begin_[t];
    auto last = memory_order_.begin() + memory_thread_begin_[t + 1];
    auto by_time = [&](std::uint32_t a, std::uint32_t b) { return events[a].time_ns < events[b].time_ns; };
    if (!std::is_sorted(first, last, by_time)) std::stable_sort(first, last, by_time);
  }
}

void engine::place_memory_event(std::uint32_t event, std::uint32_t thread, ownership state, run_index run,
                                aggregate_index aggregate, bool lookups) {
  if (state == ownership::none) {
    // No interval of a run is open on this thread: rule 9 decides by the marker intervals of other threads.
    const run_index code = lookups ? lookup_.find(thread, in_.memory_events[event].time_ns) : run_index{no_run::none};
    if (!code.is_index()) return;  // in no run, or in a skipped one
    state = options_.cross_thread ? ownership::off_thread : ownership::off_counted;
    run = code;
    aggregate = no_aggregate::none;
  }
  if (state == ownership::off_counted) {
    ++off_thread_memory_events_;
    if (std::find(off_threads_.begin(), off_threads_.end(), thread) == off_threads_.end()) {
      off_threads_.push_back(thread);
    }
    return;
  }
  if (!owned(state)) return;  // a skipped run's
  if (state == ownership::off_thread && !aggregate.is_index()) {
    side_of(run).pending_memory_events.push_back({event, in_.memory_events[event].time_ns});  // resolve_pending()
    any_pending_ = true;
    return;
  }
  own_memory_event(event, run, aggregate);
}

memory_entry& engine::memory_entry_of(std::uint64_t code, memory_device device) {
  const std::uint64_t key = memory_key(code, device);
  auto [at, added] = memory_entry_index_.try_emplace(key, static_cast<std::uint32_t>(memory_entries_.size()));
  if (added) memory_entries_.push_back({key, device_memory{.device = device}});
  return memory_entries_[at->second];
}

void engine::own_memory_event(std::uint32_t event, run_index run, aggregate_index aggregate) {
  const memory_event& e = in_.memory_events[event];
  if (e.kind == memory_event_kind::out_of_memory) {
    ++out_of_memory_events_;
    if (first_out_of_memory_ == no_instance || e.time_ns < in_.memory_events[first_out_of_memory_].time_ns) {
      first_out_of_memory_ = event;
      first_out_of_memory_run_ = run;
      first_out_of_memory_owner_ = aggregate;
    }
    return;
  }
  const std::uint64_t code = aggregate.is_index() ? aggregate_code(aggregate) : residual_code(run);
  device_memory& d = memory_entry_of(code, e.device).figures;
  if (e.kind == memory_event_kind::allocation) {
    d.allocated_bytes += magnitude(e.bytes);
    ++d.allocations;
  } else {
    d.freed_bytes += magnitude(e.bytes);
    ++d.frees;
  }
}

void engine::add_memory_peaks() {
  if (!memory_peaks_) return;
  std::vector<std::pair<memory_device, max_tree>> trees;
  {
    // Each device's (time, total) in one pass over the events; devices are few.
    std::vector<std::pair<memory_device, std::vector<std::pair<std::int64_t, std::int64_t>>>> totals;
    for (const memory_event& e : in_.memory_events) {
      if (e.total_allocated == memory_event::no_total) continue;
      auto at = std::find_if(totals.begin(), totals.end(), [&e](const auto& d) { return d.first == e.device; });
      if (at == totals.end()) at = totals.insert(totals.end(), {e.device, {}});
      at->second.emplace_back(e.time_ns, e.total_allocated);
    }
    for (auto& [device, device_totals] : totals) trees.emplace_back(device, max_tree(std::move(device_totals)));
  }
  // Raises `code`'s peak per device to the largest total in [start, end]; returns the largest over the
  // devices, or nothing when no total falls in the span.
  const auto raise = [&](std::uint64_t code, std::int64_t start, std::int64_t end) {
    std::optional<std::int64_t> largest;
    for (const auto& [device, tree] : trees) {
      std::int64_t peak = 0;
      if (!tree.max_in(start, end, peak)) continue;
      std::optional<std::int64_t>& at = memory_entry_of(code, device).figures.peak_allocated_bytes;
      at = std::max(at.value_or(peak), peak);
      largest = std::max(largest.value_or(peak), peak);
    }
    return largest;
  };
  for (const topmost_span& span : topmost_spans_) raise(aggregate_code(span.aggregate), span.start, span.end);
  // The charted runs: the first with a sample, and the one holding the highest peak (the first of equals).
  constexpr std::size_t none = static_cast<std::size_t>(-1);
  std::size_t first_charted = none;
  std::size_t highest = none;
  std::int64_t highest_peak = 0;
  for (std::size_t r = 0; r < runs_.size(); ++r) {
    const run_state& run = runs_[run_index::at(r)];
    const std::optional<std::int64_t> peak = raise(run_peak_code(run_index::at(r)), run.start, run.end);
    if (!peak) continue;
    if (first_charted == none) first_charted = r;
    if (highest == none || *peak > highest_peak) {
      highest = r;
      highest_peak = *peak;
    }
  }
  for (std::size_t r : {first_charted, highest}) {
    if (r == none || (!memory_timelines_.empty() && memory_timelines_.back().run == r)) continue;
    const run_state& run = runs_[run_index::at(r)];
    memory_timeline& timeline = memory_timelines_.emplace_back();
    timeline.run = static_cast<std::uint32_t>(r);
    for (const auto& [device, tree] : trees) {
      const auto [first, last] = tree.range(run.start, run.end);
      if (first < last) timeline.series.push_back(series_of(device, tree, first, last, run.start, run.end));
    }
    std::sort(timeline.series.begin(), timeline.series.end(),
              [](const memory_series& a, const memory_series& b) { return a.device < b.device; });
    for (const topmost_span& span : topmost_spans_) {
      const aggregate& a = aggregates_[span.aggregate];
      if (a.run != run_index::at(r)) continue;
      timeline.spans.push_back({a.region, span.start - run.start, span.end - run.start});
    }
    std::stable_sort(timeline.spans.begin(), timeline.spans.end(), [](const region_span& a, const region_span& b) {
      return a.start_offset_ns < b.start_offset_ns;
    });
    if (timeline.spans.size() > memory_timeline::max_memory_spans) {
      timeline.spans_left_out = timeline.spans.size() - memory_timeline::max_memory_spans;
      timeline.spans.resize(memory_timeline::max_memory_spans);
    }
  }
  std::vector<topmost_span>().swap(topmost_spans_);
}

memory_figures engine::memory_figures_of(const std::vector<std::pair<std::uint64_t, std::uint32_t>>& sorted,
                                         std::uint64_t code) const {
  memory_figures figures;
  auto at = std::lower_bound(sorted.begin(), sorted.end(), std::make_pair(code << 16, std::uint32_t{0}));
  for (; at != sorted.end() && (at->first >> 16) == code; ++at) figures.push_back(memory_entries_[at->second].figures);
  return figures;
}

void engine::assemble_memory(analysis_result& result, const std::vector<aggregate_index>& by_run,
                             const std::vector<std::uint32_t>& result_index) {
  for (memory_timeline& timeline : memory_timelines_) {
    for (region_span& span : timeline.spans) span.region = result_index[span.region];
  }
  result.memory_timelines = std::move(memory_timelines_);
  if (memory_entries_.empty()) return;
  std::vector<std::pair<std::uint64_t, std::uint32_t>> sorted;  // (key, entry): by owner, then device
  sorted.reserve(memory_entries_.size());
  for (std::uint32_t i = 0; i < memory_entries_.size(); ++i) sorted.emplace_back(memory_entries_[i].key, i);
  std::sort(sorted.begin(), sorted.end());
  const auto keep = [&](memory_figures figures) {
    if (figures.empty()) return no_memory;
    result.memory.push_back(std::move(figures));
    return static_cast<std::uint32_t>(result.memory.size() - 1);
  };
  std::size_t next = 0;  // by_run is ordered by run, then first appearance, as the runs' regions are
  for (std::size_t r = 0; r < result.runs.size(); ++r) {
    run_result& run = result.runs[r];
    const run_index index = run_index::at(r);
    memory_figures total;
    for (region_aggregate& region : run.regions) {
      memory_figures figures = memory_figures_of(sorted, aggregate_code(by_run[next++]));
      for (device_memory d : figures) {
        d.peak_allocated_bytes.reset();  // the run's peak is over its own span, below
        add_figures(total, d);
      }
      region.memory = keep(std::move(figures));
    }
    memory_figures residual = memory_figures_of(sorted, residual_code(index));
    for (const device_memory& d : residual) add_figures(total, d);
    for (const device_memory& d : memory_figures_of(sorted, run_peak_code(index))) add_figures(total, d);
    if (result.run_memory.empty()) result.run_memory.resize(result.runs.size());
    result.run_memory[r] = {.run = keep(std::move(total)), .residual = keep(std::move(residual))};
  }
}

}  // namespace regionprof::detail::attribution
