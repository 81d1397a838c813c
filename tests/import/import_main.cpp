#define BOOST_TEST_MODULE regionprof import
#include <boost/test/unit_test.hpp>
