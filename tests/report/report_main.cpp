#define BOOST_TEST_MODULE regionprof reports
#include <boost/test/unit_test.hpp>
