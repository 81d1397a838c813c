// The icicle chart of the region tree in the HTML report (report/html_page.hpp, icicle_svg).
#include <algorithm>
#include <string>
#include <vector>

#include "regionprof/report/html_page.hpp"

namespace regionprof::report_detail::html {
namespace {

constexpr double icicle_row_height = 20.0;  // px per depth
constexpr double icicle_char_width = 6.5;   // px per character of an 11 px label, for truncation

/// The byte offset of the code point after the first `count` of `text` (text.size() when it has fewer).
std::size_t after_code_points(std::string_view text, std::size_t count) {
  std::size_t seen = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80 && seen++ == count) return i;
  }
  return text.size();
}

/// `label` as it fits `width` px: whole, or cut with "..." (at least one code point kept), or empty.
std::string fitted_label(std::string_view label, double width) {
  const double fit = (width - 6.0) / icicle_char_width;
  if (fit < 1.0) return {};
  const auto chars = static_cast<std::size_t>(fit);
  if (after_code_points(label, chars) == label.size()) return std::string(label);
  if (chars < 4) return {};
  return std::string(label.substr(0, after_code_points(label, chars - 3))) + "...";
}

}  // namespace

std::string icicle_svg(const std::vector<icicle_node>& nodes, double total_us) {
  if (nodes.empty() || !(total_us > 0.0)) return {};
  std::size_t max_depth = 0;
  for (const icicle_node& node : nodes) max_depth = std::max(max_depth, node.depth);
  const double height = static_cast<double>(max_depth + 1) * icicle_row_height;
  std::string svg = "<svg class=\"chart icicle\" viewBox=\"0 0 " + fixed(icicle_width, 1) + " " +
                    fixed(height, 1) + "\" role=\"img\" xmlns=\"http://www.w3.org/2000/svg\">";
  // Per depth d: where the next node at depth d starts and where its parent ends. Entry 0 is the chart.
  struct span {
    double next = 0.0;
    double right = icicle_width;
  };
  std::vector<span> open(max_depth + 2);
  std::size_t depth_open = 0;  // levels of `open` valid for the current node: 0..depth_open
  for (const icicle_node& node : nodes) {
    // A node deeper than its predecessor's depth + 1 (not written by the reports) hangs at the next level.
    const std::size_t depth = std::min(node.depth, depth_open);
    span& level = open[depth];
    const double x = std::min(level.next, level.right);
    const double width = std::clamp(icicle_width * node.inclusive_us / total_us, 0.0, level.right - x);
    level.next = x + width;
    open[depth + 1] = {x, x + width};
    depth_open = depth + 1;
    const double y = static_cast<double>(depth) * icicle_row_height;
    svg += "<rect class=\"icicle-node\" x=\"" + fixed(x, 2) + "\" y=\"" + fixed(y, 1) + "\" width=\"" +
           fixed(width, 2) + "\" height=\"" + fixed(icicle_row_height - 1.0, 1) + "\" fill=\"" + escape(node.colour) +
           "\" stroke=\"#fff\"><title>" + escape(node.label) + ": inclusive " + fixed(node.inclusive_us, 3) +
           " us, self " + fixed(node.self_us, 3) + " us</title></rect>";
    const std::string text = fitted_label(node.label, width);
    if (!text.empty()) {
      svg += "<text class=\"icicle-label\" x=\"" + fixed(x + 3.0, 2) + "\" y=\"" + fixed(y + 14.0, 1) + "\">" +
             escape(text) + "</text>";
    }
  }
  return svg + "</svg>";
}

}  // namespace regionprof::report_detail::html
