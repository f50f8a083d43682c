/* Calls the CPU library of cpu.mlir (@model: leaky_relu(x . w^T, 0.1), x
 * [3, 8], w [4, 8]) through the prototype of its generated header, and
 * compares each output with the same arithmetic in double. */
#include "m.h"

#include <math.h>
#include <stdio.h>

int main(void) {
  enum { M = 3, K = 8, N = 4 };
  float x[M][K], w[N][K], out[M][N];
  for (int i = 0; i < M; ++i)
    for (int k = 0; k < K; ++k)
      x[i][k] = (float)((i * 7 + k * 3) % 11) - 5.25f;
  for (int n = 0; n < N; ++n)
    for (int k = 0; k < K; ++k)
      w[n][k] = (float)((n * 5 + k) % 7) * 0.5f - 1.5f;
  for (int i = 0; i < M; ++i)
    for (int n = 0; n < N; ++n)
      out[i][n] = NAN;
  model(&x[0][0], &x[0][0], 0, M, K, K, 1, &w[0][0], &w[0][0], 0, N, K, K, 1,
        &out[0][0], &out[0][0], 0, M, N, N, 1);
  int bad = 0, negative = 0;
  for (int i = 0; i < M; ++i)
    for (int n = 0; n < N; ++n) {
      double acc = 0;
      for (int k = 0; k < K; ++k)
        acc += (double)x[i][k] * w[n][k];
      double ref = acc > 0 ? acc : 0.1 * acc;
      negative += acc < 0;
      if (!(fabs(out[i][n] - ref) <= 1e-5 * (1 + fabs(ref))))
        ++bad;
    }
  printf("%d of %d outputs differ; %d negative\n", bad, M * N, negative);
  return bad != 0;
}
