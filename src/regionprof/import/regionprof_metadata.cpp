// regionprof's own metadata in a Chrome trace, which regionprof's Chrome writer
// (report/chrome_trace.cpp) adds and Kineto writes none of: the top-level 'regionprof' object (target
// type, device tracing, run wall times, module types, the producer's warnings) and the ranges'
// args.domain (NVTX domains).
#include "regionprof/import/regionprof_metadata.hpp"

#include <boost/json.hpp>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "regionprof/import/error_position.hpp"
#include "regionprof/trace/warnings.hpp"

namespace regionprof::import_detail {
namespace {

/// Restores a 'regionprof' object into a trace, over what the importer set.
struct metadata_restorer {
  trace& trace_;
  const input_errors& errors_;
  std::uint64_t offset_;  // of the object in the input

  [[noreturn]] void fail_own(const std::string& problem) {
    errors_.fail(offset_, "'regionprof' object: " + problem);
  }

  void restore_own(const boost::json::object& own) {
    if (const auto* v = own.if_contains("schema_version")) {
      if (!v->is_int64() || v->as_int64() != 1) {
        fail_own("unsupported schema_version " + boost::json::serialize(*v) + " (this reader knows 1)");
      }
    }
    if (const auto* v = own.if_contains("target_type")) {
      if (!v->is_string()) fail_own("'target_type' must be a string");
      trace_.target.type = std::string(v->as_string());
    }
    if (const auto* v = own.if_contains("device_tracing")) {
      if (!v->is_bool()) fail_own("'device_tracing' must be a boolean");
      trace_.device_tracing = v->as_bool();
    }
    if (const auto* v = own.if_contains("run_wall_times_ns")) {
      if (!v->is_array()) fail_own("'run_wall_times_ns' must be an array of integers");
      for (const auto& t : v->as_array()) {
        if (t.is_int64()) trace_.run_wall_times_ns.push_back(t.as_int64());
        else if (t.is_uint64() && t.as_uint64() <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
          trace_.run_wall_times_ns.push_back(static_cast<std::int64_t>(t.as_uint64()));
        else fail_own("'run_wall_times_ns' must be an array of integers");
      }
    }
    if (const auto* v = own.if_contains("module_types")) {
      if (!v->is_object()) fail_own("'module_types' must be an object of strings");
      for (const auto& [region, type] : v->as_object()) {
        if (!type.is_string()) fail_own("'module_types' must be an object of strings");
        trace_.module_types[std::string(region)] = std::string(type.as_string());
      }
    }
    if (const auto* v = own.if_contains("warnings")) {
      if (!v->is_array()) fail_own("'warnings' must be an array");
      std::vector<warning> restored;
      for (const auto& w : v->as_array()) {
        const auto* object = w.if_object();
        const auto* code = object != nullptr ? object->if_contains("code") : nullptr;
        const auto* source = object != nullptr ? object->if_contains("source") : nullptr;
        const auto* message = object != nullptr ? object->if_contains("message") : nullptr;
        if (code == nullptr || !code->is_string() || source == nullptr || !source->is_string() || message == nullptr ||
            !message->is_string()) {
          fail_own("each warning must be an object with string 'code', 'source' and 'message'");
        }
        const auto parsed_code = warning_code_from_string(code->as_string());
        if (!parsed_code) fail_own("unknown warning code " + quote_text(code->as_string()));
        const auto parsed_source = warning_source_from_string(source->as_string());
        if (!parsed_source) fail_own("unknown warning source " + quote_text(source->as_string()));
        restored.push_back({*parsed_code, *parsed_source, std::string(message->as_string())});
      }
      // The producer's warnings come first, the importer's own after them.
      trace_.warnings.insert(trace_.warnings.begin(), restored.begin(), restored.end());
    }
  }
};

}  // namespace

void restore_regionprof_metadata(trace& t, const boost::json::object& own, const input_errors& errors,
                                 std::uint64_t offset) {
  metadata_restorer{t, errors, offset}.restore_own(own);
}

domain_index restore_domain(trace& t, std::string_view name) { return t.domain(name); }

}  // namespace regionprof::import_detail
