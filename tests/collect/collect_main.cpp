#define BOOST_TEST_MODULE regionprof collect
#include <boost/test/unit_test.hpp>
