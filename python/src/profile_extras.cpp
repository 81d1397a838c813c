// expand_output_path for Python: the one expansion of output path placeholders (process_identity.hpp,
// window.hpp), so Python's paths name the files the native writers write; the memory table's rows.
#include "profile_extras.hpp"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "regionprof/analysis/window.hpp"
#include "regionprof/report/report.hpp"
#include "regionprof/trace/process_identity.hpp"

namespace nb = nanobind;

namespace regionprof::python {

std::string output_path_here(const std::string& pattern, std::optional<std::uint64_t> window,
                             std::optional<std::uint64_t> process_index, std::optional<std::uint64_t> process_count) {
  regionprof::process_identity identity = regionprof::this_process_identity();
  identity.process_index = process_index;
  identity.process_count = process_count;
  return window ? regionprof::window_output_path(pattern, identity, *window)
                : regionprof::expand_output_path(pattern, identity);
}

std::vector<memory_tuple> memory_tuples(const regionprof::Profile& profile) {
  std::vector<memory_tuple> rows;
  for (const regionprof::memory_row& row : regionprof::memory_rows(profile)) {
    const regionprof::device_memory& figures = row.figures;
    rows.emplace_back(row.run_index, std::string(row.owner), regionprof::memory_device_key(figures.device),
                      figures.allocated_bytes, figures.freed_bytes, figures.allocations, figures.frees,
                      figures.peak_allocated_bytes);
  }
  return rows;
}

void add_profile_extras(nb::module_& m) {
  m.def("expand_output_path", &output_path_here,
        nb::arg("pattern"), nb::arg("window").none() = nb::none(), nb::arg("process_index").none() = nb::none(),
        nb::arg("process_count").none() = nb::none(),
        "The path an output pattern names in this process (%r rank, %l local rank, %h host, %p pid, %%); with "
        "`window`, that window's (%w, which the pattern must hold); with `process_index` and `process_count`, "
        "process `process_index`'s of `regionprof run --processes` (%n). Raises ValueError for a pattern that "
        "cannot be used.");
}

}  // namespace regionprof::python
