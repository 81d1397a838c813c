#include "regionprof/report/html_page.hpp"

#include <algorithm>
#include <charconv>
#include <stdexcept>

#include "regionprof/json/json_text.hpp"
#include "regionprof/statistics/statistics.hpp"

namespace regionprof::report_detail::html {
namespace {

constexpr double chart_width = 900.0;  // px, of the SVG viewBox
constexpr double label_width = 260.0;  // px, left of the plot area
constexpr double row_height = 22.0;    // px

std::string num(double value) { return fixed(value, 1); }

/// A truncated label that fits the label column (by characters).
std::string short_label(std::string_view text) {
  std::string label(text);
  if (label.size() > 38) label = label.substr(0, 35) + "...";
  return escape(label);
}

double nice_max(double max) { return max <= 0.0 ? 1.0 : max * 1.05; }

}  // namespace

std::string escape(std::string_view raw) {
  const std::string text = repair_utf8(raw);
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += static_cast<unsigned char>(c) < 0x20 ? ' ' : c;
    }
  }
  return out;
}

std::string cell(const std::string& text, bool number) {
  return std::string(number ? "<td class=\"n\">" : "<td>") + text + "</td>";
}

std::string header_row(const std::vector<std::string>& titles) {
  std::string out = "<thead><tr>";
  for (const std::string& title : titles) out += "<th>" + escape(title) + "</th>";
  return out + "</tr></thead>";
}

std::string fixed(double value, int decimals) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::fixed, decimals);
  return std::string(buffer, result.ptr);
}

std::string_view palette(std::size_t i) noexcept {
  static constexpr std::string_view colours[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
                                                 "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#17becf"};
  return colours[i % std::size(colours)];
}

std::string stacked_bars_svg(const std::vector<stacked_bar>& bars, std::string_view unit_label) {
  double max = 0.0;
  for (const stacked_bar& bar : bars) {
    double total = 0.0;
    for (const segment& s : bar.segments) total += s.value;
    max = std::max(max, total);
  }
  max = nice_max(max);
  const double plot = chart_width - label_width - 20.0;
  const double height = row_height * static_cast<double>(bars.size()) + 30.0;
  std::string svg = "<svg class=\"chart\" viewBox=\"0 0 " + num(chart_width) + " " + num(height) +
                    "\" role=\"img\" xmlns=\"http://www.w3.org/2000/svg\">";
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const double y = row_height * static_cast<double>(i) + 4.0;
    svg += "<text x=\"" + num(label_width - 6.0) + "\" y=\"" + num(y + 13.0) + "\" text-anchor=\"end\">" +
           short_label(bars[i].label) + "</text>";
    double x = label_width;
    for (const segment& s : bars[i].segments) {
      const double w = plot * s.value / max;
      svg += "<rect class=\"seg\" x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" + fixed(std::max(w, 0.0), 2) +
             "\" height=\"" + num(row_height - 6.0) + "\" fill=\"" + s.colour + "\"><title>" + escape(s.label) + ": " +
             fixed(s.value, 3) + " us</title></rect>";
      x += w;
    }
  }
  const double axis_y = row_height * static_cast<double>(bars.size()) + 16.0;
  svg += "<text x=\"" + num(label_width) + "\" y=\"" + num(axis_y) + "\">0</text><text x=\"" +
         num(label_width + plot) + "\" y=\"" + num(axis_y) + "\" text-anchor=\"end\">" + fixed(max, 1) + " " +
         escape(unit_label) + "</text></svg>";
  return svg;
}

