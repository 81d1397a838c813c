// Kineto / torch.profiler Chrome trace import (docs/design.md, "Kineto import"): the entry points of
// regionprof/import/import.hpp over kineto_reader.hpp.
#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "regionprof/import/error_position.hpp"

#include "regionprof/import/byte_source.hpp"
#include "regionprof/import/import.hpp"
#include "regionprof/import/kineto_reader.hpp"
#include "regionprof/trace/trace.hpp"

namespace regionprof {
namespace import_detail {

kineto_reader::kineto_reader(byte_source& source, std::string name,
                             std::function<std::unique_ptr<byte_source>()> reopen,
                             const kineto_import_options& options)
    : errors_(std::move(name), std::move(reopen)),
      options_(options),
      reader_(source, std::max<std::size_t>(options.window_bytes * 4, std::size_t{8} << 20)),
      window_(std::max<std::size_t>(options.window_bytes, 64)),
      mapper_(errors_, reader_) {
  options_.window_bytes = window_;
}

trace kineto_reader::read() {
  read_document();
  trace result = mapper_.finish(target_extra_, own_ ? &*own_ : nullptr, own_offset_);
  // The analysis's sums are int64 ns (trace::time_range_problem); refuse a file that would overflow them.
  if (std::string problem = result.time_range_problem(); !problem.empty()) {
    throw import_error(errors_.file(), problem);
  }
  return result;
}

}  // namespace import_detail

trace import_kineto_trace(const std::string& path, const kineto_import_options& options) {
  auto source = import_detail::open_file_source(path);
  import_detail::kineto_reader reader(*source, path, [path] { return import_detail::open_file_source(path); },
                                      options);
  return reader.read();
}

trace import_kineto_trace_text(std::string_view bytes, const std::string& name, const kineto_import_options& options) {
  auto source = import_detail::open_memory_source(bytes, name);
  import_detail::kineto_reader reader(
      *source, name, [bytes, name] { return import_detail::open_memory_source(bytes, name); }, options);
  return reader.read();
}

}  // namespace regionprof
