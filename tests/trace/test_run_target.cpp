// Report `target` as a typed value (trace::target) and its one JSON codec (trace/run_target_json.hpp).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include "regionprof/trace/run_target_json.hpp"
#include "regionprof/trace/trace.hpp"

using namespace regionprof;

namespace {

std::vector<std::string> keys(const boost::json::object& object) {
  std::vector<std::string> out;
  for (const auto& member : object) out.emplace_back(member.key());
  return out;
}

run_target read(const char* text) {
  run_target target;
  const boost::json::value members = boost::json::parse(text);
  for (const auto& member : members.as_object()) {
    trace_detail::add_target_member(target, member.key(), member.value());
  }
  return target;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(run_target_json)

BOOST_AUTO_TEST_CASE(modelled_members_in_the_one_order_then_foreign_ones_as_read) {
  run_target target;
  target.window = 2;
  target.window_runs = 10;
  target.set_process({2, 0, 4, "node7", 4242, std::nullopt, std::nullopt, std::nullopt});
  target.kind = "torch_module";
  target.foreign.push_back({"z", std::make_shared<const detail::json_value_holder>(
                                     detail::json_value_holder{boost::json::value(1)})});
  const boost::json::object members = trace_detail::target_members(target);
  BOOST_TEST(keys(members) == (std::vector<std::string>{"kind", "rank", "local_rank", "world_size", "host", "pid",
                                                        "window", "window_runs", "z"}),
             boost::test_tools::per_element());
  BOOST_TEST(boost::json::serialize(members) ==
             R"({"kind":"torch_module","rank":2,"local_rank":0,"world_size":4,"host":"node7","pid":4242,)"
             R"("window":2,"window_runs":10,"z":1})");
}

BOOST_AUTO_TEST_CASE(a_process_without_a_launcher_has_host_and_pid_only) {
  run_target target;
  target.set_process({std::nullopt, std::nullopt, std::nullopt, "a\"b", 1, std::nullopt, std::nullopt, std::nullopt});
  BOOST_TEST(boost::json::serialize(trace_detail::target_members(target)) == R"({"host":"a\"b","pid":1})");
}

BOOST_AUTO_TEST_CASE(members_read_back_typed_when_their_value_has_the_type) {
  const run_target target = read(R"({"command": ["./app", "-x"], "benchmark": "BM_a", "iterations": 300,
                                     "iterations_per_run": 3, "pid": -5, "ended_by_signal": "SIGSEGV",
                                     "deviceProperties": [{"id": 0}], "distributedInfo": {"rank": 7}})");
  BOOST_TEST((target.command == std::optional<std::vector<std::string>>(std::vector<std::string>{"./app", "-x"})));
  BOOST_TEST((target.benchmark == std::optional<std::string>("BM_a")));
  BOOST_TEST((target.iterations == std::optional<std::uint64_t>(300)));
  BOOST_TEST((target.iterations_per_run == std::optional<std::uint64_t>(3)));
  BOOST_TEST((target.pid == std::optional<std::int64_t>(-5)));  // any int64
  BOOST_TEST((target.ended_by_signal == std::optional<std::string>("SIGSEGV")));
  BOOST_TEST_REQUIRE(target.foreign.size() == 2u);
  BOOST_TEST(target.foreign[0].name == "deviceProperties");
  const boost::json::value* info = trace_detail::foreign_value(target, "distributedInfo");
  BOOST_TEST_REQUIRE(info != nullptr);
  BOOST_TEST(info->at("rank").as_int64() == 7);
  BOOST_TEST(trace_detail::foreign_value(target, "rank") == nullptr);
}

BOOST_AUTO_TEST_CASE(a_member_of_another_type_is_carried_as_it_was) {
  // A negative rank, a numeric host, a command with a number: none is what regionprof writes, so each is
  // foreign and written back unchanged, after the modelled ones.
  const run_target target = read(R"({"rank": -1, "host": 7, "command": ["a", 1], "pid": 12})");
  BOOST_TEST(!target.rank.has_value());
  BOOST_TEST(!target.host.has_value());
  BOOST_TEST(!target.command.has_value());
  BOOST_TEST((target.pid == std::optional<std::int64_t>(12)));
  BOOST_TEST(boost::json::serialize(trace_detail::target_members(target)) ==
             R"({"pid":12,"rank":-1,"host":7,"command":["a",1]})");
}

BOOST_AUTO_TEST_CASE(type_is_no_member) {
  run_target target;
  BOOST_CHECK_THROW(trace_detail::add_target_member(target, "type", boost::json::value("x")), std::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()
