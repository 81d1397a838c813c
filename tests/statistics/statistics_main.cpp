#define BOOST_TEST_MODULE regionprof statistics
#include <boost/test/unit_test.hpp>