std::string strip_chart_svg(const std::vector<strip_row>& rows, const std::vector<std::string>& series_names,
                            const std::vector<std::string>& series_colours) {
  double max = 0.0;
  for (const strip_row& row : rows) {
    for (const auto& values : row.series) {
      for (double v : values) max = std::max(max, v);
    }
  }
  max = nice_max(max);
  const double plot = chart_width - label_width - 20.0;
  const double series_count = static_cast<double>(std::max<std::size_t>(series_names.size(), 1));
  const double band = row_height * series_count;
  const double height = band * static_cast<double>(rows.size()) + 44.0;
  std::string svg = "<svg class=\"chart\" viewBox=\"0 0 " + num(chart_width) + " " + num(height) +
                    "\" role=\"img\" xmlns=\"http://www.w3.org/2000/svg\">";
  for (std::size_t s = 0; s < series_names.size(); ++s) {
    const double lx = label_width + 140.0 * static_cast<double>(s);
    svg += "<circle cx=\"" + num(lx) + "\" cy=\"10\" r=\"5\" fill=\"" + series_colours[s] + "\"/><text x=\"" +
           num(lx + 10.0) + "\" y=\"14\">" + escape(series_names[s]) + "</text>";
  }
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const double top = 24.0 + band * static_cast<double>(r);
    svg += "<line class=\"grid\" x1=\"0\" x2=\"" + num(chart_width) + "\" y1=\"" + num(top) + "\" y2=\"" + num(top) +
           "\"/><text x=\"" + num(label_width - 6.0) + "\" y=\"" + num(top + band / 2.0 + 4.0) +
           "\" text-anchor=\"end\">" + short_label(rows[r].label) + "</text>";
    for (std::size_t s = 0; s < rows[r].series.size(); ++s) {
      const std::vector<double>& values = rows[r].series[s];
      const double cy = top + row_height * (static_cast<double>(s) + 0.5);
      const std::string colour = s < series_colours.size() ? series_colours[s] : std::string(palette(s));
      for (std::size_t i = 0; i < values.size(); ++i) {
        svg += "<circle class=\"dot\" cx=\"" + fixed(label_width + plot * values[i] / max, 2) + "\" cy=\"" + num(cy) +
               "\" r=\"3.5\" fill=\"" + colour + "\"><title>run " + std::to_string(i) + ": " + fixed(values[i], 3) +
               " us</title></circle>";
      }
      const double median = stats::median(values);
      const double mx = label_width + plot * median / max;
      svg += "<line class=\"median\" x1=\"" + fixed(mx, 2) + "\" x2=\"" + fixed(mx, 2) + "\" y1=\"" + num(cy - 8.0) +
             "\" y2=\"" + num(cy + 8.0) + "\" stroke=\"" + colour + "\"><title>median " + fixed(median, 3) +
             " us</title></line>";
    }
  }
  const double axis_y = height - 6.0;
  svg += "<text x=\"" + num(label_width) + "\" y=\"" + num(axis_y) + "\">0</text><text x=\"" +
         num(label_width + plot) + "\" y=\"" + num(axis_y) + "\" text-anchor=\"end\">" + fixed(max, 1) +
         " us</text></svg>";
  return svg;
}

std::string step_chart_svg(const std::vector<step_sample>& samples, double duration_us,
                           const std::vector<chart_span>& spans, std::string_view max_text) {
  constexpr double left = 70.0;  // px: the value axis' labels
  constexpr double plot_height = 160.0;
  constexpr double lane_height = 12.0;
  constexpr std::size_t max_lanes = 8;
  const double plot = chart_width - left - 20.0;
  const double span_us = duration_us > 0.0 ? duration_us : 1.0;
  const auto x = [&](double us) { return left + plot * std::clamp(us / span_us, 0.0, 1.0); };
  double max = 0.0;
  std::size_t highest = 0;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    if (samples[i].value > max) {
      max = samples[i].value;
      highest = i;
    }
  }
  if (max <= 0.0) max = 1.0;  // the top of the axis is the largest sample (max_text)
  const double top = 10.0;
  const auto y = [&](double value) { return top + plot_height * (1.0 - value / max); };
  // Lanes: first fit by start (spans come in start order); lane_end[l] is where lane l's last bar ends.
  std::vector<double> lane_end;
  std::vector<std::size_t> lane_of(spans.size(), 0);
  for (std::size_t i = 0; i < spans.size(); ++i) {
    std::size_t lane = 0;
    while (lane < lane_end.size() && lane_end[lane] > spans[i].start_us) ++lane;
    if (lane == max_lanes) lane = max_lanes - 1;
    if (lane == lane_end.size()) lane_end.push_back(0.0);
    lane_end[lane] = std::max(lane_end[lane], spans[i].end_us);
    lane_of[i] = lane;
  }
  const double lanes_top = top + plot_height + 8.0;
  const double height = lanes_top + lane_height * static_cast<double>(lane_end.size()) + 22.0;
  std::string svg = "<svg class=\"chart step\" viewBox=\"0 0 " + num(chart_width) + " " + num(height) +
                    "\" role=\"img\" xmlns=\"http://www.w3.org/2000/svg\">";
  for (double level : {top, y(0.0)}) {
    svg += "<line class=\"grid\" x1=\"" + num(left) + "\" x2=\"" + num(left + plot) + "\" y1=\"" + num(level) +
           "\" y2=\"" + num(level) + "\"/>";
  }
  svg += "<text x=\"" + num(left - 4.0) + "\" y=\"" + num(top + 4.0) + "\" text-anchor=\"end\">" + escape(max_text) +
         "</text><text x=\"" + num(left - 4.0) + "\" y=\"" + num(y(0.0) + 4.0) + "\" text-anchor=\"end\">0</text>";
  if (!samples.empty()) {
    std::string level = fixed(y(0.0), 2);  // the line's height so far
    std::string points = fixed(x(0.0), 2) + "," + level;
    for (const step_sample& s : samples) {
      const std::string at = fixed(x(s.at_us), 2);
      points += " " + at + "," + level;
      level = fixed(y(s.value), 2);
      points += " " + at + "," + level;
    }
    points += " " + fixed(x(span_us), 2) + "," + level;
    svg += "<polyline class=\"level\" fill=\"none\" stroke=\"#4e79a7\" stroke-width=\"1.5\" points=\"" + points +
           "\"/>";
    const step_sample& peak = samples[highest];
    svg += "<circle class=\"dot\" cx=\"" + fixed(x(peak.at_us), 2) + "\" cy=\"" + fixed(y(peak.value), 2) +
           "\" r=\"3.5\" fill=\"#e15759\"><title>peak " + escape(peak.value_text) + " at " + fixed(peak.at_us, 3) +
           " us</title></circle>";
  }
  for (std::size_t i = 0; i < spans.size(); ++i) {
    const chart_span& span = spans[i];
    const double x0 = x(span.start_us);
    svg += "<rect class=\"seg\" x=\"" + fixed(x0, 2) + "\" y=\"" +
           num(lanes_top + lane_height * static_cast<double>(lane_of[i])) + "\" width=\"" +
           fixed(std::max(x(span.end_us) - x0, 0.5), 2) + "\" height=\"" + num(lane_height - 2.0) + "\" fill=\"" +
           span.colour + "\"><title>" + escape(span.label) + ": " + fixed(span.start_us, 3) + " to " +
           fixed(span.end_us, 3) + " us</title></rect>";
  }
  const double axis_y = height - 6.0;
  svg += "<text x=\"" + num(left) + "\" y=\"" + num(axis_y) + "\">0</text><text x=\"" + num(left + plot) + "\" y=\"" +
         num(axis_y) + "\" text-anchor=\"end\">" + fixed(span_us, 1) + " us</text></svg>";
  return svg;
}

