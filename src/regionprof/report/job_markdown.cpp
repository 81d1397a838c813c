// job_to_markdown: the job report's Markdown view, stragglers first.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "regionprof/json/json_text.hpp"
#include "regionprof/report/report.hpp"

namespace regionprof {
namespace {

/// Straggler rows shown (the rest are in the JSON).
constexpr std::size_t max_straggler_rows = 20;

std::string us3(double ns) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.3f", ns / 1000.0);
  return buffer;
}

std::string ratio(const std::optional<double>& value) {
  if (!value) return "-";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3f", *value);
  return buffer;
}

/// A cell's text on one line, valid UTF-8, `|` escaped.
std::string line_cell(std::string_view raw) {
  std::string out;
  for (char c : report_detail::repair_utf8(raw)) {
    if (c == '|') out += '\\';
    out += static_cast<unsigned char>(c) < 0x20 || c == 0x7F ? ' ' : c;
  }
  return out;
}

std::size_t width(std::string_view text) {
  return static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

/// A table padded to its widest cells; columns whose title starts with '>' are right-aligned.
void padded_table(std::string& out, std::vector<std::string> titles,
                  const std::vector<std::vector<std::string>>& rows) {
  std::vector<bool> right;
  for (std::string& t : titles) {
    right.push_back(!t.empty() && t.front() == '>');
    if (right.back()) t.erase(0, 1);
  }
  std::vector<std::size_t> widths(titles.size(), 3);
  for (std::size_t c = 0; c < titles.size(); ++c) {
    widths[c] = std::max(widths[c], width(titles[c]));
    for (const auto& row : rows) widths[c] = std::max(widths[c], width(row[c]));
  }
  const auto line = [&](const std::vector<std::string>& cells) {
    out += '|';
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const std::string pad(widths[c] - width(cells[c]), ' ');
      out += ' ' + (right[c] ? pad + cells[c] : cells[c] + pad) + " |";
    }
    out += '\n';
  };
  line(titles);
  out += '|';
  for (std::size_t c = 0; c < titles.size(); ++c) {
    out += ' ' + std::string(widths[c] - (right[c] ? 1 : 0), '-') + (right[c] ? ":" : "") + " |";
  }
  out += '\n';
  for (const auto& row : rows) line(row);
  out += '\n';
}

struct straggler {
  std::size_t run;
  const std::string* region;
  const char* domain;
  const cross_rank_figure* figure;
  double lost_ns;  ///< max - median: what the slowest rank costs the others at the next collective
};

double lost(const cross_rank_figure& f) { return static_cast<double>(f.max_ns) - f.median_ns; }

}  // namespace

std::string job_to_markdown(const job_report& job) {
  std::string out = "# regionprof job report\n\n";
  std::size_t runs_max = job.runs.size();
  out += "- Ranks: " + std::to_string(job.ranks.size()) + "\n";
  out += "- Runs: " + std::to_string(runs_max) + " run indices across ranks\n";
  out += "- Warnings: " + std::to_string(job.warnings.size()) + " for the job, each rank's own in its profile\n\n";

  std::vector<straggler> stragglers;
  for (const cross_rank_run& run : job.runs) {
    for (const cross_rank_region& r : run.regions) {
      stragglers.push_back({run.run_index, &r.region_id, "CPU", &r.cpu, lost(r.cpu)});
      if (r.device) {
        stragglers.push_back({run.run_index, &r.region_id, "device", &*r.device, lost(*r.device)});
      }
    }
  }
  std::stable_sort(stragglers.begin(), stragglers.end(),
                   [](const straggler& a, const straggler& b) { return a.lost_ns > b.lost_ns; });
  out += "## Stragglers\n\nRegions by time the slowest rank lost against the median (max - median), over each run\n"
         "index's ranks; times in us.\n\n";
  std::vector<std::vector<std::string>> rows;
  for (std::size_t i = 0; i < stragglers.size() && i < max_straggler_rows; ++i) {
    const straggler& s = stragglers[i];
    rows.push_back({std::to_string(s.run), "`" + line_cell(*s.region) + "`", s.domain, us3(s.figure->median_ns),
                    us3(static_cast<double>(s.figure->min_ns)), us3(static_cast<double>(s.figure->max_ns)),
                    us3(s.lost_ns), std::to_string(s.figure->slowest_rank), ratio(s.figure->imbalance),
                    std::to_string(s.figure->ranks)});
  }
  padded_table(out,
               {">run", "region", "domain", ">median", ">min", ">max", ">max - median", ">slowest rank",
                ">imbalance", ">ranks"},
               rows);

  out += "## Runs across ranks\n\n";
  rows.clear();
  const bool device = std::any_of(job.runs.begin(), job.runs.end(), [](const cross_rank_run& r) { return r.device; });
  for (const cross_rank_run& run : job.runs) {
    std::vector<std::string> row{std::to_string(run.run_index), std::to_string(run.cpu.ranks), us3(run.cpu.median_ns),
                                 us3(static_cast<double>(run.cpu.max_ns)), std::to_string(run.cpu.slowest_rank),
                                 ratio(run.cpu.imbalance)};
    if (device) {
      row.push_back(run.device ? us3(run.device->median_ns) : "-");
      row.push_back(run.device ? us3(static_cast<double>(run.device->max_ns)) : "-");
      row.push_back(run.device ? std::to_string(run.device->slowest_rank) : "-");
    }
    rows.push_back(std::move(row));
  }
  std::vector<std::string> titles{">run", ">ranks", ">CPU median (us)", ">CPU max (us)", ">slowest rank", ">imbalance"};
  if (device) {
    titles.insert(titles.end(), {">device median (us)", ">device max (us)", ">device slowest rank"});
  }
  padded_table(out, titles, rows);

  out += "## Ranks\n\n";
  rows.clear();
  for (const job_rank& r : job.ranks) {
    rows.push_back({std::to_string(r.rank), line_cell(r.host.empty() ? "-" : r.host),
                    r.pid ? std::to_string(*r.pid) : "-",
                    std::to_string(r.profile.result().runs.size()), std::to_string(r.profile.result().regions.size()),
                    std::to_string(r.profile.result().warnings.size()), "`" + line_cell(r.file) + "`"});
  }
  padded_table(out, {">rank", "host", ">pid", ">runs", ">regions", ">warnings", "file"}, rows);

  out += "## Warnings\n\n";
  if (job.warnings.empty()) out += "None for the job (each rank's own are in its profile).\n";
  for (const warning& w : job.warnings) {
    out += "- `" + std::string(to_string(w.code)) + "` (" + std::string(to_string(w.source)) +
           "): " + line_cell(w.message) + "\n";
  }
  return out;
}

}  // namespace regionprof
