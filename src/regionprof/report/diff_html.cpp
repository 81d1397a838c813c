// The diff's HTML view (regionprof/compare/profile_diff.hpp, to_html): A against B per region, one
// self-contained file (report/html_page.hpp).
#include <algorithm>
#include <string>
#include <vector>

#include "regionprof/report/diff_text.hpp"
#include "regionprof/report/html_page.hpp"
#include "regionprof/report/report.hpp"

namespace regionprof {
namespace {

namespace html = report_detail::html;
using html::cell;
using html::header_row;

std::string diff_cell_class(const diff_entry& entry) {
  if (entry.verdict == diff_verdict::slower || entry.verdict == diff_verdict::more) return " class=\"slower\"";
  if (entry.verdict == diff_verdict::faster || entry.verdict == diff_verdict::less) return " class=\"faster\"";
  return "";
}

/// Which entries a table shows: the times, or the memory figures (rule 21).
enum class entry_kind : std::uint8_t { time = 0, memory = 1 };

std::string diff_rows(const std::string& name, const std::vector<diff_entry>& entries, diff_test test,
                      entry_kind kind = entry_kind::time) {
  std::string out;
  for (const diff_entry& e : entries) {
    if (is_memory_domain(e.domain) != (kind == entry_kind::memory)) continue;
    out += "<tr>" + cell(name) + cell(html::escape(e.domain)) + cell(html::fixed(e.a_median, 3), true) +
           cell(html::fixed(e.b_median, 3), true) + cell(html::fixed(e.change, 3), true) +
           cell(e.change_pct ? html::fixed(*e.change_pct, 2) + " %" : "-", true) +
           cell(compare_detail::p_cell(e, test), true) +
           "<td" + diff_cell_class(e) + ">" +
           html::escape(to_string(e.verdict)) + (e.gate_failed ? " (gate)" : "") + "</td></tr>";
  }
  return out;
}

}  // namespace

std::string to_html(const profile_diff& diff) {
  std::string body = "<h1>regionprof diff</h1><p>A (baseline): <code>" + html::escape(diff.a_file) + "</code>, " +
                     compare_detail::side_text(diff.a_profiles.size(), diff.a_runs) + "; B (candidate): <code>" +
                     html::escape(diff.b_file) + "</code>, " +
                     compare_detail::side_text(diff.b_profiles.size(), diff.b_runs) + ". Test: " +
                     html::escape(compare_detail::test_text(diff)) + ".";
  if (diff.options.fail_if_slower) {
    body += " Gate: slower by more than " + html::fixed(*diff.options.fail_if_slower, 2) + " %: " +
            (diff.time_gate_failed ? "<b class=\"slower\">failed</b>" : "<b class=\"faster\">passed</b>") + ".";
  }
  if (diff.options.fail_if_more_memory) {
    body += " Memory gate: a region's peak more by more than " + html::fixed(*diff.options.fail_if_more_memory, 2) +
            " %: " +
            (diff.memory_gate_failed ? "<b class=\"slower\">failed</b>" : "<b class=\"faster\">passed</b>") + ".";
  }
  body += "</p>";
  for (const warning& item : diff.warnings) {
    body += "<p class=\"warning\"><b>" + html::escape(to_string(item.code)) + "</b> (" +
            html::escape(to_string(item.source)) + "): " + html::escape(item.message) + "</p>";
  }
  const std::vector<std::string> titles{"", "domain", "A median (us)", "B median (us)", "change (us)", "change",
                                        "p", "verdict"};
  body += "<h2>Changes</h2><table class=\"sortable\">" + header_row(titles) + "<tbody>" +
          diff_rows("(run total)", diff.run_totals, diff.test);
  for (const region_diff& region : diff.regions) {
    std::string name = "<code>" + html::escape(region.region_id) + "</code>";
    if (region.presence != diff_presence::both) name += " (" + html::escape(to_string(region.presence)) + ")";
    body += diff_rows(name, region.domains, diff.test);
  }
  body += "</tbody></table>";
  std::string memory;
  for (const region_diff& region : diff.regions) {
    std::string name = "<code>" + html::escape(region.region_id) + "</code>";
    if (region.presence != diff_presence::both) name += " (" + html::escape(to_string(region.presence)) + ")";
    memory += diff_rows(name, region.domains, diff.test, entry_kind::memory);
  }
  if (!memory.empty()) {
    const std::vector<std::string> memory_titles{"", "domain", "A median (bytes)", "B median (bytes)", "change (bytes)",
                                                 "change", "p", "verdict"};
    body += "<h2>Memory</h2><table class=\"sortable\">" + header_row(memory_titles) + "<tbody>" + memory +
            "</tbody></table>";
  }
  if (diff.has_tree) {
    body += "<h2>Region tree</h2><p>Each path's inclusive time (not gated: it is inside its topmost region's).</p>"
            "<table class=\"sortable\">" + header_row(titles) + "<tbody>";
    for (const tree_path_diff& node : diff.tree) {
      std::string name = "<code>" + html::escape(path_text(node.path)) + "</code>";
      if (node.presence != diff_presence::both) name += " (" + html::escape(to_string(node.presence)) + ")";
      body += diff_rows(name, node.domains, diff.test);
    }
    body += "</tbody></table>";
  }
  // One strip chart per domain: A's and B's runs per region.
  std::vector<std::string> domains;
  for (const region_diff& region : diff.regions) {
    for (const diff_entry& e : region.domains) {
      if (std::find(domains.begin(), domains.end(), e.domain) == domains.end()) domains.push_back(e.domain);
    }
  }
  for (const std::string& domain : domains) {
    std::vector<html::strip_row> rows;
    for (const region_diff& region : diff.regions) {
      for (const diff_entry& e : region.domains) {
        if (e.domain == domain) rows.push_back({region.region_id, {e.a_values, e.b_values}});
      }
    }
    body += "<h2>A against B: <code>" + html::escape(domain) + "</code></h2>" +
            html::strip_chart_svg(rows, {"A (baseline)", "B (candidate)"}, {"#4e79a7", "#f28e2b"});
  }
  std::vector<html::strip_row> totals;
  for (const diff_entry& e : diff.run_totals) totals.push_back({e.domain, {e.a_values, e.b_values}});
  body += "<h2>A against B: run totals</h2>" +
          html::strip_chart_svg(totals, {"A (baseline)", "B (candidate)"}, {"#4e79a7", "#f28e2b"});
  return html::page("regionprof diff", html::fragment("regionprof-diff", body));
}

}  // namespace regionprof
