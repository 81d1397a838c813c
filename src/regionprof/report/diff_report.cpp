// The diff's JSON and Markdown views (regionprof/compare/profile_diff.hpp; format in docs/cli.md, "regionprof diff").
#include <charconv>
#include <string>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "regionprof/json/json_text.hpp"
#include "regionprof/report/diff_text.hpp"
#include "regionprof/report/html_page.hpp"
#include "regionprof/report/json_report.hpp"
#include "regionprof/report/markdown_table.hpp"
#include "regionprof/report/report.hpp"

namespace regionprof {
namespace {

using report_detail::html::fixed;
using report_detail::sv;

namespace json = boost::json;
using report_detail::code;
using report_detail::table;

json::array values_array(const std::vector<double>& values) {
  json::array array;
  for (double v : values) array.push_back(v);
  return array;
}

json::object entry_object(const diff_entry& entry) {
  json::object object;
  object["a_median"] = entry.a_median;
  object["b_median"] = entry.b_median;
  object["a_mad"] = entry.a_mad;
  object["b_mad"] = entry.b_mad;
  object["change"] = entry.change;
  if (entry.change_pct) object["change_pct"] = *entry.change_pct;
  object["p_value"] = entry.p_value;
  object["p_exact"] = entry.exact;
  if (entry.p_one_sided) object["p_one_sided"] = *entry.p_one_sided;
  if (entry.p_holm) object["p_holm"] = *entry.p_holm;
  object["verdict"] = sv(to_string(entry.verdict));
  object["gate_failed"] = entry.gate_failed;
  object["a_runs"] = values_array(entry.a_values);
  object["b_runs"] = values_array(entry.b_values);
  object["a_process_medians"] = values_array(entry.a_process_medians);
  object["b_process_medians"] = values_array(entry.b_process_medians);
  return object;
}

json::object domains_object(const std::vector<diff_entry>& entries) {
  json::object object;
  for (const diff_entry& entry : entries) object[sv(entry.domain)] = entry_object(entry);
  return object;
}

std::string signed_fixed(double value, int decimals) { return (value > 0 ? "+" : "") + fixed(value, decimals); }

}  // namespace

namespace compare_detail {

std::string side_text(std::size_t processes, std::size_t runs) {
  return std::to_string(processes) + (processes == 1 ? " process, " : " processes, ") + std::to_string(runs) + " runs";
}

std::string p_text(double p) {
  if (p != 0.0 && p < 0.0001) {
    char buffer[64];
    const auto result = std::to_chars(buffer, buffer + sizeof buffer, p, std::chars_format::scientific, 1);
    return std::string(buffer, result.ptr);
  }
  return fixed(p, 4);
}

std::string p_cell(const diff_entry& entry, diff_test test) {
  if (entry.p_holm) return p_text(*entry.p_holm) + "h";
  return p_text(entry.p_value) + (entry.exact || test != diff_test::mann_whitney_u_runs ? "" : "*");
}

double alpha_of(const profile_diff& diff) {
  return diff.options.alpha.value_or(default_alpha(diff.test));
}

std::string test_text(const profile_diff& diff) {
  if (diff.test == diff_test::student_t_log_process_medians) {
    return "Student's t (pooled) over ln(per-process median) (docs/design.md, rule 17), one-sided in the direction of each "
           "change and Holm-adjusted over the " +
           std::to_string(diff.gated_entries) + " gated entries (h), alpha " + p_text(alpha_of(diff)) + " family-wise";
  }
  return "two-sided Mann-Whitney U over the per-run values, alpha " + p_text(alpha_of(diff)) +
         " (*: normal approximation with tie correction; otherwise exact)";
}

}  // namespace compare_detail

namespace {

using compare_detail::p_cell;
using compare_detail::p_text;

/// The verdict, with a mark when the entry fails the gate.
std::string verdict_text(const diff_entry& entry) {
  std::string text(to_string(entry.verdict));
  if (entry.gate_failed) text += " (gate)";
  return text;
}

/// `domain` without its `_us` unit suffix: `cpu_time_us` -> `cpu_time`.
std::string domain_name(const std::string& domain) {
  return domain.size() > 3 && domain.ends_with("_us") ? domain.substr(0, domain.size() - 3) : domain;
}

void add_row(table& rows, std::string name, const diff_entry& entry, diff_test test) {
  rows.add({std::move(name), domain_name(entry.domain), fixed(entry.a_median, 3), fixed(entry.b_median, 3),
            signed_fixed(entry.change, 3), entry.change_pct ? signed_fixed(*entry.change_pct, 2) + " %" : "-",
            p_cell(entry, test), verdict_text(entry)});
}

/// The columns of a diff table whose medians are in `unit` (`us`, or `bytes` for the memory table).
table diff_table(const std::string& unit = "us") {
  return table({{"", false},
                {"domain", false},
                {"A median (" + unit + ")", true},
                {"B median (" + unit + ")", true},
                {"change (" + unit + ")", true},
                {"change", true},
                {"p", true},
                {"verdict", false}});
}

/// `names` joined with ", ", or "none".
std::string listed(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ", ") + name;
  return out.empty() ? std::string("none") : out;
}

void append_tree_markdown(std::string& out, const profile_diff& diff) {
  if (!diff.has_tree) return;
  out += "\n## Region tree\n\nEach path's inclusive time (not gated: it is inside its topmost region's).\n\n";
  if (diff.tree.empty()) {
    out += "No path in either profile's tree.\n\n";
    return;
  }
  table rows = diff_table();
  std::vector<std::string> added, vanished;
  for (const tree_path_diff& node : diff.tree) {
    std::string name = code(path_text(node.path));
    if (node.presence == diff_presence::added) added.push_back(name);
    if (node.presence == diff_presence::vanished) vanished.push_back(name);
    if (node.presence != diff_presence::both) name += " (" + std::string(to_string(node.presence)) + ")";
    for (const diff_entry& entry : node.domains) add_row(rows, name, entry, diff.test);
  }
  rows.render(out);
  out += "- New paths in B: " + listed(added) + "\n";
  out += "- Vanished paths from B: " + listed(vanished) + "\n";
}

}  // namespace