std::string fragment(std::string_view id, std::string_view body) {
  const auto id_char = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
  };
  if (id.empty() || id.size() > 64 || !((id[0] >= 'a' && id[0] <= 'z') || (id[0] >= 'A' && id[0] <= 'Z')) ||
      !std::all_of(id.begin(), id.end(), id_char)) {
    throw std::invalid_argument("HTML fragment id '" + escape(id) +
                                "': 1 to 64 ASCII letters, digits, '-' or '_', starting with a letter");
  }
  std::string out = "<div class=\"regionprof\" id=\"";
  out += id;
  out += R"(">
<style>
.regionprof { font-family: system-ui, sans-serif; color: #222; max-width: 960px; }
.regionprof h1 { font-size: 1.5em; } .regionprof h2 { font-size: 1.2em; margin-top: 1.6em; border-bottom: 1px solid #ddd; }
.regionprof table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.85em; }
.regionprof th, .regionprof td { border: 1px solid #ddd; padding: 2px 6px; text-align: left; }
.regionprof td.n { text-align: right; font-variant-numeric: tabular-nums; }
.regionprof th { background: #f4f4f4; } .regionprof table.sortable th { cursor: pointer; } .regionprof code { font-size: 0.95em; }
.regionprof svg.chart { width: 100%; height: auto; font-size: 11px; } .regionprof svg.chart .grid { stroke: #eee; }
.regionprof svg.chart .median { stroke-width: 3; } .regionprof .legend span { display: inline-block; margin-right: 1em; }
.regionprof .swatch { display: inline-block; width: 0.8em; height: 0.8em; margin-right: 0.3em; vertical-align: middle; }
.regionprof .slower { color: #b00020; font-weight: bold; } .regionprof .faster { color: #1b7f3b; font-weight: bold; }
.regionprof .rp-status { color: #888; font-size: 0.75em; }
</style>
)";
  out += body;
  out += R"(<p class="rp-status">rendering</p>
<script>
(function () {
  var root = document.getElementById(')";
  out += id;
  out += R"(');
  var status = root.querySelector('p.rp-status');
  try {
    // Click a column header to sort its table (numbers numerically).
    Array.prototype.forEach.call(root.querySelectorAll('table.sortable'), function (table) {
      Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, column) {
        th.addEventListener('click', function () {
          var body = table.tBodies[0];
          var rows = Array.prototype.slice.call(body.rows);
          var descending = th.getAttribute('data-sorted') !== 'desc';
          rows.sort(function (a, b) {
            var x = a.cells[column].textContent, y = b.cells[column].textContent;
            var nx = parseFloat(x), ny = parseFloat(y);
            var order = (isNaN(nx) || isNaN(ny)) ? x.localeCompare(y) : nx - ny;
            return descending ? -order : order;
          });
          rows.forEach(function (row) { body.appendChild(row); });
          th.setAttribute('data-sorted', descending ? 'desc' : 'asc');
        });
      });
    });
    root.setAttribute('data-rendered', String(root.querySelectorAll('svg.chart').length));
    status.textContent = 'regionprof-render-ok';
  } catch (e) {
    status.textContent = 'regionprof-render-error: ' + e.message;
  }
})();
</script>
</div>
)";
  return out;
}

std::string page(std::string_view title, std::string_view fragment) {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>";
  out += escape(title);
  out += "</title>\n<style>body { margin: 1.5em auto; max-width: 960px; }</style></head><body>\n";
  out += fragment;
  out += "</body></html>\n";
  return out;
}

}  // namespace regionprof::report_detail::html
