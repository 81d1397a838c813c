// Compiled with REGIONPROF_DISABLE: the API stays usable and compiles to nothing.
#include <boost/test/unit_test.hpp>

#include "regionprof/regions/regions.h"
#include "regionprof/regions/regions.hpp"

#ifndef REGIONPROF_DISABLE
#error "this file must be compiled with REGIONPROF_DISABLE"
#endif
#ifdef NVTX_VERSION
#error "REGIONPROF_DISABLE must not pull in the NVTX headers"
#endif

BOOST_AUTO_TEST_SUITE(emit_disabled)

BOOST_AUTO_TEST_CASE(disabled_api_compiles_to_nothing) {
  regionprof::scoped_run run;
  REGIONPROF_REGION("parse");
  const regionprof::registered_region region{"layer", "0"};
  regionprof::scoped_region scope{region};
  BOOST_TEST(region.nvtx_handle() == nullptr);
  BOOST_TEST(region.range_name() == "layer:0");
  BOOST_TEST(regionprof_region_register("layer", "0") == nullptr);
  regionprof_region_push_name("layer", "1");
  regionprof_region_pop();
}

BOOST_AUTO_TEST_SUITE_END()
