// The invariants of the region tree (docs/design.md, rule 14), checked on any analysis_result: by the
// analysis tests (hand-built and random traces) and the CLI tests (the shared real traces).
#pragma once

#include <string>
#include <vector>

#include "regionprof/analysis/analysis.hpp"

namespace regionprof::test {

/// Every violation found, one line each naming run and node; empty when all hold:
/// - the tree is depth-first (a parent before its children, each subtree contiguous), depth = parent's + 1,
///   no two siblings with one region (recursion is a deeper node, not a merge);
/// - per node: self = inclusive - sum of the children's inclusive, self >= 0, for CPU and device time;
///   device fields present iff the analysis has device data;
/// - the topmost nodes are the run's `regions`, in order, with equal calls, CPU and device time;
/// - tree_regions starts with `regions`.
std::vector<std::string> tree_violations(const analysis_result& result);

/// `kind:name/kind:name/...`: the path of run.tree[node] as text.
std::string path_text(const analysis_result& result, const run_result& run, std::size_t node);

}  // namespace regionprof::test
