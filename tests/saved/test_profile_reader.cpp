// The saved-profile reader: regionprof's own reports read back into the one result model figure for
// figure (ns exact), a profile as the reference module writes it, and every error naming the file and
// the key.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <unistd.h>

#include <boost/test/unit_test.hpp>

#include "regionprof/report/report.hpp"
#include "regionprof/saved/profile_reader.hpp"
#include "support/report_fixtures.hpp"
#include "support/trace_builder.hpp"

using namespace regionprof;
using namespace report_test;

namespace {

Profile round_trip(const analysis_result& result, const trace& source = trace{}) {
  return read_profile_text(to_json(Profile(source, analysis_options{}, fixed_context(), result)), "round_trip.json");
}

/// The smallest profile the reader accepts, with `run` as the only run.
std::string minimal_with_run(std::string_view run) {
  return std::string(R"({"schema_version": 1, "runs": [)") + std::string(run) + "]}";
}
constexpr std::string_view minimal_run =
    R"({"run_index": 0, "timing": {"wall_time_us": 2.5, "cpu_time_us": 2.0},
        "regions": [{"region_id": "region:a", "calls": 1, "cpu_time_us": 1.5}],
        "residual": {"cpu_time_us": 0.5}})";

/// Checks that reading `text` as `p.json` throws exactly `message`.
void check_error(const std::string& text, const std::string& message) {
  BOOST_TEST_CONTEXT("input: " << text) {
    try {
      (void)read_profile_text(text, "p.json");
      BOOST_ERROR("no profile_read_error; expected: " << message);
    } catch (const profile_read_error& e) {
      BOOST_TEST(std::string(e.what()) == message);
      BOOST_TEST(e.file() == "p.json");
    }
  }
}

