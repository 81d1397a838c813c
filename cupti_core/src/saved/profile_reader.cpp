// The saved-profile reader: JSON (report/json_with_number_text) -> saved_profile, checking each key it
// models against schema_version 1 and naming the key's path in every error.
#include "regionprof/profile_reader.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <utility>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/string.hpp>

#include "regionprof/import.hpp"
#include "json/json_text.hpp"
#include "json/json_with_number_text.hpp"

namespace regionprof {
namespace {

namespace json = boost::json;
using report_detail::json_location;

constexpr std::uint64_t supported_schema_version = 1;

std::string full_message(const std::string& file, const std::string& path, const std::string& problem) {
  return path.empty() ? file + ": " + problem : file + ": " + path + ": " + problem;
}

const char* kind_name(const json::value& value) {
  switch (value.kind()) {
    case json::kind::null: return "null";
    case json::kind::bool_: return "a boolean";
    case json::kind::int64:
    case json::kind::uint64: return "an integer";
    case json::kind::double_: return "a non-integer number";
    case json::kind::string: return "a string";
    case json::kind::array: return "an array";
    case json::kind::object: return "an object";
  }
  return "a value";
}

/// Walks one document; every accessor names the key's location when it throws.
class reader {
 public:
  reader(const std::string& file, const std::unordered_map<std::string, std::string>& double_texts)
      : file_(file), double_texts_(double_texts) {}

  [[noreturn]] void fail(const json_location& at, const std::string& problem) const {
    throw profile_read_error(file_, at.text(), problem);
  }
  [[noreturn]] void expected(const json_location& at, const char* what, const json::value& found) const {
    fail(at, std::string("expected ") + what + ", found " + kind_name(found));
  }

  /// The member `name` of `object`, or nullptr when absent or null.
  static const json::value* optional_member(const json::object& object, std::string_view name) {
    const json::value* value = object.if_contains(json::string_view(name.data(), name.size()));
    return value != nullptr && !value->is_null() ? value : nullptr;
  }
  const json::value& required_member(const json::object& object, const json_location& at,
                                     std::string_view name) const {
    const json::value* value = optional_member(object, name);
    if (value == nullptr) fail(at.member(name), "required key missing");
    return *value;
  }

  const json::object& as_object(const json::value& value, const json_location& at) const {
    if (!value.is_object()) expected(at, "an object", value);
    return value.get_object();
  }
  const json::array& as_array(const json::value& value, const json_location& at) const {
    if (!value.is_array()) expected(at, "an array", value);
    return value.get_array();
  }
  std::string as_string(const json::value& value, const json_location& at) const {
    if (!value.is_string()) expected(at, "a string", value);
    return std::string(value.get_string());
  }
  std::uint64_t as_unsigned(const json::value& value, const json_location& at) const {
    if (value.is_uint64()) return value.get_uint64();
    if (value.is_int64() && value.get_int64() >= 0) return static_cast<std::uint64_t>(value.get_int64());
    if (value.is_int64()) fail(at, "expected an unsigned integer, found " + std::to_string(value.get_int64()));
    expected(at, "an unsigned integer", value);
  }
  /// Microseconds -> ns, exactly from the number's text (integers exactly from their value).
  std::int64_t as_ns(const json::value& value, const json_location& at) const {
    constexpr std::int64_t max_us = std::numeric_limits<std::int64_t>::max() / 1000;
    if (value.is_int64()) {
      const std::int64_t us = value.get_int64();
      if (us > max_us || us < -max_us) fail(at, "microseconds out of range (ns must fit in int64)");
      return us * 1000;
    }
    if (value.is_uint64()) {
      if (value.get_uint64() > static_cast<std::uint64_t>(max_us)) {
        fail(at, "microseconds out of range (ns must fit in int64)");
      }
      return static_cast<std::int64_t>(value.get_uint64()) * 1000;
    }
    if (!value.is_double()) expected(at, "a number (microseconds)", value);
    const auto text = double_texts_.find(at.key());
    std::optional<std::int64_t> ns;
    if (text != double_texts_.end()) {
      ns = microseconds_text_to_ns(text->second);
    } else {
      // Not reached for documents from parse_json_with_number_text; kept for any other DOM.
      std::string shortest;
      report_detail::append_double(shortest, value.get_double());
      ns = microseconds_text_to_ns(shortest);
    }
    if (!ns) fail(at, "microseconds out of range (ns must fit in int64)");
    return *ns;
  }

