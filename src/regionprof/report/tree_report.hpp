// The region tree in the reports (docs/report-schema.md: `runs[i].tree`, `tree_summary`, the Markdown
// "Region tree"; docs/design.md, rule 14). Kept apart from json_report.cpp and markdown_report.cpp,
// which call it with one line each.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <boost/json/array.hpp>

#include "regionprof/analysis/analysis.hpp"

namespace regionprof::report_detail {

/// One path of region ids across all runs (report `tree_summary[k]`). Medians are over all runs, a run
/// without the path counting as 0 (as in `region_summary`); ns, or calls.
struct tree_summary_node {
  std::vector<std::uint32_t> path;  ///< analysis_result::tree_regions indices, topmost first
  std::size_t runs_present = 0;
  double calls = 0.0;
  double cpu_ns = 0.0;
  double self_cpu_ns = 0.0;
  std::optional<double> device_ns;       ///< iff device data
  std::optional<double> self_device_ns;  ///< iff device data
};

/// Every path of every run's tree, depth-first: a path before its extensions, siblings in the order
/// they first appear (runs in order, each run's tree in its order). Empty without a tree or runs.
std::vector<tree_summary_node> summarize_tree(const analysis_result& result);

/// JSON `runs[i].tree`: the run's nodes in depth-first order.
boost::json::array tree_json(const run_result& run, const analysis_result& result);
/// JSON `tree_summary`.
boost::json::array tree_summary_json(const analysis_result& result);
/// The Markdown section "## Region tree" (nothing when the analysis has no tree).
void append_tree_markdown(std::string& out, const analysis_result& result);

}  // namespace regionprof::report_detail
