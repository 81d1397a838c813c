#define BOOST_TEST_MODULE regionprof capture
#include <nvtx3/nvToolsExt.h>

#include <boost/test/unit_test.hpp>

// NVTX initialises on the first NVTX call, and a thread that calls NVTX meanwhile reads the function table
// the tool is writing without synchronisation (NVTX v3's lazy initialisation; ThreadSanitizer reports
// it). Every test program initialises NVTX (attaching the static tool) before any test starts a thread.
struct initialise_nvtx {
  initialise_nvtx() { nvtxInitialize(nullptr); }
};
BOOST_TEST_GLOBAL_FIXTURE(initialise_nvtx);
