#define BOOST_TEST_MODULE regionprof cli
#include <boost/test/unit_test.hpp>
