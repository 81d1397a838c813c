#include <type_traits>

#include <boost/test/unit_test.hpp>

#include "regionprof/regions/regions.h"
#include "regionprof/regions/regions.hpp"

using namespace regionprof;

static_assert(!std::is_copy_constructible_v<scoped_region> && !std::is_move_constructible_v<scoped_region>);
static_assert(!std::is_copy_assignable_v<scoped_region> && !std::is_move_assignable_v<scoped_region>);
static_assert(!std::is_copy_constructible_v<scoped_run> && !std::is_move_constructible_v<scoped_run>);

namespace {
template <class T>
concept heap_allocatable = requires { new T(std::declval<const registered_region&>()); };
static_assert(!heap_allocatable<scoped_region>, "scoped_region must not be heap-allocatable");
}  // namespace

BOOST_AUTO_TEST_SUITE(emit_api)

BOOST_AUTO_TEST_CASE(range_names_are_kind_colon_name) {
  BOOST_TEST(registered_region(region_kind::aot_module, "encoder").range_name() == "aot_module:encoder");
  BOOST_TEST(registered_region(region_kind::untuned_module, "blocks.0").range_name() ==
             "untuned_module:blocks.0");
  BOOST_TEST(registered_region(region_kind::user, "parse").range_name() == "region:parse");
  BOOST_TEST(registered_region("layer", "3").range_name() == "layer:3");
}

BOOST_AUTO_TEST_CASE(c_api_registers_once_per_name) {
  const regionprof_region_handle a = regionprof_region_register("layer", "0");
  const regionprof_region_handle b = regionprof_region_register("layer", "0");
  const regionprof_region_handle c = regionprof_region_register("layer", "1");
  BOOST_TEST(a != nullptr);
  BOOST_TEST(a == b);
  BOOST_TEST(a != c);
  regionprof_run_push();
  regionprof_region_push(a);
  regionprof_region_push_name("layer", "2");
  regionprof_region_pop();
  regionprof_region_pop();
  regionprof_region_pop();
}

BOOST_AUTO_TEST_CASE(scoped_ranges_run_without_a_tool) {
  scoped_run run;
  REGIONPROF_REGION("outer");
  { REGIONPROF_REGION("inner"); }
  BOOST_TEST(std::string(run_marker_name) == "regionprof.profiled_run");
}

BOOST_AUTO_TEST_SUITE_END()