  std::optional<std::int64_t> optional_ns(const json::object& object, const json_location& at,
                                          std::string_view name) const {
    const json::value* value = optional_member(object, name);
    if (value == nullptr) return std::nullopt;
    return as_ns(*value, at.member(name));
  }
  std::string optional_string(const json::object& object, const json_location& at, std::string_view name) const {
    const json::value* value = optional_member(object, name);
    return value != nullptr ? as_string(*value, at.member(name)) : std::string();
  }
  /// The member `name` as an object, or nullptr when absent or null.
  const json::object* optional_object(const json::object& object, const json_location& at,
                                      std::string_view name) const {
    const json::value* value = optional_member(object, name);
    return value != nullptr ? &as_object(*value, at.member(name)) : nullptr;
  }
  const json::array* optional_array(const json::object& object, const json_location& at,
                                    std::string_view name) const {
    const json::value* value = optional_member(object, name);
    return value != nullptr ? &as_array(*value, at.member(name)) : nullptr;
  }

  saved_region_time region_time(const json::value& value, const json_location& at) const {
    const json::object& object = as_object(value, at);
    saved_region_time region;
    region.region_id = as_string(required_member(object, at, "region_id"), at.member("region_id"));
    region.calls = as_unsigned(required_member(object, at, "calls"), at.member("calls"));
    region.cpu_ns = as_ns(required_member(object, at, "cpu_time_us"), at.member("cpu_time_us"));
    region.device_ns = optional_ns(object, at, "device_time_us");
    region.off_thread_cpu_ns = optional_ns(object, at, "off_thread_cpu_time_us");
    return region;
  }

  saved_tree_node tree_node(const json::value& value, const json_location& at) const {
    const json::object& object = as_object(value, at);
    saved_tree_node node;
    const json_location path_at = at.member("path");
    const json::array& path = as_array(required_member(object, at, "path"), path_at);
    if (path.empty()) fail(path_at, "expected a non-empty array of region ids");
    node.path.reserve(path.size());
    for (std::size_t i = 0; i < path.size(); ++i) node.path.push_back(as_string(path[i], path_at.element(i)));
    node.calls = as_unsigned(required_member(object, at, "calls"), at.member("calls"));
    node.cpu_ns = as_ns(required_member(object, at, "cpu_time_us"), at.member("cpu_time_us"));
    node.self_cpu_ns = as_ns(required_member(object, at, "self_cpu_time_us"), at.member("self_cpu_time_us"));
    node.device_ns = optional_ns(object, at, "device_time_us");
    node.self_device_ns = optional_ns(object, at, "self_device_time_us");
    return node;
  }

  saved_run run(const json::value& value, const json_location& at) const {
    const json::object& object = as_object(value, at);
    saved_run run;
    run.run_index = as_unsigned(required_member(object, at, "run_index"), at.member("run_index"));

    const json_location timing_at = at.member("timing");
    const json::object& timing = as_object(required_member(object, at, "timing"), timing_at);
    run.wall_ns = as_ns(required_member(timing, timing_at, "wall_time_us"), timing_at.member("wall_time_us"));
    run.cpu_ns = as_ns(required_member(timing, timing_at, "cpu_time_us"), timing_at.member("cpu_time_us"));
    run.device_ns = optional_ns(timing, timing_at, "device_time_us");
    run.device_busy_ns = optional_ns(timing, timing_at, "device_busy_us");
    run.device_span_ns = optional_ns(timing, timing_at, "device_span_us");

    const json_location regions_at = at.member("regions");
    const json::array& regions = as_array(required_member(object, at, "regions"), regions_at);
    run.regions.reserve(regions.size());
    for (std::size_t i = 0; i < regions.size(); ++i) run.regions.push_back(region_time(regions[i], regions_at.element(i)));

    const json_location residual_at = at.member("residual");
    const json::object& residual = as_object(required_member(object, at, "residual"), residual_at);
    run.residual.cpu_ns = as_ns(required_member(residual, residual_at, "cpu_time_us"), residual_at.member("cpu_time_us"));
    run.residual.device_ns = optional_ns(residual, residual_at, "device_time_us");

    if (const json::array* tree = optional_array(object, at, "tree")) {
      const json_location tree_at = at.member("tree");
      run.tree.emplace();
      run.tree->reserve(tree->size());
      for (std::size_t i = 0; i < tree->size(); ++i) run.tree->push_back(tree_node((*tree)[i], tree_at.element(i)));
    }
    return run;
  }

