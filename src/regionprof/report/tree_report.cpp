// The region tree in the JSON and Markdown reports (docs/report-schema.md; docs/design.md, rule 14).
#include "regionprof/json/microseconds.hpp"
#include "regionprof/report/tree_report.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <string_view>
#include <utility>

#include <boost/json/object.hpp>

#include "regionprof/json/json_text.hpp"
#include "regionprof/report/html_page.hpp"
#include "regionprof/report/report_common.hpp"
#include "regionprof/statistics/statistics.hpp"

namespace regionprof::report_detail {
namespace {

using html::fixed;

namespace json = boost::json;

/// Median of `values` (ns or counts) through the one statistics module (statistics/statistics.hpp).
double median(const std::vector<std::int64_t>& values) {
  const std::vector<double> as_double(values.begin(), values.end());  // exact below 2^53
  return stats::median(as_double);
}

json::array path_json(const std::vector<std::uint32_t>& path, const analysis_result& result) {
  json::array ids;
  for (std::uint32_t region : path) ids.push_back(sv(result.tree_regions.at(region).id));
  return ids;
}

/// Fixed-point text with `decimals` decimals.
/// A name for a code block: control characters and backticks (which could close the fence) replaced,
/// cut to 80 characters (UTF-8 continuation bytes do not count).
std::string block_text(std::string_view raw) {
  std::string text;
  std::size_t shown = 0;
  for (char c : raw) {
    const auto byte = static_cast<unsigned char>(c);
    if ((byte & 0xC0) != 0x80 && ++shown > 80) {
      text += "...";
      break;
    }
    text += byte < 0x20 || byte == 0x7F ? '?' : c == '`' ? '\'' : c;
  }
  return text;
}

std::size_t width(std::string_view text) {
  return static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

/// The Markdown tree shows at most this many nodes; the JSON report has them all.
constexpr std::size_t max_markdown_nodes = 200;

}  // namespace

std::vector<tree_summary_node> summarize_tree(const analysis_result& result) {
  std::vector<tree_summary_node> out;
  if (!result.has_region_tree || result.runs.empty()) return out;
  // A merged trie of the paths: node -> (region -> child), children in first-insertion order.
  struct merged {
    std::vector<std::uint32_t> path;
    std::vector<std::size_t> children;
    std::map<std::uint32_t, std::size_t> child_of;
    std::vector<std::int64_t> calls, cpu, self_cpu, device, self_device;  // one entry per run present
  };
  std::vector<merged> nodes(1);  // nodes[0]: the root above the topmost regions
  std::vector<std::size_t> at;   // per node of the current run: its merged node
  for (const run_result& run : result.runs) {
    at.assign(run.tree.size(), 0);
    for (std::size_t i = 0; i < run.tree.size(); ++i) {
      const tree_node& node = run.tree[i];
      const std::size_t parent = node.parent == tree_node::no_parent ? 0 : at[node.parent];
      auto [it, added] = nodes[parent].child_of.try_emplace(node.region, nodes.size());
      if (added) {
        merged child;
        child.path = nodes[parent].path;
        child.path.push_back(node.region);
        nodes[parent].children.push_back(nodes.size());
        nodes.push_back(std::move(child));
      }
      merged& m = nodes[it->second];
      at[i] = it->second;
      m.calls.push_back(static_cast<std::int64_t>(node.calls));
      m.cpu.push_back(node.cpu_time_ns);
      m.self_cpu.push_back(node.self_cpu_time_ns);
      if (node.device_time_ns) m.device.push_back(*node.device_time_ns);
      if (node.self_device_time_ns) m.self_device.push_back(*node.self_device_time_ns);
    }
  }
  // Runs without the path count as 0.
  const std::size_t runs = result.runs.size();
  auto over_all_runs = [runs](std::vector<std::int64_t>& values) {
    values.resize(runs, 0);
    return median(values);
  };
  std::vector<std::size_t> stack(nodes[0].children.rbegin(), nodes[0].children.rend());
  while (!stack.empty()) {
    merged& m = nodes[stack.back()];
    stack.pop_back();
    tree_summary_node entry;
    entry.path = m.path;
    entry.runs_present = m.cpu.size();
    entry.calls = over_all_runs(m.calls);
    entry.cpu_ns = over_all_runs(m.cpu);
    entry.self_cpu_ns = over_all_runs(m.self_cpu);
    if (result.has_device_data) {
      entry.device_ns = over_all_runs(m.device);
      entry.self_device_ns = over_all_runs(m.self_device);
    }
    out.push_back(std::move(entry));
    stack.insert(stack.end(), m.children.rbegin(), m.children.rend());
  }
  return out;
}

json::array tree_json(const run_result& run, const analysis_result& result) {
  json::array nodes;
  for (std::size_t i = 0; i < run.tree.size(); ++i) {
    const tree_node& node = run.tree[i];
    json::object entry;
    entry["path"] = path_json(tree_path(run.tree, i), result);
    entry["calls"] = node.calls;
    entry["cpu_time_us"] = ns_to_us(node.cpu_time_ns);
    entry["self_cpu_time_us"] = ns_to_us(node.self_cpu_time_ns);
    if (node.device_time_ns) entry["device_time_us"] = ns_to_us(*node.device_time_ns);
    if (node.self_device_time_ns) entry["self_device_time_us"] = ns_to_us(*node.self_device_time_ns);
    nodes.push_back(std::move(entry));
  }
  return nodes;
}

json::array tree_summary_json(const analysis_result& result) {
  json::array nodes;
  for (const tree_summary_node& node : summarize_tree(result)) {
    json::object entry;
    entry["path"] = path_json(node.path, result);
    entry["runs_present"] = node.runs_present;
    entry["calls"] = node.calls;
    entry["cpu_time_us"] = node.cpu_ns / 1000.0;
    entry["self_cpu_time_us"] = node.self_cpu_ns / 1000.0;
    if (node.device_ns) entry["device_time_us"] = *node.device_ns / 1000.0;
    if (node.self_device_ns) entry["self_device_time_us"] = *node.self_device_ns / 1000.0;
    nodes.push_back(std::move(entry));
  }
  return nodes;
}

void append_tree_markdown(std::string& out, const analysis_result& result) {
  if (!result.has_region_tree) return;
  out += "## Region tree\n\n";
  const std::vector<tree_summary_node> nodes = summarize_tree(result);
  if (nodes.empty()) {
    out += "No region in any run.\n\n";
    return;
  }
  out += "Each region instance under the region it nests in (docs/design.md, rule 14); median over " +
         std::to_string(result.runs.size()) +
         " run(s) of each figure, a run without the node counting as 0; times in us (in each run, self =\n"
         "inclusive - the children's inclusive).\n\n";
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"region", "runs", "calls", "CPU (us)", "self CPU (us)"});
  if (result.has_device_data) {
    rows[0].push_back("device (us)");
    rows[0].push_back("self device (us)");
  }
  const std::size_t shown = std::min(nodes.size(), max_markdown_nodes);
  for (std::size_t i = 0; i < shown; ++i) {
    const tree_summary_node& node = nodes[i];
    std::vector<std::string> row;
    row.push_back(std::string(2 * (node.path.size() - 1), ' ') +
                  block_text(result.tree_regions.at(node.path.back()).id));
    row.push_back(std::to_string(node.runs_present));
    row.push_back(fixed(node.calls, node.calls == static_cast<double>(static_cast<std::uint64_t>(node.calls)) ? 0 : 1));
    row.push_back(fixed(node.cpu_ns / 1000.0, 3));
    row.push_back(fixed(node.self_cpu_ns / 1000.0, 3));
    if (node.device_ns) {
      row.push_back(fixed(*node.device_ns / 1000.0, 3));
      row.push_back(fixed(*node.self_device_ns / 1000.0, 3));
    }
    rows.push_back(std::move(row));
  }
  std::vector<std::size_t> widths(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], width(row[c]));
  }
  out += "```text\n";
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      const std::string pad(widths[c] - width(row[c]), ' ');
      if (c == 0) {
        line += row[c] + pad;
      } else {
        line += "  " + pad + row[c];  // numbers right-aligned
      }
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  out += "```\n\n";
  if (shown < nodes.size()) {
    out += std::to_string(nodes.size() - shown) + " more node(s) are in the JSON report's `tree_summary`.\n\n";
  }
}

}  // namespace regionprof::report_detail
