#define BOOST_TEST_MODULE regionprof machine
#include <boost/test/unit_test.hpp>