std::int64_t read_one_us(std::string_view us_text) {
  const std::string run = R"({"run_index": 0, "timing": {"wall_time_us": 0, "cpu_time_us": )" + std::string(us_text) +
                          R"(}, "regions": [], "residual": {"cpu_time_us": 0}})";
  return read_profile_text(minimal_with_run(run)).result().runs.at(0).cpu_time_ns;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(profile_reader)

BOOST_AUTO_TEST_CASE(device_report_reads_back_every_figure_in_ns) {
  trace source;
  source.target.type = "nvtx_app";
  source.target.rank = 3;
  source.target.host = "node-7";
  const Profile p = round_trip(device_result(), source);

  BOOST_TEST(p.context().created_at == "2024-05-01T12:34:56Z");
  BOOST_TEST(p.context().tool_name == "regionprof");
  BOOST_TEST(p.context().tool_version == REGIONPROF_EXPECTED_VERSION);
  BOOST_TEST(p.options().run_marker.pattern == "regionprof.profiled_run");
  BOOST_TEST((p.options().run_marker.match == match_kind::exact));  // the default marker, whole
  BOOST_TEST(p.options().run_marker.domain.empty());  // the one default marker: any domain
  BOOST_TEST(p.source().target.type == "nvtx_app");
  BOOST_TEST((p.source().target.rank == std::optional<std::uint64_t>(3)));
  BOOST_TEST((p.source().target.host == std::optional<std::string>("node-7")));
  BOOST_TEST(p.source().target.foreign.empty());
  BOOST_TEST(p.source().intervals.empty());

  const analysis_result& r = p.result();
  BOOST_TEST(r.has_device_data);
  BOOST_REQUIRE_EQUAL(r.runs.size(), 2u);
  // Run 0 (report_fixtures.hpp): wall 1 500 000, CPU 1 234 567, device 400 000 (busy 300 000, span 500 000).
  const run_result& r0 = r.runs[0];
  BOOST_TEST(r0.run_index == 0u);
  BOOST_TEST(r0.wall_time_ns == 1500000);
  BOOST_TEST(r0.cpu_time_ns == 1234567);
  BOOST_TEST(r0.device_time_ns.value_or(-1) == 400000);
  BOOST_TEST(r0.device_busy_ns.value_or(-1) == 300000);
  BOOST_TEST(r0.device_span_ns.value_or(-1) == 500000);
  BOOST_REQUIRE_EQUAL(r0.devices.size(), 1u);
  BOOST_TEST(r0.devices[0].device == 0u);
  BOOST_TEST(r0.devices[0].device_time_ns == 400000);
  BOOST_TEST(r0.devices[0].device_busy_ns == 300000);
  BOOST_TEST(r0.devices[0].device_span_ns == 500000);
  BOOST_REQUIRE_EQUAL(r0.regions.size(), 2u);
  BOOST_TEST(r.regions.at(r0.regions[0].region).id == "aot_module:encoder");
  BOOST_TEST(r0.regions[0].calls == 2u);
  BOOST_TEST(r0.regions[0].cpu_time_ns == 600000);
  BOOST_TEST(r0.regions[0].device_time_ns.value_or(-1) == 250000);
  BOOST_TEST(!r0.regions[0].off_thread_cpu_time_ns.has_value());
  BOOST_TEST(r.regions.at(r0.regions[1].region).id == "untuned_module:head");
  BOOST_TEST(r0.regions[1].calls == 1u);
  BOOST_TEST(r0.regions[1].cpu_time_ns == 34567);
  BOOST_TEST(r0.regions[1].device_time_ns.value_or(-1) == 50000);
  BOOST_TEST(r0.regions[1].off_thread_cpu_time_ns.value_or(-1) == 12345);
  // Residual: 1 234 567 - 634 567 = 600 000 CPU; 400 000 - 300 000 = 100 000 device.
  BOOST_TEST(r0.residual_cpu_ns == 600000);
  BOOST_TEST(r0.residual_device_ns.value_or(-1) == 100000);

  // Run 1: zero-length (no fractions written), wall 1 000 ns.
  const run_result& r1 = r.runs[1];
  BOOST_TEST(r1.run_index == 1u);
  BOOST_TEST(r1.wall_time_ns == 1000);
  BOOST_TEST(r1.cpu_time_ns == 0);
  BOOST_TEST(r1.device_time_ns.value_or(-1) == 0);
  BOOST_TEST(r1.device_busy_ns.value_or(-1) == 0);
  BOOST_TEST(r1.device_span_ns.value_or(-1) == 0);
  BOOST_REQUIRE_EQUAL(r1.regions.size(), 1u);
  BOOST_TEST(r1.regions[0].region == 0u);
  BOOST_TEST(r1.regions[0].calls == 1u);
  BOOST_TEST(r1.regions[0].cpu_time_ns == 0);
  BOOST_TEST(r1.regions[0].device_time_ns.value_or(-1) == 0);
  BOOST_TEST(r1.residual_cpu_ns == 0);
  BOOST_TEST(r1.residual_device_ns.value_or(-1) == 0);

  BOOST_REQUIRE_EQUAL(r.regions.size(), 2u);
  BOOST_TEST(r.regions[0].id == "aot_module:encoder");
  BOOST_TEST(r.regions[0].name == "encoder");
  BOOST_TEST(r.regions[0].kind == "aot_module");
  BOOST_TEST(r.regions[0].module_type == "-");
  BOOST_TEST(r.regions[1].id == "untuned_module:head");
  BOOST_TEST(r.regions[1].name == "head");
  BOOST_TEST(r.regions[1].kind == "untuned_module");
  BOOST_TEST(r.regions[1].module_type == "torch::nn::Linear");

  BOOST_REQUIRE_EQUAL(r.warnings.size(), 2u);
  BOOST_TEST((r.warnings[0].code == warning_code::uncorrelated_device_ops));
  BOOST_TEST((r.warnings[0].source == warning_source::core));
  BOOST_TEST(r.warnings[0].message == "2 device ops have a correlation id that matches no API call");
  BOOST_TEST((r.warnings[1].code == warning_code::dropped_device_records));
  BOOST_TEST((r.warnings[1].source == warning_source::cupti));
  BOOST_TEST(r.warnings[1].message == "17 device records were dropped; raise the buffer size to 8 MiB");

  // The key averages, row for row (report_fixtures.hpp), ns exact.
  BOOST_TEST(r.cpu_time_total.sort_by == "cpu_time_total");
  BOOST_TEST(r.cpu_time_total.row_limit == 20u);
  BOOST_REQUIRE_EQUAL(r.cpu_time_total.rows.size(), 3u);
  BOOST_TEST(r.cpu_time_total.rows[0].key == "aten::mm");
  BOOST_TEST(r.cpu_time_total.rows[0].count == 4u);
  BOOST_TEST(r.cpu_time_total.rows[0].self_cpu_time_ns == 100000);
  BOOST_TEST(r.cpu_time_total.rows[0].cpu_time_total_ns == 300000);
  BOOST_TEST(r.cpu_time_total.rows[0].device_time_total_ns.value_or(-1) == 200000);
  BOOST_TEST_REQUIRE(r.device_time_total.has_value());
  BOOST_TEST(r.device_time_total->row_limit == 5u);
  BOOST_TEST(r.device_time_total->rows.at(1).key == "Memcpy HtoD");
  BOOST_TEST((r.device_time_total->rows.at(1).type == device_type::cuda));

  // Written again, the file comes back byte for byte (fractions and summaries recomputed).
  BOOST_TEST(to_json(p) == to_json(Profile(source, analysis_options{}, fixed_context(), device_result())));
}

BOOST_AUTO_TEST_CASE(cpu_only_report_has_no_device_figures) {
  const Profile p = round_trip(cpu_only_result());
  const analysis_result& r = p.result();
  BOOST_TEST(!r.has_device_data);
  BOOST_TEST(!r.device_time_total.has_value());
  BOOST_REQUIRE_EQUAL(r.runs.size(), 1u);
  const run_result& run = r.runs[0];
  BOOST_TEST(run.wall_time_ns == 2000);
  BOOST_TEST(run.cpu_time_ns == 1000);
  BOOST_TEST(!run.device_time_ns.has_value());
  BOOST_TEST(!run.device_busy_ns.has_value());
  BOOST_TEST(!run.device_span_ns.has_value());
  BOOST_TEST(run.devices.empty());
  BOOST_REQUIRE_EQUAL(run.regions.size(), 1u);
  BOOST_TEST(r.regions.at(run.regions[0].region).id == "region:stage");
  BOOST_TEST(run.regions[0].calls == 3u);
  BOOST_TEST(run.regions[0].cpu_time_ns == 700);
  BOOST_TEST(!run.regions[0].device_time_ns.has_value());
  BOOST_TEST(run.residual_cpu_ns == 300);
  BOOST_TEST(!run.residual_device_ns.has_value());
  BOOST_TEST(r.warnings.empty());
  BOOST_REQUIRE_EQUAL(r.regions.size(), 1u);
  BOOST_TEST(r.regions[0].id == "region:stage");
  BOOST_TEST(to_json(p) == to_json(Profile(trace{}, analysis_options{}, fixed_context(), cpu_only_result())));
}

// The writer's doubles (ns / 1000, shortest decimal) come back to the same ns, up to 2^52 ns (52 days).
BOOST_AUTO_TEST_CASE(writer_doubles_come_back_to_the_same_ns) {
  const std::int64_t values[] = {1, 7, 999, 1000, 1001, 123456789, 987654321012, 4503599627370495};
  for (const std::int64_t ns : values) {
    BOOST_TEST_CONTEXT("ns = " << ns) {
      analysis_result result = cpu_only_result();
      result.runs[0].wall_time_ns = ns;
      result.runs[0].cpu_time_ns = ns;
      result.runs[0].regions[0].cpu_time_ns = ns - 1;
      result.runs[0].residual_cpu_ns = 1;
      const run_result run = round_trip(result).result().runs.at(0);
      BOOST_TEST(run.wall_time_ns == ns);
      BOOST_TEST(run.cpu_time_ns == ns);
      BOOST_TEST(run.regions.at(0).cpu_time_ns == ns - 1);
      BOOST_TEST(run.residual_cpu_ns == 1);
    }
  }
}

// From the decimal text, never a double: values a double cannot hold come back exactly.
BOOST_AUTO_TEST_CASE(microseconds_are_converted_from_their_text) {
  BOOST_TEST(read_one_us("1234.567") == 1234567);
  BOOST_TEST(read_one_us("1682725898236567.123") == 1682725898236567123);  // 19 significant digits
  BOOST_TEST(read_one_us("0.0005") == 0);  // half to even
  BOOST_TEST(read_one_us("0.0015") == 2);
  BOOST_TEST(read_one_us("1e-05") == 0);   // Python's repr of 0.00001
  BOOST_TEST(read_one_us("1.5e3") == 1500000);
  BOOST_TEST(read_one_us("12") == 12000);  // integers exactly
  BOOST_TEST(read_one_us("-2.5") == -2500);
  BOOST_TEST(read_one_us("9223372036854775") == 9223372036854775000);
}

BOOST_AUTO_TEST_CASE(repeated_keys_keep_the_last_member_everywhere) {
  const std::string run = R"({"run_index": 0, "timing": {"wall_time_us": 1.25, "cpu_time_us": 1.001, "cpu_time_us": 2.002},
      "regions": [], "residual": {"cpu_time_us": 0.5}})";
  const Profile p = read_profile_text(minimal_with_run(run));
  BOOST_TEST(p.result().runs.at(0).cpu_time_ns == 2002);
  BOOST_TEST(p.result().runs.at(0).wall_time_ns == 1250);
}

