/* blasterms.c: the budget terms of docs/numerics.md §7.1 of one row over one key tile, in binary32
 * vectors (docs/numerics.md §12.5).
 *
 * For keys j of the tile and columns t (dvp, a multiple of 16), with e_jt = |fl32(V_jt - o_t)|
 * (V_jt the head's Vf: V, or a wide V rounded away from zero, blasrow.c; o_t = fl32 of the row's
 * binary64 output):
 *   acc[0] += Σ_j w0_j |V_jt|   (R)       acc[1] += Σ_j w0_j e_jt   (D)
 *   acc[2] += Σ_j w1_j e_jt     (S)       acc[3] += Σ_j w2_j e_jt   (S')
 *   acc[4] += Σ_j w3_j e_jt     (G)       acc[5] += Σ_j w4_j e_jt   (Gb)
 * and, when asked, acc[6] += Σ_j w5_j e_jt (F[k] of one threshold: w5 = A where A < mu_k, else 0),
 * summed in binary32 over the tile's keys in order, column by column (the columns are the vector
 * lanes, so the width of the vectors never changes a sum), then added to the binary64 acc.
 * Products and additions are fused where the machine has FMA (the clones for AVX-512 and
 * Haswell's AVX2 with FMA; the generic clone rounds each): the same values on every machine with
 * FMA, for any number of threads. Every operation is a binary32 rounding (relative 2^-24) or an
 * underflow (absolute 2^-150), so a tile's sum of at most AC_BT_TT = 512 nonnegative terms is within
 * a factor (1 - 2^-24)^-(AC_BT_TT + 1) < 1 + 2^-14 of the exact sum of its rounded terms, less at most
 * AC_BT_TT 2^-150 (the bound blasrow.c takes for R). */
#include "config.h"
#include <string.h>
#include "blasint.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define KERNEL __attribute__((target_clones("avx512f", "arch=haswell", "default"), optimize("fp-contract=fast")))
#else
#define KERNEL
#endif

typedef float v16 __attribute__((vector_size(64), aligned(4)));
typedef int32_t vi16 __attribute__((vector_size(64), aligned(4)));

#define VABS(x) ((v16)((vi16)(x) & 0x7fffffff))
#define ACC(k) v16 r##k = {0}, d##k = {0}, s##k = {0}, p##k = {0}, g##k = {0}, b##k = {0}, f##k = {0}
#define STEP(k, NF)                                                                          \
  {                                                                                         \
    v16 v = *(const v16 *)(vr + 16 * (k)), e = VABS(v - *(const v16 *)(oc + 16 * (k)));   \
    r##k += a0 * VABS(v);                                                                   \
    d##k += a0 * e;                                                                         \
    s##k += a1 * e;                                                                         \
    p##k += a2 * e;                                                                         \
    g##k += a3 * e;                                                                         \
    b##k += a4 * e;                                                                         \
    if (NF) f##k += a5 * e;                                                                 \
  }
#define OUT(k, NF)                                                                                        \
  {                                                                                                       \
    const v16 *q[7] = {&r##k, &d##k, &s##k, &p##k, &g##k, &b##k, &f##k};                                  \
    for (int z = 0; z < 6 + (NF); z++)                                                                    \
      for (int l = 0; l < 16; l++)                                                                        \
        acc[z * dvp + c + 16 * (k) + l] = (init ? 0 : acc[z * dvp + c + 16 * (k) + l]) + (double)(*q[z])[l]; \
  }
#define LOAD_W(NF)                                                                                  \
  float a0 = w0[j], a1 = w1[j], a2 = w2[j], a3 = w3[j], a4 = w4[j], a5 = NF ? w5[j] : 0;          \
  (void)a5;                                                                                         \
  const float *vr = V + j * dvp + c;

/* The sums of the header, NF = 1: a seventh, acc[6] += Σ_j w5_j e_jt (F of one threshold). */
#define TERMS(NAME, NF)                                                                                          \
  KERNEL static void NAME(const float *restrict w, int64_t ldw, int64_t kn, const float *restrict V, int64_t dvp, \
                          const float *restrict o, double *restrict acc, int init)                                \
  {                                                                                                              \
    const float *w0 = w, *w1 = w + ldw, *w2 = w + 2 * ldw, *w3 = w + 3 * ldw, *w4 = w + 4 * ldw, *w5 = w + 5 * ldw; \
    (void)w5;                                                                                                    \
    int64_t c = 0;                                                                                               \
    for (; c + 32 <= dvp; c += 32) {                                                                             \
      ACC(0);                                                                                                    \
      ACC(1);                                                                                                    \
      const float *oc = o + c;                                                                                   \
      for (int64_t j = 0; j < kn; j++) {                                                                         \
        LOAD_W(NF)                                                                                               \
        STEP(0, NF)                                                                                              \
        STEP(1, NF)                                                                                              \
      }                                                                                                          \
      OUT(0, NF)                                                                                                 \
      OUT(1, NF)                                                                                                 \
    }                                                                                                            \
    for (; c < dvp; c += 16) {                                                                                   \
      ACC(0);                                                                                                    \
      const float *oc = o + c;                                                                                   \
      for (int64_t j = 0; j < kn; j++) {                                                                         \
        LOAD_W(NF)                                                                                               \
        STEP(0, NF)                                                                                              \
      }                                                                                                          \
      OUT(0, NF)                                                                                                 \
    }                                                                                                            \
  }

TERMS(terms6, 0)
TERMS(terms7, 1)

void ac_bt_terms_tile(const float *w, int64_t ldw, int64_t kn, const float *V, int64_t dvp, const float *o, double *acc,
                      int nf, int init)
{
  if (init && !nf) memset(acc + 6 * dvp, 0, (size_t)dvp * sizeof *acc);   /* the F row, unused but defined */
  if (nf) terms7(w, ldw, kn, V, dvp, o, acc, init);
  else terms6(w, ldw, kn, V, dvp, o, acc, init);
}
