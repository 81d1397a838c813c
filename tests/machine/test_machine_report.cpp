// Report `stopping` and `environment` (docs/report-schema.md): the keys as written, absent when the
// context has none (an imported trace), and an unknown stopping reason refused by the reader.
#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include <iterator>
#include <string>

#include "regionprof/model/profile.hpp"
#include "regionprof/report/report.hpp"
#include "regionprof/saved/profile_reader.hpp"
#include "support/trace_builder.hpp"

using namespace regionprof;

namespace {

trace one_run() {
  return test::trace_builder().thread(1).marker(0, 1000).build();
}

report_context machine_context() {
  report_context context;
  context.stopping = stopping_summary{"median_ci95", 9, 0.015, 0.05, stop_reason::noise_reached};
  machine_environment env;
  env.cpu_model = "Fake CPU";
  env.cpu_count = 4;
  env.load_average = std::array<double, 3>{6.5, 4.0, 2.25};
  env.runs_load = load_samples{31, 7, 12};
  env.memory_total_bytes = 16777216u;
  env.cpu_governor = "performance";
  env.gpus.push_back({0, "Fake GPU", gpu_clock_state{1500, 2000, {"sw_power_cap"}}, std::nullopt});
  context.environment = env;
  return context;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(machine_report)

BOOST_AUTO_TEST_CASE(stopping_and_environment_keys) {
  const Profile profile(one_run(), analysis_options{}, machine_context());
  const boost::json::object report = boost::json::parse(to_json(profile)).as_object();
  const boost::json::object& stopping = report.at("stopping").as_object();
  BOOST_TEST(stopping.at("criterion").as_string() == "median_ci95");
  BOOST_TEST(stopping.at("runs").to_number<int>() == 9);
  BOOST_TEST(stopping.at("noise").as_double() == 0.015);
  BOOST_TEST(stopping.at("target").as_double() == 0.05);
  BOOST_TEST(stopping.at("reason").as_string() == "noise_reached");
  const boost::json::object& env = report.at("environment").as_object();
  BOOST_TEST(env.at("cpu_model").as_string() == "Fake CPU");
  BOOST_TEST(env.at("cpu_count").to_number<int>() == 4);
  BOOST_TEST(env.at("load_average").as_array().size() == 3u);
  BOOST_TEST(env.at("load_average").as_array()[2].as_double() == 2.25);
  BOOST_TEST(boost::json::serialize(env.at("runs_load")) == R"({"samples":31,"above_cpu_count":7,"max_runnable":12})");
  BOOST_TEST(std::next(env.find("load_average"))->key() == "runs_load");
  BOOST_TEST(env.at("memory_total_bytes").to_number<std::uint64_t>() == 16777216u);
  BOOST_TEST(!env.contains("memory_available_bytes"));  // not read: left out
  BOOST_TEST(env.at("cpu_governor").as_string() == "performance");
  const boost::json::object& gpu = env.at("gpus").as_array()[0].as_object();
  BOOST_TEST(gpu.at("name").as_string() == "Fake GPU");
  BOOST_TEST(gpu.at("before").at("sm_clock_mhz").to_number<int>() == 1500);
  BOOST_TEST(gpu.at("before").at("throttle_reasons").as_array()[0].as_string() == "sw_power_cap");
  BOOST_TEST(!gpu.contains("after"));
  // The last two keys, after tree_summary.
  auto it = report.end();
  BOOST_TEST((--it)->key() == "environment");
  BOOST_TEST((--it)->key() == "stopping");
  BOOST_TEST(to_json(read_profile_text(to_json(profile), "machine.json")) == to_json(profile));
}

BOOST_AUTO_TEST_CASE(the_markdown_overview_names_both) {
  const std::string markdown = to_markdown(Profile(one_run(), analysis_options{}, machine_context()));
  BOOST_TEST(markdown.find("- Stopping: noise_reached after 9 runs, noise (median_ci95) 1.50 %, target 5.00 %\n") !=
             std::string::npos);
  BOOST_TEST(markdown.find("- Machine: Fake CPU, 4 CPUs, load 6.50 at start, 7 of 31 load samples through the runs "
                           "above the CPU count, governor performance, GPU 0 Fake GPU 1500 MHz before\n") !=
             std::string::npos);
  BOOST_TEST(to_markdown(Profile(one_run(), analysis_options{})).find("- Machine:") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_context_without_them_writes_neither) {
  const Profile profile(one_run(), analysis_options{});
  const boost::json::object report = boost::json::parse(to_json(profile)).as_object();
  BOOST_TEST(!report.contains("stopping"));
  BOOST_TEST(!report.contains("environment"));
}

BOOST_AUTO_TEST_CASE(an_unknown_stopping_reason_is_refused) {
  const Profile profile(one_run(), analysis_options{}, machine_context());
  std::string text = to_json(profile);
  const std::string reason = "\"noise_reached\"";
  text.replace(text.find(reason), reason.size(), "\"timeout\"");
  BOOST_CHECK_EXCEPTION(read_profile_text(text, "bad.json"), profile_read_error, [](const profile_read_error& e) {
    return std::string(e.what()).find("bad.json: stopping.reason: unknown stopping reason 'timeout'") != std::string::npos;
  });
}

BOOST_AUTO_TEST_SUITE_END()