// A key with a `.` does not stand for a nested key when the reader looks up a number's text.
BOOST_AUTO_TEST_CASE(dotted_keys_do_not_alias_nested_ones) {
  const std::string run = R"({"run_index": 0, "timing.cpu_time_us": 9.999,
      "timing": {"wall_time_us": 1.25, "cpu_time_us": 1.001}, "regions": [], "residual": {"cpu_time_us": 0.5}})";
  BOOST_TEST(read_profile_text(minimal_with_run(run)).result().runs.at(0).cpu_time_ns == 1001);
}

// As the reference module (NVIDIA AITune runtime_profile) writes it: Python floats, no region_summary,
// another tool, device fields omitted or null, a warning code regionprof does not have.
BOOST_AUTO_TEST_CASE(reference_module_profile_reads) {
  const std::string text = R"({
  "schema_version": 1,
  "created_at": "2025-01-02T03:04:05+00:00",
  "tool": {"name": "aitune", "version": "0.9.1"},
  "config": {"warmup_runs": 2, "measured_runs": 2, "uses_inference_function": false},
  "target": {"type": "torch.nn.Module", "class": "ResNet"},
  "input": {"args_count": 1, "kwargs": []},
  "runs": [
    {"run_index": 0,
     "timing": {"wall_time_us": 1520.25, "cpu_time_us": 1500.0, "device_time_us": 830.125},
     "regions": [{"region_id": "aot_module:backbone", "calls": 1, "cpu_time_us": 1200.5, "cpu_time_fraction": 0.8003333333333333,
                  "device_time_us": 800.0, "device_time_fraction": 0.9637}],
     "residual": {"cpu_time_us": 299.5, "cpu_time_fraction": 0.19966666666666666, "device_time_us": 30.125,
                  "device_time_fraction": 0.0363}},
    {"run_index": 1,
     "timing": {"wall_time_us": 1e-05, "cpu_time_us": 0.0},
     "regions": [{"region_id": "untuned_module:fc", "calls": 3, "cpu_time_us": 0.0, "device_time_us": null}],
     "residual": {"cpu_time_us": 0.0}}
  ],
  "profiler": {"activities": ["CPU"], "key_averages": {}},
  "regions": [{"id": "aot_module:backbone", "name": "backbone", "kind": "aot_module"}],
  "warnings": [{"code": "UNMAPPED_REGION_EVENTS", "message": "3 events", "source": "core"},
               {"code": "SOMETHING_NEW", "message": "from a newer tool", "source": "elsewhere"}]
})";
  const Profile p = read_profile_text(text, "aitune.json");
  BOOST_TEST(p.context().tool_name == "aitune");
  BOOST_TEST(p.context().tool_version == "0.9.1");
  BOOST_TEST(p.context().created_at == "2025-01-02T03:04:05+00:00");
  BOOST_TEST(p.context().warmup_runs == 2u);
  BOOST_TEST(p.context().measured_runs == 2u);
  BOOST_TEST(p.context().input.args_count == 1u);
  BOOST_TEST((p.options().run_marker.match == default_run_marker().match));  // no run_marker: the default
  BOOST_TEST(p.source().target.type == "torch.nn.Module");
  BOOST_TEST(test::members_json(p.source().target) == R"({"class":"ResNet"})");  // another tool's: foreign
  const analysis_result& r = p.result();
  BOOST_TEST(r.has_device_data);  // run 0 has device_time_us
  BOOST_REQUIRE_EQUAL(r.runs.size(), 2u);
  BOOST_TEST(r.runs[0].wall_time_ns == 1520250);
  BOOST_TEST(r.runs[0].cpu_time_ns == 1500000);
  BOOST_TEST(r.runs[0].device_time_ns.value_or(-1) == 830125);
  BOOST_TEST(!r.runs[0].device_busy_ns.has_value());
  BOOST_TEST(r.regions.at(r.runs[0].regions.at(0).region).id == "aot_module:backbone");
  BOOST_TEST(r.runs[0].regions.at(0).calls == 1u);
  BOOST_TEST(r.runs[0].regions.at(0).cpu_time_ns == 1200500);
  BOOST_TEST(r.runs[0].regions.at(0).device_time_ns.value_or(-1) == 800000);
  BOOST_TEST(r.runs[0].residual_cpu_ns == 299500);
  BOOST_TEST(r.runs[0].residual_device_ns.value_or(-1) == 30125);
  BOOST_TEST(r.runs[1].wall_time_ns == 0);  // 0.01 ns, rounded
  BOOST_TEST(r.runs[1].cpu_time_ns == 0);
  // With device data, a device time left out (or null) reads as 0, as the analysis would write it.
  BOOST_TEST(r.runs[1].device_time_ns.value_or(-1) == 0);
  BOOST_TEST(r.runs[1].regions.at(0).calls == 3u);
  BOOST_TEST(r.runs[1].regions.at(0).device_time_ns.value_or(-1) == 0);
  BOOST_TEST(r.runs[1].residual_device_ns.value_or(-1) == 0);
  // `regions` first, then the ids only `runs` name (kind and name split at the first ':').
  BOOST_REQUIRE_EQUAL(r.regions.size(), 2u);
  BOOST_TEST(r.regions[0].name == "backbone");
  BOOST_TEST(r.regions[0].module_type == "-");
  BOOST_TEST(r.regions[1].id == "untuned_module:fc");
  BOOST_TEST(r.regions[1].kind == "untuned_module");
  BOOST_TEST(r.regions[1].name == "fc");
  // A warning code regionprof does not know has no place in the model: left out.
  BOOST_REQUIRE_EQUAL(r.warnings.size(), 1u);
  BOOST_TEST((r.warnings[0].code == warning_code::unmapped_region_events));
  BOOST_TEST(r.warnings[0].message == "3 events");
  BOOST_TEST(r.cpu_time_total.rows.empty());
}

