#define BOOST_TEST_MODULE regionprof outputs
#include <boost/test/unit_test.hpp>
