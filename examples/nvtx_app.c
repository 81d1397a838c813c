/* nvtx_app: a plain C program with NVTX ranges around CPU work, to profile from outside with
 *
 *   build/bin/regionprof run --run-marker step --region 'layer_(.*)=layer' -- build/bin/nvtx_app
 *
 * Five ranges named `step`, each holding `layer_0` ... `layer_3`; layer i does (i + 1) units of work, so
 * each step's CPU time splits about 10/20/30/40 % over the layers. It knows nothing of regionprof: NVTX
 * alone (header-only) carries the ranges to whichever tool NVTX_INJECTION64_PATH names. Writes nothing;
 * exits 0. */
#include <nvtx3/nvToolsExt.h>

enum { steps = 5, layers = 4, iterations_per_unit = 400000 };

static const char* const layer_names[layers] = {"layer_0", "layer_1", "layer_2", "layer_3"};

/* Busy CPU work the compiler cannot drop. */
static double work(int units, int seed) {
  volatile double sum = 0.0;
  for (int i = 0; i < units * iterations_per_unit; ++i) sum = sum + (double)((i ^ seed) & 7) * 0.5;
  return sum;
}

int main(void) {
  double total = 0.0;
  for (int step = 0; step < steps; ++step) {
    nvtxRangePushA("step");
    for (int layer = 0; layer < layers; ++layer) {
      nvtxRangePushA(layer_names[layer]);
      total += work(layer + 1, step);
      nvtxRangePop();
    }
    nvtxRangePop();
  }
  return total > 0.0 ? 0 : 1;
}
