#define BOOST_TEST_MODULE regionprof json
#include <boost/test/unit_test.hpp>
