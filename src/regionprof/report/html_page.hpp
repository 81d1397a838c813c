// Building blocks of the self-contained HTML pages (profile and diff): escaping, number formatting,
// SVG charts, and the page shell with its inline CSS and script. Nothing is fetched: no external script,
// style sheet, font or image.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace regionprof::report_detail::html {

/// `text` escaped for HTML text and attribute values (`&`, `<`, `>`, `"`, `'`), UTF-8 repaired.
std::string escape(std::string_view text);

/// A fixed-point decimal: fixed(1.23456, 3) = "1.235".
std::string fixed(double value, int decimals);

/// A table cell `<td>text</td>` (`text` already escaped); `number`: right-aligned (`class="n"`).
std::string cell(const std::string& text, bool number = false);
/// `<thead><tr><th>title</th>...</tr></thead>`, the titles escaped.
std::string header_row(const std::vector<std::string>& titles);

/// The i-th colour of the region palette (cycled), as `#rrggbb`.
std::string_view palette(std::size_t i) noexcept;

/// One segment of a stacked bar.
struct segment {
  std::string label;
  double value = 0.0;  ///< us
  std::string colour;
};

/// One bar of a stacked bar chart: a run and its segments (regions, then the residual).
struct stacked_bar {
  std::string label;
  std::vector<segment> segments;
};

/// An SVG of horizontal stacked bars on one shared us scale (the largest bar fills the width); every
/// segment has a <title> tooltip.
std::string stacked_bars_svg(const std::vector<stacked_bar>& bars, std::string_view unit_label);

/// One row of a strip chart: a label and its samples in one or more series (e.g. A and B).
struct strip_row {
  std::string label;
  std::vector<std::vector<double>> series;  ///< per series, the per-run values (us)
};

/// An SVG strip chart: per row, each series' values as dots on a shared us axis and its median as a tick.
/// `series_names` and `series_colours` give the series' legend.
std::string strip_chart_svg(const std::vector<strip_row>& rows, const std::vector<std::string>& series_names,
                            const std::vector<std::string>& series_colours);

/// One node of an icicle chart, given depth-first (a node before its children, siblings in order).
struct icicle_node {
  std::string label;          ///< the full region id (the rectangle shows it truncated to fit)
  std::size_t depth = 0;      ///< 0: topmost; a node's parent is the last earlier node one level up
  double inclusive_us = 0.0;  ///< the rectangle's width, relative to the chart's total
  double self_us = 0.0;       ///< shown in the tooltip; on the chart, the part no child covers
  std::string colour;
};

/// An SVG icicle (flame) chart: one row per depth, each node a `<rect class="icicle-node">` of width
/// icicle_width * inclusive_us / total_us (clipped to its parent's remaining width, so a child never
/// leaves its parent), children left to right below their parent from its left edge; each rectangle has a
/// `<title>` with the full label and the inclusive and self times. Empty for no nodes or total_us <= 0.
inline constexpr double icicle_width = 900.0;  // px, of the SVG viewBox
std::string icicle_svg(const std::vector<icicle_node>& nodes, double total_us);

/// One span beneath a step chart: a region instance, us since the chart's start.
struct chart_span {
  std::string label;
  double start_us = 0.0;
  double end_us = 0.0;
  std::string colour;
};

/// One sample of a step chart: at `at_us`, the level becomes `value` (shown as `value_text`).
struct step_sample {
  double at_us = 0.0;
  double value = 0.0;
  std::string value_text;
};

/// An SVG of one quantity over [0, duration_us]: a step line (each sample's level held until the next;
/// 0 before the first), the largest sample marked with a dot, and beneath it the spans as bars in lanes
/// (each in the first lane where it overlaps no bar; at most 8 lanes, the last taking the rest). Samples
/// and spans have `<title>` tooltips; `max_text` labels the top of the value axis.
std::string step_chart_svg(const std::vector<step_sample>& samples, double duration_us,
                           const std::vector<chart_span>& spans, std::string_view max_text);

/// A report as a fragment that can sit in any page (a Jupyter output, beside other reports and pandas
/// tables): `<div class="regionprof" id="ID">`, its style (every rule scoped under `.regionprof`), `body`,
/// a `<p class="rp-status">` and its script, which reaches only the elements under its root (found by
/// `id`): it makes the root's `table.sortable` tables sortable, and when it ran without an error it sets
/// the status to `regionprof-render-ok` and the root's `data-rendered` to the number of its charts; on an
/// error it writes `regionprof-render-error: <message>` there instead. `id` is the one id the fragment
/// holds; throws std::invalid_argument unless it is 1 to 64 ASCII letters, digits, `-` or `_`, starting
/// with a letter.
std::string fragment(std::string_view id, std::string_view body);

/// A whole page around one fragment: `<!DOCTYPE html>`, the title, a page margin, and `fragment`.
std::string page(std::string_view title, std::string_view fragment);

}  // namespace regionprof::report_detail::html
