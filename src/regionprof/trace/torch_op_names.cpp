#include "regionprof/trace/torch_op_names.hpp"

#include <optional>
#include <string>
#include <vector>

namespace regionprof {

std::string_view torch_op_name(std::string_view name) noexcept {
  // One pass over the commas (most names have none): the first ", <key> = " of torch's keys cuts.
  for (std::size_t at = name.find(','); at != std::string_view::npos; at = name.find(',', at + 1)) {
    const std::string_view rest = name.substr(at);
    for (const std::string_view suffix : {", seq = ", ", op_id = ", ", sizes = ", ", input_op_ids = "}) {
      if (rest.starts_with(suffix)) return name.substr(0, at);
    }
  }
  return name;
}

std::size_t strip_torch_op_suffixes(trace& t) {
  // renamed[id]: unset while not looked at; the name id itself when it has no suffix.
  std::vector<std::optional<name_id>> renamed(t.strings.size());
  std::size_t count = 0;
  for (cpu_interval& i : t.intervals) {
    if (i.domain != 0 || i.kind != interval_kind::range) continue;
    std::optional<name_id>& to = renamed[i.name];
    if (!to) {
      const std::string_view name = t.strings.view(i.name);
      const std::string_view op = torch_op_name(name);
      to = op.size() == name.size() ? i.name : t.strings.intern(std::string(op));
    }
    if (*to != i.name) {
      i.name = *to;
      ++count;
    }
  }
  return count;
}

}  // namespace regionprof