BOOST_AUTO_TEST_CASE(minimal_profile_reads) {
  const Profile p = read_profile_text(minimal_with_run(minimal_run));
  BOOST_TEST(p.context().tool_name.empty());
  BOOST_TEST(p.context().created_at.empty());
  const analysis_result& r = p.result();
  BOOST_TEST(r.regions.size() == 1u);  // named only in the run
  BOOST_TEST(r.warnings.empty());
  BOOST_TEST(!r.has_region_tree);
  BOOST_REQUIRE_EQUAL(r.runs.size(), 1u);
  BOOST_TEST(r.runs[0].wall_time_ns == 2500);
  BOOST_TEST(r.runs[0].regions.at(0).cpu_time_ns == 1500);
  BOOST_TEST(r.runs[0].residual_cpu_ns == 500);
}

BOOST_AUTO_TEST_CASE(invalid_json_names_line_and_column) {
  check_error("{\"schema_version\": 1,\n  \"runs\": [}", "p.json: invalid JSON at line 2, column 12 (byte offset 33): syntax error");
  check_error("", "p.json: invalid JSON at line 1, column 1 (byte offset 0): incomplete JSON");
  check_error(minimal_with_run(minimal_run) + " x", "p.json: invalid JSON at line 3, column 45 (byte offset 225): extra data");
  try {
    (void)read_profile_text("[\n\n  1,,]", "p.json");
    BOOST_ERROR("no error");
  } catch (const profile_read_error& e) {
    BOOST_TEST(e.line() == 3u);
    BOOST_TEST(e.column() == 5u);
    BOOST_TEST(e.path().empty());
  }
}

