#define BOOST_TEST_MODULE regionprof trace
#include <boost/test/unit_test.hpp>
