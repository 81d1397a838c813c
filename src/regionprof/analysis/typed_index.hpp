// Typed 32-bit indices of the attribution engine's tables (docs/design.md, rules 1-10).
#pragma once

#include <cstddef>
#include <concepts>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

namespace regionprof::detail {

/// Values from here up are states, never indices. One analysis holds fewer than 2^32 - 3 CPU intervals
/// and fewer than 2^32 - 3 device ops (analyze() checks), so every table index lies below.
inline constexpr std::uint32_t first_state_value = 0xFFFF'FFFDu;

/// A 32-bit index into one table, or one of that table's named states.
///
/// `States` is an `enum class : std::uint32_t` of the states, each at or above first_state_value, one of
/// them `none` (the default). Each table has its own `States`, so the indices of two tables are two types:
/// neither converts to, compares with or subscripts as the other. Size and cost: one std::uint32_t.
template <typename States>
class typed_index {
 public:
  using states = States;

  constexpr typed_index() noexcept = default;
  /// Implicit: a state is a value of the index (`run = no_run::skipped`, `run == no_run::none`).
  constexpr typed_index(States state) noexcept : value_(static_cast<std::uint32_t>(state)) {}
  /// Precondition: index < first_state_value.
  static constexpr typed_index at(std::size_t index) noexcept { return typed_index(static_cast<std::uint32_t>(index)); }

  constexpr bool is_index() const noexcept { return value_ < first_state_value; }
  /// Precondition: is_index().
  constexpr std::uint32_t index() const noexcept { return value_; }

  friend constexpr bool operator==(const typed_index&, const typed_index&) noexcept = default;

 private:
  constexpr explicit typed_index(std::uint32_t value) noexcept : value_(value) {}

  std::uint32_t value_ = static_cast<std::uint32_t>(States::none);
};

/// A std::vector subscripted only by its own typed index.
template <typename Index, typename T>
class index_vector {
 public:
  T& operator[](Index i) noexcept { return items_[i.index()]; }
  const T& operator[](Index i) const noexcept { return items_[i.index()]; }

  /// The index the next push_back() gets.
  Index next() const noexcept { return Index::at(items_.size()); }
  void push_back(T item) { items_.push_back(std::move(item)); }
  void assign(std::size_t count, const T& value) { items_.assign(count, value); }
  void reserve(std::size_t count) { items_.reserve(count); }

  std::size_t size() const noexcept { return items_.size(); }
  bool empty() const noexcept { return items_.empty(); }
  T& front() noexcept { return items_.front(); }
  const T& front() const noexcept { return items_.front(); }
  auto begin() noexcept { return items_.begin(); }
  auto end() noexcept { return items_.end(); }
  auto begin() const noexcept { return items_.begin(); }
  auto end() const noexcept { return items_.end(); }

 private:
  std::vector<T> items_;
};

/// The states of a run index (engine::runs_).
enum class no_run : std::uint32_t {
  off_thread = first_state_value,  ///< a launch's owner: off-thread work left unattributed (cross_thread off)
  skipped = first_state_value + 1,  ///< a marker discarded by skip_runs (a warm-up run): its contents belong to no run
  none = first_state_value + 2,     ///< no run
};
using run_index = typed_index<no_run>;

/// The states of an aggregate index (engine::aggregates_).
enum class no_aggregate : std::uint32_t {
  /// A launch's aggregate: an off-thread launch with no region of its own, resolved after all walks
  /// against the regions open on the marker's thread (rule 9).
  pending = first_state_value + 1,
  none = first_state_value + 2,  ///< no region: the run's residual
};
using aggregate_index = typed_index<no_aggregate>;

/// The states of a tree node index (engine::tree_, docs/design.md, rule 14).
enum class no_tree_node : std::uint32_t {
  none = first_state_value + 2,  ///< no node: no region open, or the tree is off
};
using tree_node_index = typed_index<no_tree_node>;

/// The states of a tree path index (engine::tree_paths_: the distinct paths of all runs, rule 14).
enum class no_tree_path : std::uint32_t {
  none = first_state_value + 2,  ///< no path
};
using tree_path_index = typed_index<no_tree_path>;

/// The states of a region op index (engine::region_ops_: one owner's stats of one name, rule 20).
enum class no_region_op : std::uint32_t {
  none = first_state_value + 2,  ///< no row: not an op of a run (a run marker, a region instance, no run)
};
using region_op_index = typed_index<no_region_op>;

// A run index and an aggregate index do not mix, and neither is made from a bare integer implicitly.
static_assert(sizeof(run_index) == sizeof(std::uint32_t) && std::is_trivially_copyable_v<run_index>);
static_assert(!std::is_convertible_v<run_index, aggregate_index> && !std::is_convertible_v<aggregate_index, run_index>);
static_assert(!std::is_constructible_v<run_index, no_aggregate> && !std::is_constructible_v<aggregate_index, no_run>);
static_assert(!std::equality_comparable_with<run_index, aggregate_index>);
static_assert(!std::equality_comparable_with<tree_node_index, aggregate_index>);
static_assert(!std::is_convertible_v<std::uint32_t, run_index> && !std::is_convertible_v<run_index, std::uint32_t>);
template <typename Table, typename Index>
concept subscripted_by = requires(Table& table, Index i) { table[i]; };
static_assert(subscripted_by<index_vector<aggregate_index, int>, aggregate_index>);
static_assert(!subscripted_by<index_vector<aggregate_index, int>, run_index>);
static_assert(!subscripted_by<index_vector<aggregate_index, int>, std::uint32_t>);

}  // namespace regionprof::detail