  saved_region region(const json::value& value, const json_location& at) const {
    const json::object& object = as_object(value, at);
    saved_region region;
    region.id = optional_string(object, at, "id");
    region.name = optional_string(object, at, "name");
    region.kind = optional_string(object, at, "kind");
    region.module_type = optional_string(object, at, "module_type");
    return region;
  }

  saved_warning warning_entry(const json::value& value, const json_location& at) const {
    const json::object& object = as_object(value, at);
    saved_warning item;
    item.code_text = optional_string(object, at, "code");
    item.code = warning_code_from_string(item.code_text);
    item.source_text = optional_string(object, at, "source");
    item.source = warning_source_from_string(item.source_text);
    item.message = optional_string(object, at, "message");
    return item;
  }

  void read(const json::value& document, saved_profile& out) const {
    const json_location root;
    if (!document.is_object()) {
      fail(root, std::string("not a regionprof profile (the document is ") + kind_name(document) + ", not an object)");
    }
    const json::object& top = document.get_object();
    const json::value* version = optional_member(top, "schema_version");
    if (version == nullptr) fail(root, "not a regionprof profile (no schema_version)");
    out.schema_version = as_unsigned(*version, root.member("schema_version"));
    if (out.schema_version != supported_schema_version) {
      fail(root, "schema_version " + std::to_string(out.schema_version) + " is not supported (this reader reads " +
                     std::to_string(supported_schema_version) + ")");
    }

    out.created_at = optional_string(top, root, "created_at");
    if (const json::object* tool = optional_object(top, root, "tool")) {
      const json_location at = root.member("tool");
      out.tool_name = optional_string(*tool, at, "name");
      out.tool_version = optional_string(*tool, at, "version");
    }
    if (const json::object* config = optional_object(top, root, "config")) {
      const json_location at = root.member("config");
      if (const json::value* marker = optional_member(*config, "run_marker")) {
        out.run_marker = as_string(*marker, at.member("run_marker"));
      }
    }
    if (const json::object* target = optional_object(top, root, "target")) {
      out.target_type = optional_string(*target, root.member("target"), "type");
    }

    const json_location runs_at = root.member("runs");
    const json::array& runs = as_array(required_member(top, root, "runs"), runs_at);
    out.runs.reserve(runs.size());
    for (std::size_t i = 0; i < runs.size(); ++i) out.runs.push_back(run(runs[i], runs_at.element(i)));

    if (const json::array* regions = optional_array(top, root, "regions")) {
      const json_location at = root.member("regions");
      out.regions.reserve(regions->size());
      for (std::size_t i = 0; i < regions->size(); ++i) out.regions.push_back(region((*regions)[i], at.element(i)));
    }
    if (const json::array* warnings = optional_array(top, root, "warnings")) {
      const json_location at = root.member("warnings");
      out.warnings.reserve(warnings->size());
      for (std::size_t i = 0; i < warnings->size(); ++i) {
        out.warnings.push_back(warning_entry((*warnings)[i], at.element(i)));
      }
    }
  }

 private:
  const std::string& file_;
  const std::unordered_map<std::string, std::string>& double_texts_;
};

}  // namespace

profile_read_error::profile_read_error(std::string file, std::string path, std::string problem, std::uint64_t line,
                                       std::uint64_t column)
    : std::runtime_error(full_message(file, path, problem)),
      file_(std::move(file)),
      path_(std::move(path)),
      problem_(std::move(problem)),
      line_(line),
      column_(column) {}

saved_profile read_profile_text(std::string_view text, const std::string& name) {
  report_detail::json_with_number_text parsed;
  report_detail::json_syntax_error syntax;
  if (!report_detail::parse_json_with_number_text(text, parsed, syntax)) {
    throw profile_read_error(name, "",
                             "invalid JSON at line " + std::to_string(syntax.line) + ", column " +
                                 std::to_string(syntax.column) + " (byte offset " + std::to_string(syntax.offset) +
                                 "): " + syntax.message,
                             syntax.line, syntax.column);
  }
  saved_profile profile;
  profile.file = name;
  reader(name, parsed.double_texts).read(parsed.document, profile);
  profile.document = std::move(parsed.document);
  return profile;
}

saved_profile read_profile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw profile_read_error(path, "", std::string("cannot open: ") + std::strerror(errno));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw profile_read_error(path, "", std::string("cannot read: ") + std::strerror(errno));
  return read_profile_text(text, path);
}

}  // namespace regionprof
