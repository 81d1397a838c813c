#define BOOST_TEST_MODULE regionprof compare
#include <boost/test/unit_test.hpp>
