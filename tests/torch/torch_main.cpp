#define BOOST_TEST_MODULE regionprof torch adapter
#include <boost/test/unit_test.hpp>
