// torch's op-range names (emit_nvtx: `<op>, seq = N, op_id = M`) keyed by op.
#include <boost/test/unit_test.hpp>

#include "regionprof/trace/torch_op_names.hpp"

using namespace regionprof;

BOOST_AUTO_TEST_SUITE(torch_op_names)

BOOST_AUTO_TEST_CASE(the_per_call_suffix_is_cut) {
  BOOST_TEST(torch_op_name("aten::addmm, seq = 4, op_id = 64") == "aten::addmm");
  BOOST_TEST(torch_op_name("aten::mm, op_id = 87") == "aten::mm");
  BOOST_TEST(torch_op_name("aten::add, seq = 1, op_id = 2, sizes = [[2, 3], [2, 3]], input_op_ids = [1]") ==
             "aten::add");
  BOOST_TEST(torch_op_name("autograd::engine::evaluate_function: AddmmBackward0, op_id = 82") ==
             "autograd::engine::evaluate_function: AddmmBackward0");
  BOOST_TEST(torch_op_name("layer, one") == "layer, one");  // no torch suffix
  BOOST_TEST(torch_op_name("") == "");
}

// Only ranges of the default domain are renamed; each distinct name is looked at once, and names
// without the suffix keep their id.
BOOST_AUTO_TEST_CASE(default_domain_ranges_are_renamed) {
  trace t;
  const thread_index main = t.add_thread(1, 1);
  const domain_index regionprof_domain = t.domain("regionprof");
  const name_id first = t.strings.intern("aten::linear, seq = 3, op_id = 60");
  const name_id second = t.strings.intern("aten::linear, seq = 7, op_id = 90");
  const name_id plain = t.strings.intern("aten::relu");
  const name_id marker = t.strings.intern("regionprof.profiled_run, op_id = 1");
  t.intervals.push_back({0, 10, first, main, 0, 0, interval_kind::range, 0});
  t.intervals.push_back({10, 20, second, main, 0, 0, interval_kind::range, 0});
  t.intervals.push_back({20, 30, first, main, 0, 0, interval_kind::range, 0});
  t.intervals.push_back({30, 40, plain, main, 0, 0, interval_kind::range, 0});
  t.intervals.push_back({0, 40, marker, main, 0, regionprof_domain, interval_kind::range, 0});
  t.intervals.push_back({0, 5, second, main, 0, 0, interval_kind::cpu_op, 0});  // an imported op: kept
  BOOST_TEST(strip_torch_op_suffixes(t) == 3u);
  const name_id linear = t.strings.find("aten::linear");
  BOOST_TEST(t.intervals[0].name == linear);
  BOOST_TEST(t.intervals[1].name == linear);
  BOOST_TEST(t.intervals[2].name == linear);
  BOOST_TEST(t.intervals[3].name == plain);
  BOOST_TEST(t.intervals[4].name == marker);
  BOOST_TEST(t.intervals[5].name == second);
}

BOOST_AUTO_TEST_SUITE_END()