BOOST_AUTO_TEST_CASE(not_a_profile_or_another_schema) {
  check_error("[1, 2]", "p.json: not a regionprof profile (the document is an array, not an object)");
  check_error(R"({"runs": []})", "p.json: not a regionprof profile (no schema_version)");
  check_error(R"({"schema_version": 2, "runs": []})", "p.json: schema_version 2 is not supported (this reader reads 1)");
  check_error(R"({"schema_version": "1", "runs": []})",
              "p.json: schema_version: expected an unsigned integer, found a string");
  check_error(R"({"schema_version": 1})", "p.json: runs: required key missing");
  check_error(R"({"schema_version": 1, "runs": {}})", "p.json: runs: expected an array, found an object");
}

BOOST_AUTO_TEST_CASE(each_wrong_key_is_named_by_its_path) {
  const std::string ok(minimal_run);
  const auto with = [&](std::string_view from, std::string_view to) {
    std::string run = ok;
    const std::size_t at = run.find(from);
    BOOST_REQUIRE(at != std::string::npos);
    run.replace(at, from.size(), to);
    return R"({"schema_version": 1, "runs": [)" + ok + ", " + ok + ", " + run + "]}";
  };
  check_error(with(R"("calls": 1)", R"("calls": "1")"),
              "p.json: runs[2].regions[0].calls: expected an unsigned integer, found a string");
  check_error(with(R"("calls": 1)", R"("calls": -1)"), "p.json: runs[2].regions[0].calls: expected an unsigned integer, found -1");
  check_error(with(R"("calls": 1)", R"("calls": 1.5)"),
              "p.json: runs[2].regions[0].calls: expected an unsigned integer, found a non-integer number");
  check_error(with(R"("calls": 1, )", ""), "p.json: runs[2].regions[0].calls: required key missing");
  check_error(with(R"("region_id": "region:a")", R"("region_id": 7)"),
              "p.json: runs[2].regions[0].region_id: expected a string, found an integer");
  check_error(with(R"("run_index": 0)", R"("run_index": true)"),
              "p.json: runs[2].run_index: expected an unsigned integer, found a boolean");
  check_error(with(R"("cpu_time_us": 2.0)", R"("cpu_time_us": "2.0")"),
              "p.json: runs[2].timing.cpu_time_us: expected a number (microseconds), found a string");
  check_error(with(R"("cpu_time_us": 2.0)", R"("cpu_time_us": 1e300)"),
              "p.json: runs[2].timing.cpu_time_us: microseconds out of range (ns must fit in int64)");
  check_error(with(R"("cpu_time_us": 2.0)", R"("cpu_time_us": 9223372036854776)"),
              "p.json: runs[2].timing.cpu_time_us: microseconds out of range (ns must fit in int64)");
  check_error(with(R"("wall_time_us": 2.5, )", ""), "p.json: runs[2].timing.wall_time_us: required key missing");
  check_error(with(R"("residual": {"cpu_time_us": 0.5})", R"("residual": [])"),
              "p.json: runs[2].residual: expected an object, found an array");
  check_error(with(R"("residual": {"cpu_time_us": 0.5})", R"("residual": {"device_time_us": 0.5})"),
              "p.json: runs[2].residual.cpu_time_us: required key missing");
  check_error(with(R"("regions": [{)", R"("regions": [{"device_time_us": "x", )"),
              "p.json: runs[2].regions[0].device_time_us: expected a number (microseconds), found a string");
  check_error(with(R"("timing": {)", R"("timing": {"device_span_us": [], )"),
              "p.json: runs[2].timing.device_span_us: expected a number (microseconds), found an array");
  check_error(minimal_with_run("3"), "p.json: runs[0]: expected an object, found an integer");

  const std::string profile = minimal_with_run(minimal_run);
  const auto top = [&](std::string_view members) {
    return std::string(R"({"schema_version": 1, )") + std::string(members) + profile.substr(profile.find(R"("runs")"));
  };
  check_error(top(R"("warnings": [{"code": 5}], )"), "p.json: warnings[0].code: expected a string, found an integer");
  check_error(top(R"("warnings": [{"code": "X"}, 1], )"), "p.json: warnings[1]: expected an object, found an integer");
  check_error(top(R"("regions": [{"id": "a", "module_type": false}], )"),
              "p.json: regions[0].module_type: expected a string, found a boolean");
  check_error(top(R"("tool": "regionprof", )"), "p.json: tool: expected an object, found a string");
  check_error(top(R"("config": {"run_marker": 1}, )"), "p.json: config.run_marker: expected a string, found an integer");
  check_error(top(R"("target": {"type": null, "x": 1}, "created_at": 0, )"),
              "p.json: created_at: expected a string, found an integer");
}

