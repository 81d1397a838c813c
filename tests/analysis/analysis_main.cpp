#define BOOST_TEST_MODULE regionprof analysis
#include <boost/test/unit_test.hpp>
