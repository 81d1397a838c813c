// Text the diff's views share (compare/diff_report.cpp, compare/diff_html.cpp).
#pragma once

#include <cstddef>
#include <string>

#include "regionprof/compare/profile_diff.hpp"

namespace regionprof::compare_detail {

/// "3 processes, 60 runs".
std::string side_text(std::size_t processes, std::size_t runs);
/// A p-value: 4 decimals, or 1 significant digit in scientific notation below 0.0001.
std::string p_text(double p);
/// The level the diff's verdicts used: options.alpha, which diff_profiles sets, else the test's default.
double alpha_of(const profile_diff& diff);
/// An entry's p column: the p its verdict used, Holm's with `h` when there is one, else the test's
/// (`*`: U's normal approximation).
std::string p_cell(const diff_entry& entry, diff_test test);
/// The test and alpha in words, with the marks of the p column (h: Holm-adjusted, *: U's normal approximation).
std::string test_text(const profile_diff& diff);

}  // namespace regionprof::compare_detail
