#define BOOST_TEST_MODULE regionprof job
#include <boost/test/unit_test.hpp>
