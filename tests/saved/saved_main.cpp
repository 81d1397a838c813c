#define BOOST_TEST_MODULE regionprof saved
#include <boost/test/unit_test.hpp>