// docs/design.md, rule 20: `region_ops` reads back entry for entry (the residual's by its id) and writes
// the same text; a profile saved without it has none and writes none; an entry whose region_id is
// neither a region of `regions` nor the residual is left out; a wrong type is an error naming the key.
BOOST_AUTO_TEST_CASE(region_ops_read_back_and_name_their_regions) {
  const analysis_result live = device_result_with_ops();
  const Profile saved = round_trip(live);
  const analysis_result& read = saved.result();
  BOOST_TEST(read.has_region_ops);
  BOOST_TEST_REQUIRE(read.region_ops.size() == live.region_ops.size());
  for (std::size_t k = 0; k < live.region_ops.size(); ++k) {
    BOOST_TEST(read.region_ops[k].region == live.region_ops[k].region);
    BOOST_TEST_REQUIRE(read.region_ops[k].rows.size() == live.region_ops[k].rows.size());
    for (std::size_t i = 0; i < live.region_ops[k].rows.size(); ++i) {
      const key_average_row& a = live.region_ops[k].rows[i];
      const key_average_row& b = read.region_ops[k].rows[i];
      BOOST_TEST(b.key == a.key);
      BOOST_TEST((b.type == a.type));
      BOOST_TEST(b.count == a.count);
      BOOST_TEST(b.self_cpu_time_ns == a.self_cpu_time_ns);
      BOOST_TEST(b.cpu_time_total_ns == a.cpu_time_total_ns);
      BOOST_TEST((b.self_device_time_ns == a.self_device_time_ns));
      BOOST_TEST((b.device_time_total_ns == a.device_time_total_ns));
    }
  }
  const std::string text = to_json(Profile(trace{}, analysis_options{}, fixed_context(), live));
  BOOST_TEST(to_json(saved) == text);

  const Profile old = round_trip(device_result());
  BOOST_TEST(!old.result().has_region_ops);
  BOOST_TEST(to_json(old).find("region_ops") == std::string::npos);

  const std::string profile = minimal_with_run(minimal_run);
  const auto with_ops = [&](std::string_view ops) {
    return profile.substr(0, profile.size() - 1) + R"(, "region_ops": )" + std::string(ops) + "}";
  };
  BOOST_TEST(read_profile_text(with_ops(R"x([{"region_id": "region:a", "rows": []}, {"region_id": "(residual)", "rows": []}])x"))
                 .result()
                 .region_ops.size() == 2u);
  const Profile renamed = read_profile_text(with_ops(R"([{"region_id": "region:b", "rows": [{"key": "x"}]}])"));
  BOOST_TEST(renamed.result().has_region_ops);
  BOOST_TEST(renamed.result().region_ops.empty());
  check_error(with_ops(R"([{"region_id": 3, "rows": []}])"),
              "p.json: region_ops[0].region_id: expected a string, found an integer");
  check_error(with_ops(R"([{"region_id": "region:a"}])"), "p.json: region_ops[0].rows: required key missing");
  check_error(with_ops(R"([{"region_id": "region:a", "rows": [3]}])"),
              "p.json: region_ops[0].rows[0]: expected an object, found an integer");
  check_error(with_ops(R"({})"), "p.json: region_ops: expected an array, found an object");
}

// docs/design.md, rule 21: the `memory` of runs, residuals and regions reads back figure for figure and
// writes the same text (the summaries' medians recomputed); a profile without it reads none and writes
// none; devices are stored ascending whatever the file's order; `{}` is no figures; a bad value is an
// error naming the file and the key.
// Rule 21: a live profile with memory events (the analysis's figures, and its key-average rows' bytes)
// reads back and writes the same JSON.
BOOST_AUTO_TEST_CASE(a_live_profile_with_memory_reads_back_byte_for_byte) {
  test::trace_builder b;
  b.thread(1).marker(0, 1000).range("aot_module:a", 100, 400).cpu_op("aten::addmm", 200, 300);
  b.memory(250, 4096, 4096).memory(450, -4096, 0).out_of_memory(460, 1 << 30, 0, 0);
  const Profile live(b.build(), analysis_options{}, fixed_context());
  const std::string text = to_json(live);
  BOOST_TEST(text.find("\"self_allocated_bytes\": 4096") != std::string::npos);
  BOOST_TEST(text.find("OUT_OF_MEMORY") != std::string::npos);
  BOOST_TEST(to_json(read_profile_text(text, "live.json")) == text);
}

