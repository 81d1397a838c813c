#define BOOST_TEST_MODULE regionprof capture
#include <boost/test/unit_test.hpp>
