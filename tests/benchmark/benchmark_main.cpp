#define BOOST_TEST_MODULE regionprof benchmark helper
#include <boost/test/unit_test.hpp>