BOOST_AUTO_TEST_CASE(memory_reads_back_and_names_bad_values) {
  const analysis_result live = memory_result();
  const Profile saved = round_trip(live);
  const analysis_result& read = saved.result();
  const auto same = [&](std::uint32_t live_index, std::uint32_t read_index) {
    const memory_figures* a = memory_of(live, live_index);
    const memory_figures* b = memory_of(read, read_index);
    BOOST_TEST_REQUIRE((a != nullptr) == (b != nullptr));
    if (a != nullptr) BOOST_TEST((*a == *b));
  };
  BOOST_TEST_REQUIRE(read.runs.size() == 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    same(live.run_memory.at(i).run, read.run_memory.at(i).run);
    same(live.run_memory.at(i).residual, read.run_memory.at(i).residual);
    BOOST_TEST_REQUIRE(read.runs[i].regions.size() == live.runs[i].regions.size());
    for (std::size_t j = 0; j < live.runs[i].regions.size(); ++j) {
      same(live.runs[i].regions[j].memory, read.runs[i].regions[j].memory);
    }
  }
  BOOST_TEST(read.run_memory.at(1).residual == no_memory);
  const std::string text = to_json(Profile(trace{}, analysis_options{}, fixed_context(), live));
  BOOST_TEST(to_json(saved) == text);
  BOOST_TEST(round_trip(device_result()).result().memory.empty());

  const std::string profile = minimal_with_run(minimal_run);
  const auto with_memory = [&](std::string_view memory) {  // the region's memory
    std::string edited = profile;
    const std::size_t at = edited.find(R"("cpu_time_us": 1.5)");
    return edited.insert(at, R"("memory": )" + std::string(memory) + ", ");
  };
  const Profile sorted = read_profile_text(
      with_memory(R"({"cuda:1": {"allocated_bytes": 8, "freed_bytes": 0, "allocations": 1, "frees": 0},
                      "cpu": {"allocated_bytes": 16, "freed_bytes": 16, "allocations": 2, "frees": 2,
                              "peak_allocated_bytes": 64}})"));
  const memory_figures* figures = memory_of(sorted.result(), sorted.result().runs.at(0).regions.at(0).memory);
  BOOST_TEST_REQUIRE(figures != nullptr);
  BOOST_TEST_REQUIRE(figures->size() == 2u);
  BOOST_TEST(((*figures)[0] == device_memory{cpu_memory, 16, 16, 2, 2, 64}));
  BOOST_TEST(((*figures)[1] == device_memory{1, 8, 0, 1, 0, std::nullopt}));
  BOOST_TEST(to_json(sorted).find(R"("memory": {
            "cpu": {)") != std::string::npos);
  BOOST_TEST(read_profile_text(with_memory("{}")).result().runs.at(0).regions.at(0).memory == no_memory);
  BOOST_TEST(read_profile_text(with_memory("null")).result().memory.empty());

  const std::string region = "p.json: runs[0].regions[0].memory";
  const std::string unknown = ": unknown memory device (expected cpu or cuda:N, N in 0..32767)";
  const std::string ok = R"("allocated_bytes": 1, "freed_bytes": 0, "allocations": 1, "frees": 0)";
  const auto cpu = [&](std::string_view members) { return with_memory(R"({"cpu": {)" + std::string(members) + "}}"); };
  check_error(with_memory(R"({"gpu:0": {}})"), region + ".gpu:0" + unknown);
  check_error(with_memory(R"({"cuda:01": {}})"), region + ".cuda:01" + unknown);
  check_error(with_memory("[]"), region + ": expected an object, found an array");
  check_error(with_memory(R"({"cpu": 1})"), region + ".cpu: expected an object, found an integer");
  check_error(cpu(R"("allocated_bytes": -1, "freed_bytes": 0, "allocations": 1, "frees": 0)"),
              region + ".cpu.allocated_bytes: expected an unsigned integer, found -1");
  check_error(cpu(R"("allocated_bytes": 1, "freed_bytes": 0.5, "allocations": 1, "frees": 0)"),
              region + ".cpu.freed_bytes: expected an unsigned integer, found a non-integer number");
  check_error(cpu(R"("allocated_bytes": 1, "freed_bytes": 0, "frees": 0)"),
              region + ".cpu.allocations: required key missing");
  check_error(cpu(ok + R"(, "peak_allocated_bytes": -4096)"),
              region + ".cpu.peak_allocated_bytes: expected an unsigned integer, found -4096");
  check_error(cpu(ok + R"(, "peak_allocated_bytes": "4096")"),
              region + ".cpu.peak_allocated_bytes: expected an unsigned integer, found a string");
  check_error(cpu(ok + R"(, "peak_allocated_bytes": 9223372036854775808)"),
              region + ".cpu.peak_allocated_bytes: above 2^63 - 1");
  // The run's and the residual's are read the same way, and named by their own paths.
  std::string run_memory = profile;
  run_memory.insert(run_memory.find(R"("timing")"), R"("memory": {"cuda:0": {"allocated_bytes": 1.5}}, )");
  check_error(run_memory, "p.json: runs[0].memory.cuda:0.allocated_bytes: expected an unsigned integer, found a "
                          "non-integer number");
  std::string residual_memory = profile;
  residual_memory.insert(residual_memory.find(R"("cpu_time_us": 0.5)"), R"("memory": {"CPU": {}}, )");
  check_error(residual_memory, "p.json: runs[0].residual.memory.CPU" + unknown);
}

// Rule 21: `memory_timelines` read back sample for sample and span for span, devices ascending whatever
// the file's order, regions by id; a bad entry is an error naming the file and its path.
BOOST_AUTO_TEST_CASE(memory_timelines_read_back_and_name_bad_values) {
  const analysis_result live = memory_result();
  BOOST_TEST((round_trip(live).result().memory_timelines == live.memory_timelines));
  const auto with_timelines = [](std::string_view timelines) {
    std::string text = minimal_with_run(minimal_run);
    return text.insert(text.size() - 1, R"(, "memory_timelines": )" + std::string(timelines));
  };
  const Profile read = read_profile_text(with_timelines(
      R"([{"run_index": 0, "devices": {"cuda:0": [[0.5, 10]], "cpu": [[1, 4], [2.25, 0]]},
          "spans": [{"region_id": "region:a", "start_us": 0.25, "end_us": 1.75}]}])"));
  BOOST_TEST_REQUIRE(read.result().memory_timelines.size() == 1u);
  const memory_timeline& timeline = read.result().memory_timelines[0];
  BOOST_TEST(timeline.run == 0u);
  BOOST_TEST_REQUIRE(timeline.series.size() == 2u);
  BOOST_TEST((timeline.series[0] == memory_series{cpu_memory, {{1000, 4}, {2250, 0}}}));
  BOOST_TEST((timeline.series[1] == memory_series{0, {{500, 10}}}));
  BOOST_TEST_REQUIRE(timeline.spans.size() == 1u);
  BOOST_TEST((timeline.spans[0] == region_span{0, 250, 1750}));
  BOOST_TEST(timeline.spans_left_out == 0u);

  const std::string at = "p.json: memory_timelines[0]";
  check_error(with_timelines(R"([{"run_index": 1, "devices": {}, "spans": []}])"),
              at + ".run_index: no such run (1 runs)");
  check_error(with_timelines(R"([{"run_index": 0, "devices": {"gpu": []}, "spans": []}])"),
              at + ".devices.gpu: unknown memory device (expected cpu or cuda:N, N in 0..32767)");
  check_error(with_timelines(R"([{"run_index": 0, "devices": {"cpu": [[1, 2, 3]]}, "spans": []}])"),
              at + ".devices.cpu[0]: expected [offset_us, total_bytes]");
  check_error(with_timelines(R"([{"run_index": 0, "devices": {"cpu": [[1, -2]]}, "spans": []}])"),
              at + ".devices.cpu[0][1]: expected an unsigned integer, found -2");
  check_error(with_timelines(R"([{"run_index": 0, "devices": {}, "spans": [{"region_id": "region:b",
                                  "start_us": 0, "end_us": 1}]}])"),
              at + ".spans[0].region_id: 'region:b' is not one of `regions`");
  check_error(with_timelines(R"([{"run_index": 0, "devices": {}}])"), at + ".spans: required key missing");
  check_error(with_timelines(R"({})"), "p.json: memory_timelines: expected an array, found an object");
}

BOOST_AUTO_TEST_CASE(files_are_read_and_named) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path();
  const std::string path = (dir / ("regionprof_profile_reader_" + std::to_string(::getpid()) + ".json")).string();
  {
    std::ofstream out(path, std::ios::binary);
    out << to_json(Profile(trace{}, analysis_options{}, fixed_context(), device_result()));
  }
  const Profile p = read_profile(path);
  BOOST_TEST(p.result().runs.at(0).cpu_time_ns == 1234567);
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << R"({"schema_version": 3})";
  }
  BOOST_CHECK_EXCEPTION((void)read_profile(path), profile_read_error, [&](const profile_read_error& e) {
    return std::string(e.what()) == path + ": schema_version 3 is not supported (this reader reads 1)";
  });
  std::filesystem::remove(path);
  BOOST_CHECK_EXCEPTION((void)read_profile(path), profile_read_error, [&](const profile_read_error& e) {
    return std::string(e.what()) == path + ": cannot open: No such file or directory";
  });
}

BOOST_AUTO_TEST_SUITE_END()
