#include <stdexcept>
#include <string>

#include <boost/test/unit_test.hpp>

#include "regionprof/analysis/analysis.hpp"
#include "regionprof/import/import.hpp"
#include "regionprof/trace/trace.hpp"

using namespace regionprof;

BOOST_AUTO_TEST_SUITE(trace_model)

BOOST_AUTO_TEST_CASE(string_table_interns_by_content) {
  string_table strings;
  BOOST_TEST(strings.size() == 1u);
  BOOST_TEST(strings.view(0).empty());
  std::string buffer = "layer_0";
  const name_id first = strings.intern(buffer);
  buffer = "layer_1";  // a caller reusing its buffer must not change the stored name
  const name_id second = strings.intern(buffer);
  BOOST_TEST(first == 1u);
  BOOST_TEST(second == 2u);
  BOOST_TEST(strings.view(first) == "layer_0");
  BOOST_TEST(strings.intern("layer_0") == first);
  BOOST_TEST(strings.find("layer_1") == second);
  BOOST_TEST(strings.find("absent") == string_table::npos);
  BOOST_TEST(strings.intern("") == 0u);
}

BOOST_AUTO_TEST_CASE(string_table_copy_is_deep) {
  string_table strings;
  const name_id id = strings.intern("bévue ✓");
  string_table copy = strings;
  strings = string_table{};
  BOOST_TEST(copy.view(id) == "bévue ✓");
  BOOST_TEST(copy.intern("bévue ✓") == id);
  BOOST_TEST(strings.size() == 1u);
}

BOOST_AUTO_TEST_CASE(domains_and_threads_are_deduplicated) {
  trace t;
  BOOST_TEST(t.domain("") == 0);
  const domain_index d = t.domain("regionprof");
  BOOST_TEST(d == 1);
  BOOST_TEST(t.domain("regionprof") == d);
  const thread_index main = t.add_thread(10, 11);
  const thread_index worker = t.add_thread(10, 12, "worker");
  BOOST_TEST(main == 0u);
  BOOST_TEST(worker == 1u);
  BOOST_TEST(t.add_thread(10, 11, "main") == main);
  BOOST_TEST(t.strings.view(t.threads[main].name) == "main");
  BOOST_TEST(t.strings.view(t.threads[worker].name) == "worker");
}

