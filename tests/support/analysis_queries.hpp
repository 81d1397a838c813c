// Lookups into an analysis_result for tests: regions by id, key-average rows by key (warnings by code:
// warning_queries.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "regionprof/analysis/analysis.hpp"
#include "support/printing.hpp"
#include "support/warning_queries.hpp"  // find_warning, count_warnings, has_warning

namespace regionprof::test {

/// The run's aggregate of region `id`, or nullptr.
const region_aggregate* find_region(const analysis_result& result, const run_result& run, std::string_view id);
/// The region ids of a run's aggregates, in the run's order.
std::vector<std::string> region_ids(const analysis_result& result, const run_result& run);
/// The ids of analysis_result::regions, in order.
std::vector<std::string> region_ids(const analysis_result& result);
/// The number a warning message starts with (every count-carrying message does), or -1 when none.
std::int64_t leading_count(std::string_view message);
/// The row with (key, type), or nullptr.
const key_average_row* find_row(const key_average_view& view, std::string_view key, device_type type);
/// The keys of a view's rows, in order.
std::vector<std::string> row_keys(const key_average_view& view);

}  // namespace regionprof::test
