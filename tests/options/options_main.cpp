#define BOOST_TEST_MODULE regionprof options
#include <boost/test/unit_test.hpp>
