#define BOOST_TEST_MODULE regionprof model
#include <boost/test/unit_test.hpp>
