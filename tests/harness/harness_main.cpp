#define BOOST_TEST_MODULE regionprof harness
#include <boost/test/unit_test.hpp>
