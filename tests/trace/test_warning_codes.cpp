// The one table of warning codes (warning_codes.def): every code survives the JSON report and a
// Chrome trace read back by the importer, with its source and message.
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include "regionprof/analysis/analysis.hpp"
#include "regionprof/import/import.hpp"
#include "regionprof/report/report.hpp"
#include "regionprof/trace/warnings.hpp"
#include "support/trace_builder.hpp"

using namespace regionprof;

namespace {

constexpr warning_source sources[] = {warning_source::core, warning_source::nvtx, warning_source::cupti,
                                      warning_source::import};

/// A one-run trace carrying one warning of every code, sources in rotation.
trace trace_with_every_warning() {
  trace t = test::trace_builder().thread(1).marker(0, 1000).range("aot_module:a", 100, 400).build();
  std::size_t i = 0;
  for (const warning_code_info& info : warning_code_table()) {
    t.warnings.push_back({info.code, sources[i++ % 4], "message of " + std::string(info.name)});
  }
  return t;
}

/// The docs table as warning_codes.def renders it: `| `CODE` | `core`, `nvtx` | meaning | action |`.
std::string rendered_docs_table() {
  std::string out = "| code | source | meaning | what to do |\n| --- | --- | --- | --- |\n";
  for (const warning_code_info& info : warning_code_table()) {
    std::string quoted;
    std::string_view rest = info.sources;
    while (!rest.empty()) {
      const std::size_t comma = rest.find(", ");
      if (!quoted.empty()) quoted += ", ";
      quoted += "`" + std::string(rest.substr(0, comma)) + "`";
      rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 2);
    }
    out += "| `" + std::string(info.name) + "` | " + quoted + " | " + std::string(info.meaning) + " | " +
           std::string(info.action) + " |\n";
  }
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(warning_codes)

// docs/report-schema.md's table is warning_codes.def's, row for row: on a mismatch the expected
// block is printed, ready to paste between the markers.
BOOST_AUTO_TEST_CASE(the_docs_table_is_the_code_table) {
  const std::string path = std::string(REGIONPROF_SOURCE_DIR) + "/docs/report-schema.md";
  std::ifstream in(path);
  BOOST_REQUIRE_MESSAGE(in, "cannot read " + path);
  const std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string begin = "<!-- warning-codes:begin -->\n";
  const std::string end = "<!-- warning-codes:end -->";
  const std::size_t from = doc.find(begin);
  const std::size_t to = doc.find(end);
  BOOST_REQUIRE(from != std::string::npos);
  BOOST_REQUIRE(to != std::string::npos && to > from);
  const std::string table = doc.substr(from + begin.size(), to - from - begin.size());
  const std::string expected = rendered_docs_table();
  BOOST_TEST_MESSAGE("expected table:\n" + expected);
  BOOST_TEST(table == expected);
}

BOOST_AUTO_TEST_CASE(the_table_ascends_and_each_name_parses_back) {
  const auto table = warning_code_table();
  BOOST_TEST(table.size() == 31u);
  std::set<std::string_view> names;
  for (std::size_t i = 0; i < table.size(); ++i) {
    if (i > 0) BOOST_TEST((table[i - 1].code < table[i].code));
    BOOST_TEST(to_string(table[i].code) == table[i].name);
    BOOST_TEST((warning_code_from_string(table[i].name) == std::optional<warning_code>(table[i].code)));
    BOOST_TEST(!table[i].meaning.empty());
    BOOST_TEST(!table[i].action.empty());
    BOOST_TEST(table[i].meaning.find('|') == std::string_view::npos);
    BOOST_TEST(table[i].action.find('|') == std::string_view::npos);
    names.insert(table[i].name);
  }
  BOOST_TEST(names.size() == table.size());
  BOOST_TEST(to_string(warning_code::cupti_overhead) == "CUPTI_OVERHEAD");
  BOOST_TEST(to_string(warning_code::region_tree_truncated) == "REGION_TREE_TRUNCATED");
  BOOST_TEST(static_cast<int>(warning_code::region_tree_truncated) == 16);
  BOOST_TEST(to_string(warning_code::rank_mismatch) == "RANK_MISMATCH");
  BOOST_TEST(to_string(warning_code::graph_captured_before_profiling) == "GRAPH_CAPTURED_BEFORE_PROFILING");
  BOOST_TEST(to_string(warning_code::graph_replay_kernels) == "GRAPH_REPLAY_KERNELS");
  BOOST_TEST(to_string(warning_code::compiled_modules) == "COMPILED_MODULES");
  BOOST_TEST(static_cast<int>(warning_code::compiled_modules) == 20);
  BOOST_TEST(to_string(warning_code::noise_target_not_met) == "NOISE_TARGET_NOT_MET");
  BOOST_TEST(static_cast<int>(warning_code::noise_target_not_met) == 21);
  BOOST_TEST(static_cast<int>(warning_code::machine_loaded) == 22);
  BOOST_TEST(static_cast<int>(warning_code::cpu_scaling_enabled) == 23);
  BOOST_TEST(to_string(warning_code::gpu_throttled) == "GPU_THROTTLED");
  BOOST_TEST(static_cast<int>(warning_code::gpu_throttled) == 24);
  BOOST_TEST(to_string(warning_code::one_process_per_side) == "ONE_PROCESS_PER_SIDE");
  BOOST_TEST(static_cast<int>(warning_code::one_process_per_side) == 25);
  BOOST_TEST(to_string(warning_code::unattached_work) == "UNATTACHED_WORK");
  BOOST_TEST(static_cast<int>(warning_code::unattached_work) == 26);
  BOOST_TEST(to_string(warning_code::late_device_records) == "LATE_DEVICE_RECORDS");
  BOOST_TEST(static_cast<int>(warning_code::late_device_records) == 27);
  BOOST_TEST(to_string(warning_code::nvtx_initialized_without_tool) == "NVTX_INITIALIZED_WITHOUT_TOOL");
  BOOST_TEST(static_cast<int>(warning_code::nvtx_initialized_without_tool) == 28);
  BOOST_TEST(to_string(warning_code::ops_via_nvtx) == "OPS_VIA_NVTX");
  BOOST_TEST(static_cast<int>(warning_code::ops_via_nvtx) == 29);
  BOOST_TEST(to_string(warning_code::out_of_memory) == "OUT_OF_MEMORY");
  BOOST_TEST(static_cast<int>(warning_code::out_of_memory) == 30);
  BOOST_TEST(to_string(static_cast<warning_code>(31)) == "UNKNOWN");
  BOOST_TEST(!warning_code_from_string("NOT_A_CODE").has_value());
  BOOST_TEST(!warning_code_from_string("no_run_markers").has_value());
  for (warning_source s : sources) BOOST_TEST((warning_source_from_string(to_string(s)) == std::optional(s)));
  BOOST_TEST(!warning_source_from_string("gpu").has_value());
}

BOOST_AUTO_TEST_CASE(every_code_round_trips_through_the_json_report) {
  const trace t = trace_with_every_warning();
  const analysis_options options;
  const analysis_result result = analyze(t, options);
  const boost::json::array warnings =
      boost::json::parse(to_json(Profile(t, options, report_context{}, result))).at("warnings").as_array();
  BOOST_REQUIRE(warnings.size() >= warning_code_table().size());
  std::size_t i = 0;
  for (const warning_code_info& info : warning_code_table()) {
    const boost::json::object& w = warnings[i].as_object();
    BOOST_TEST(w.at("code").as_string() == info.name);
    BOOST_TEST(w.at("source").as_string() == to_string(sources[i % 4]));
    BOOST_TEST(w.at("message").as_string() == "message of " + std::string(info.name));
    ++i;
  }
}

BOOST_AUTO_TEST_CASE(every_code_round_trips_through_the_chrome_trace) {
  const trace t = trace_with_every_warning();
  std::ostringstream text;
  write_chrome_trace(t, text);
  const trace back = import_kineto_trace_text(text.str(), "every_warning.json");
  BOOST_REQUIRE(back.warnings.size() >= t.warnings.size());
  for (std::size_t i = 0; i < t.warnings.size(); ++i) {
    BOOST_TEST((back.warnings[i].code == t.warnings[i].code));
    BOOST_TEST((back.warnings[i].source == t.warnings[i].source));
    BOOST_TEST(back.warnings[i].message == t.warnings[i].message);
  }
}

BOOST_AUTO_TEST_SUITE_END()
