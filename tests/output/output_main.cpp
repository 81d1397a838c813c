#define BOOST_TEST_MODULE regionprof output
#include <boost/test/unit_test.hpp>
