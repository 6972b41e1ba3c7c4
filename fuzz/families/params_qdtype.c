/* params_qdtype.c: the scale and bias of a case as a kernel that takes them in Q's dtype sees them
 * (ATTNCHECK_CAP_PARAMS_Q_DTYPE, an exec worker's "params_dtype": "q"; OpenVINO, MLX): values of
 * that dtype, so that every case drawn for it is one it computes as stored. */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include "fuzz.h"
#include "problem.h"

/* x rounded to t, finite (beyond the range: t's largest finite value of x's sign). */
static double in_dtype(ac_dtype t, double x)
{
  double r = ac_decode(t, ac_encode_f64(t, x));
  return isfinite(r) ? r : copysign(ac_dtype_get(t)->max_finite, x);
}

void ac_fuzz_params_q_dtype(ac_case *c, ac_params *pb)
{
  ac_problem *p = &c->p;
  if (ac_problem_quantized(p)) return;   /* its values are its codes' (the quant families) */
  ac_dtype qd = ac_tensor_dtype(p, 'q');
  double s = ac_problem_scale(p), r = in_dtype(qd, s);
  /* the default 1/sqrt(dk) stays only when Q's dtype holds it exactly (dk a power of 4) */
  int exact_default =
      p->scale_is_default && (p->dk & (p->dk - 1)) == 0 && __builtin_ctzll((unsigned long long)p->dk) % 2 == 0;
  if (!exact_default && (r != s || p->scale_is_default)) {
    p->scale_is_default = 0;
    p->scale = r;
    ac_params_int(pb, "scale_in_q_dtype", 1);
  }
  if (!(p->f.used & AC_FEAT_BIAS) || p->f.bias_dtype == qd) return;
  ac_dtype bd = p->f.bias_dtype;
  size_t n = (size_t)(p->f.bias_b * p->f.bias_h * p->tq * ac_bias_cols(p));
  void *nb = ac_xmalloc(n * ac_dtype_size(qd));
  for (size_t i = 0; i < n; i++) {
    double x = ac_load(bd, c->bias, i);
    ac_store_bits(qd, nb, i, isfinite(x) ? ac_encode_f64(qd, in_dtype(qd, x)) : ac_encode_f64(qd, x));
  }
  free(c->bias);
  c->bias = nb;
  p->f.bias_dtype = qd;
  ac_params_int(pb, "bias_in_q_dtype", 1);
}
