#define BOOST_TEST_MODULE regionprof core
#include <boost/test/unit_test.hpp>