BOOST_AUTO_TEST_CASE(device_data_presence) {
  trace t;
  BOOST_TEST(!t.has_device_data());
  t.device_tracing = true;
  BOOST_TEST(t.has_device_data());
  t.device_tracing = false;
  t.device_ops.push_back(device_op{});
  BOOST_TEST(t.has_device_data());
  BOOST_TEST(t.event_count() == 1u);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(rules)

BOOST_AUTO_TEST_CASE(parse_region_arg_splits_kind) {
  const name_rule with_kind = parse_region_arg("layer_(.*)=layer");
  BOOST_TEST(with_kind.pattern == "layer_(.*)");
  BOOST_TEST(with_kind.kind == "layer");
  BOOST_TEST((with_kind.match == match_kind::regex));
  const name_rule plain = parse_region_arg("## (.*) ##");
  BOOST_TEST(plain.pattern == "## (.*) ##");
  BOOST_TEST(plain.kind == "region");
  // `=` inside the regex stays in the regex when what follows is not an identifier.
  const name_rule eq = parse_region_arg("a=b (c)");
  BOOST_TEST(eq.pattern == "a=b (c)");
  BOOST_TEST(eq.kind == "region");
}

BOOST_AUTO_TEST_CASE(parse_region_arg_rejects_bad_regex) {
  BOOST_CHECK_THROW(parse_region_arg("layer_(=layer"), std::invalid_argument);
  BOOST_CHECK_THROW(parse_region_arg("=layer"), std::invalid_argument);
  try {
    parse_region_arg("([a-=k");
    BOOST_FAIL("expected an exception");
  } catch (const std::invalid_argument& e) {
    BOOST_TEST(std::string(e.what()).find("([a-") != std::string::npos);
  }
}

BOOST_AUTO_TEST_CASE(defaults_match_the_reference_module) {
  const name_rule marker = default_run_marker();
  BOOST_TEST(marker.pattern == "regionprof.profiled_run");
  BOOST_TEST((marker.match == match_kind::exact));
  BOOST_TEST(marker.domain == "");  // any domain: the harness's NVTX range and a Kineto record_function
  const auto regions = default_region_rules();
  BOOST_TEST_REQUIRE(regions.size() == 4u);
  BOOST_TEST(regions[0].pattern == "aot_module:");
  BOOST_TEST(regions[0].kind == "aot_module");
  BOOST_TEST(regions[1].pattern == "untuned_module:");
  BOOST_TEST(regions[1].kind == "untuned_module");
  // The modules' backward regions (design.md, rule 19): Python's regionprof.torch.profiler.
  BOOST_TEST(regions[2].pattern == "aot_module_backward:");
  BOOST_TEST(regions[2].kind == "aot_module_backward");
  BOOST_TEST(regions[3].pattern == "untuned_module_backward:");
  BOOST_TEST(regions[3].kind == "untuned_module_backward");
  for (const name_rule& rule : regions) BOOST_TEST((rule.match == match_kind::prefix));
}

BOOST_AUTO_TEST_SUITE_END()

// trace::time_range_problem: the bound under which no sum of the analysis can overflow int64 ns
// (tests/fuzz/regressions/fuzz_kineto_import/key_average_cpu_total_overflow.json found the overflow:
// two 5e18 ns operators of one name on two threads). 2^62 ns = 4,611,686,018,427,387,904 ns.
BOOST_AUTO_TEST_SUITE(time_range)

BOOST_AUTO_TEST_CASE(durations_and_spans_past_2_to_the_62_ns_are_out_of_range) {
  trace t;
  const auto one = t.add_thread(1, 1);
  const auto two = t.add_thread(1, 2);
  const name_id a = t.strings.intern("a");
  BOOST_TEST(t.time_range_problem().empty());  // an empty trace is in range
  t.intervals.push_back({0, 4'000'000'000'000'000'000, a, one, 0, 0, interval_kind::cpu_op});
  BOOST_TEST(t.time_range_problem().empty());  // 4e18 <= 2^62
  t.intervals.push_back({0, 4'000'000'000'000'000'000, a, two, 0, 0, interval_kind::cpu_op});
  BOOST_TEST(t.time_range_problem().find("add up to more than 2^62 ns") != std::string::npos);  // 8e18

  trace wide;
  const auto thread = wide.add_thread(1, 1);
  wide.intervals.push_back({-3'000'000'000'000'000'000, -2'999'999'999'999'999'999, a, thread, 0, 0,
                            interval_kind::cpu_op});
  wide.intervals.push_back({3'000'000'000'000'000'000, 3'000'000'000'000'000'001, a, thread, 0, 0,
                            interval_kind::cpu_op});
  BOOST_TEST(wide.time_range_problem().find("span more than 2^62 ns") != std::string::npos);  // 6e18 + 1

  try {
    analyze(t, analysis_options{});
    BOOST_FAIL("analyze must refuse times out of range");
  } catch (const std::invalid_argument& e) {
    BOOST_TEST(std::string(e.what()).starts_with("regionprof::analyze: the trace's times are out of range"));
  }
}

BOOST_AUTO_TEST_CASE(the_importer_refuses_such_a_file_naming_it) {
  const std::string text =
      R"([{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":0,"dur":5000000000000000},)"
      R"( {"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":2,"ts":0,"dur":5000000000000000}])";
  try {
    import_kineto_trace_text(text, "huge.json");
    BOOST_FAIL("the importer must refuse times out of range");
  } catch (const import_error& e) {
    BOOST_TEST(e.file() == "huge.json");
    BOOST_TEST(e.problem().find("add up to more than 2^62 ns") != std::string::npos);
  }
}

BOOST_AUTO_TEST_SUITE_END()
