#define BOOST_TEST_MODULE regionprof regions
#include <boost/test/unit_test.hpp>