std::string path_text(const std::vector<std::string>& path) {
  std::string text;
  for (const std::string& id : path) text += (text.empty() ? "" : " > ") + id;
  return text;
}

std::string to_json(const profile_diff& diff) {
  json::object root;
  root["schema_version"] = 1;
  root["kind"] = "regionprof_diff";
  const auto side = [](const std::string& file, std::size_t runs, const std::vector<std::string>& profiles) {
    json::object object;
    object["file"] = sv(file);
    object["runs"] = runs;
    object["processes"] = profiles.size();
    json::array names;
    for (const std::string& name : profiles) names.push_back(sv(name));
    object["profiles"] = std::move(names);
    return object;
  };
  root["a"] = side(diff.a_file, diff.a_runs, diff.a_profiles);
  root["b"] = side(diff.b_file, diff.b_runs, diff.b_profiles);
  root["test"] = sv(to_string(diff.test));
  root["gated_entries"] = diff.gated_entries;
  root["alpha"] = compare_detail::alpha_of(diff);
  if (diff.options.fail_if_slower) root["fail_if_slower_pct"] = *diff.options.fail_if_slower;
  if (diff.options.fail_if_more_memory) {
    root["fail_if_more_memory_pct"] = *diff.options.fail_if_more_memory;
    root["gated_memory_entries"] = diff.gated_memory_entries;
  }
  root["gate_failed"] = diff.gate_failed;
  root["run_totals"] = domains_object(diff.run_totals);
  json::array regions;
  for (const region_diff& region : diff.regions) {
    json::object entry;
    entry["region_id"] = sv(region.region_id);
    entry["presence"] = sv(to_string(region.presence));
    entry["domains"] = domains_object(region.domains);
    regions.push_back(std::move(entry));
  }
  root["regions"] = std::move(regions);
  if (diff.has_tree) {
    json::array tree;
    for (const tree_path_diff& node : diff.tree) {
      json::object entry;
      json::array path;
      for (const std::string& id : node.path) path.push_back(sv(id));
      entry["path"] = std::move(path);
      entry["presence"] = sv(to_string(node.presence));
      entry["domains"] = domains_object(node.domains);
      tree.push_back(std::move(entry));
    }
    root["tree"] = std::move(tree);
  }
  json::array warnings;
  for (const warning& item : diff.warnings) warnings.push_back(report_detail::warning_object(item));
  root["warnings"] = std::move(warnings);
  std::string text;
  report_detail::append_json(text, root, 2);
  text += '\n';
  return text;
}

std::string to_markdown(const profile_diff& diff) {
  std::string out = "# regionprof diff\n\n";
  out += "- A (baseline): " + code(diff.a_file) + ", " + compare_detail::side_text(diff.a_profiles.size(), diff.a_runs) + "\n";
  out += "- B (candidate): " + code(diff.b_file) + ", " + compare_detail::side_text(diff.b_profiles.size(), diff.b_runs) + "\n";
  out += "- Test: " + compare_detail::test_text(diff) + "\n";
  if (diff.options.fail_if_slower) {
    out += "- Gate: slower by more than " + fixed(*diff.options.fail_if_slower, 2) + " % with p < alpha: " +
           (diff.time_gate_failed ? "FAILED" : "passed") + "\n";
  }
  if (diff.options.fail_if_more_memory) {
    out += "- Memory gate: a region's peak more by more than " + fixed(*diff.options.fail_if_more_memory, 2) +
           " % with p < alpha (" + std::to_string(diff.gated_memory_entries) + " gated entries): " +
           (diff.memory_gate_failed ? "FAILED" : "passed") + "\n";
  }
  out += "\n## Run totals\n\n";
  table totals = diff_table();
  for (const diff_entry& entry : diff.run_totals) add_row(totals, "(run total)", entry, diff.test);
  totals.render(out);

  out += "## Regions\n\n";
  if (diff.regions.empty()) {
    out += "No region in either profile.\n\n";
  } else {
    table rows = diff_table();
    table memory = diff_table("bytes");
    for (const region_diff& region : diff.regions) {
      std::string name = code(region.region_id);
      if (region.presence != diff_presence::both) name += " (" + std::string(to_string(region.presence)) + ")";
      for (const diff_entry& entry : region.domains) {
        add_row(is_memory_domain(entry.domain) ? memory : rows, name, entry, diff.test);
      }
    }
    rows.render(out);
    if (!memory.empty()) {
      out += "## Memory\n\nPer region and device (docs/design.md, rule 21): allocated bytes and the peak total "
             "allocated, per run.\n\n";
      memory.render(out);
    }
  }
  std::string added, vanished;
  for (const region_diff& region : diff.regions) {
    if (region.presence == diff_presence::added) added += (added.empty() ? "" : ", ") + code(region.region_id);
    if (region.presence == diff_presence::vanished) vanished += (vanished.empty() ? "" : ", ") + code(region.region_id);
  }
  out += "- New in B: " + (added.empty() ? std::string("none") : added) + "\n";
  out += "- Vanished from B: " + (vanished.empty() ? std::string("none") : vanished) + "\n";
  append_tree_markdown(out, diff);
  out += '\n';
  report_detail::append_warnings(out, diff.warnings);
  return out;
}

}  // namespace regionprof
