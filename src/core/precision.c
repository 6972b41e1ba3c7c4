/* precision.c: the precision class table (docs/numerics.md §6). */
#include "config.h"
#include "precision.h"
#include <math.h>
#include <string.h>

#define U64 0x1p-53
#define U32 0x1p-24
#define U16 0x1p-11
#define UBF 0x1p-8
#define UE4 0x1p-4
#define UE5 0x1p-3
/* half the smallest subnormal spacing: the absolute error of one underflowing operation */
#define ETA64 0x1p-1074   /* a full spacing: half of it is below binary64 */
#define ETA32 0x1p-150
#define ETA16 0x1p-25
#define ETABF 0x1p-134

/* exp is charged 4 ulps of the score format: libm's expf/exp are within 1 ulp, exp2f and
 * vendor fast paths within a few.  Score arithmetic: 2u_s·S counts the scale product and
 * the max subtraction; classes folding log2 e into the scale (exp2 style) do three roundings,
 * charged as u_s = 1.5u.  Every class assumes the worst online schedule (a rescale per key),
 * since a class is shared by kernels with any tiling. */
static const ac_precision table[] = {
  {"fp64", "binary64 throughout: scores, exp, P and accumulation in fp64",
   U64, 0, 0, U64, 4 * U64, 0, U64, 0, 0, 1, 0x1p-1022, 0x1p-1022, AC_F64, ETA64, ETA64, AC_F64, AC_F64},
  {"fp32", "binary32 throughout: scores, exp, P and accumulation in fp32 (CPU kernels, fp32 GPU paths)",
   U32, 0, 0, U32, 4 * U32, 0, U32, 0, 0, 1, 0x1p-126, 0x1p-126, AC_F32, ETA32, ETA32, AC_F64, AC_F64},
  {"fp32-exp2", "binary32 with exponentials in the log2 domain, log2 e folded into the scale (FlashAttention-3 style)",
   U32, 0, 0, 1.5 * U32, 4 * U32, 0, U32, 0, 0, 1, 0x1p-126, 0x1p-126, AC_F32, ETA32, ETA32, AC_F64, AC_F64},
  {"fp16-fa2", "fp16 inputs, fp32 QK^T and P.V accumulation (tensor cores, truncating), exp2 softmax in fp32, "
               "P rounded to fp16 before P.V, row sum from the fp32 P (FlashAttention-2)",
   U32, 1, 0, 1.5 * U32, 4 * U32, U16, U32, 1, 0, 1, 0x1p-14, 0x1p-126, AC_F32, ETA32, ETA32, AC_F64, AC_F64},
  {"bf16-fa2", "bf16 inputs, fp32 QK^T and P.V accumulation (tensor cores, truncating), exp2 softmax in fp32, "
               "P rounded to bf16 before P.V, row sum from the fp32 P (FlashAttention-2)",
   U32, 1, 0, 1.5 * U32, 4 * U32, UBF, U32, 1, 0, 1, 0x1p-126, 0x1p-126, AC_F32, ETA32, ETA32, AC_F64, AC_F64},
  {"fp16-acc16", "fp16 inputs with QK^T stored and P.V and the row sum accumulated in fp16; softmax in fp32",
   U16, 0, U16, U32, 4 * U32, U16, U16, 0, 0, 1, 0x1p-14, 0x1p-14, AC_F16, ETA16, ETA16, AC_F16, AC_F16},
  {"bf16-acc16", "bf16 inputs with QK^T stored and P.V and the row sum accumulated in bf16; softmax in fp32",
   UBF, 0, UBF, U32, 4 * U32, UBF, UBF, 0, 0, 1, 0x1p-126, 0x1p-126, AC_BF16, ETABF, ETABF, AC_BF16, AC_BF16},
  {"fp16-cublas", "fp16 inputs through GEMMs: QK^T accumulated in fp32 (tensor cores, truncating) and stored as fp16 "
                  "scores, softmax in fp32, P stored as fp16, P.V accumulated in fp32 (cuBLAS-style composite)",
   U32, 1, U16, U32, 4 * U32, U16, U32, 1, 0, 1, 0x1p-14, 0x1p-126, AC_F32, ETA16, ETA32, AC_F16, AC_F64},
  {"fp16-math", "fp16-cublas with Q and K each multiplied by sqrt(scale) and rounded to fp16 before Q.K^T "
                "(PyTorch's math path)",
   U32, 1, U16, U32, 4 * U32, U16, U32, 1, 0, 1, 0x1p-14, 0x1p-126, AC_F32, ETA16, ETA32, AC_F16, AC_F16},
  {"bf16-cublas", "bf16 inputs through GEMMs: QK^T accumulated in fp32 (tensor cores, truncating) and stored as bf16 "
                  "scores, softmax in fp32, P stored as bf16, P.V accumulated in fp32 (cuBLAS-style composite)",
   U32, 1, UBF, U32, 4 * U32, UBF, U32, 1, 0, 1, 0x1p-126, 0x1p-126, AC_F32, ETABF, ETA32, AC_BF16, AC_F64},
  {"bf16-math", "bf16-cublas with Q and K each multiplied by sqrt(scale) and rounded to bf16 before Q.K^T "
                "(PyTorch's math path)",
   U32, 1, UBF, U32, 4 * U32, UBF, U32, 1, 0, 1, 0x1p-126, 0x1p-126, AC_F32, ETABF, ETA32, AC_BF16, AC_BF16},
  {"e4m3-fa3", "fp8 e4m3 inputs, fp32 accumulation (truncating), P rounded to e4m3 before P.V (FlashAttention-3 fp8)",
   U32, 1, 0, 1.5 * U32, 4 * U32, UE4, U32, 1, 0, 1, 0x1p-6, 0x1p-126, AC_F32, ETA32, ETA32, AC_F64, AC_F64},
  {"e5m2-fa3", "fp8 e5m2 inputs, fp32 accumulation (truncating), P rounded to e5m2 before P.V",
   U32, 1, 0, 1.5 * U32, 4 * U32, UE5, U32, 1, 0, 1, 0x1p-14, 0x1p-126, AC_F32, ETA32, ETA32, AC_F64, AC_F64},
};

static const double mu_list[] = {0x1p-1022, 0x1p-126, 0x1p-14, 0x1p-6};

const ac_precision *ac_precision_table(size_t *n)
{
  *n = sizeof table / sizeof table[0];
  return table;
}

const ac_precision *ac_precision_find(const char *name)
{
  if (!name) return NULL;
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (!strcmp(table[i].name, name)) return &table[i];
  /* the dtype spellings f16, f32, f64 for fp16, fp32, fp64 */
  if (name[0] == 'f' && (name[1] == '1' || name[1] == '3' || name[1] == '6')) {
    char buf[64];
    if (snprintf(buf, sizeof buf, "fp%s", name + 1) >= (int)sizeof buf) return NULL;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
      if (!strcmp(table[i].name, buf)) return &table[i];
  }
  return NULL;
}

const ac_precision *ac_precision_default(ac_dtype t)
{
  switch (t) {
  case AC_F64: return ac_precision_find("fp64");
  case AC_F16: return ac_precision_find("fp16-fa2");
  case AC_BF16: return ac_precision_find("bf16-fa2");
  case AC_E4M3: return ac_precision_find("e4m3-fa3");
  case AC_E5M2: return ac_precision_find("e5m2-fa3");
  default: return ac_precision_find("fp32");
  }
}

/* The entry of spec for dtype t: "DTYPE=CLASS" naming t, else a bare "CLASS" entry; copied
 * into name (empty when spec names neither). */
static void spec_entry(const char *spec, ac_dtype t, char *name, size_t n)
{
  name[0] = 0;
  for (const char *s = spec; s && *s;) {
    const char *end = strchr(s, ',');
    size_t l = end ? (size_t)(end - s) : strlen(s);
    const char *eq = memchr(s, '=', l);
    char dt[32];
    ac_dtype d;
    if (!eq) {
      if (!name[0] && l < n) snprintf(name, n, "%.*s", (int)l, s);
    } else if ((size_t)(eq - s) < sizeof dt) {
      snprintf(dt, sizeof dt, "%.*s", (int)(eq - s), s);
      if (ac_dtype_parse(dt, &d) == 0 && d == t && l - (size_t)(eq - s) - 1 < n) {
        snprintf(name, n, "%.*s", (int)(l - (size_t)(eq - s) - 1), eq + 1);
        return;
      }
    }
    s = end ? end + 1 : NULL;
  }
}

int ac_precision_spec_names(const char *spec, ac_dtype t)
{
  char name[64];
  spec_entry(spec, t, name, sizeof name);
  return name[0] != 0;
}

int ac_precision_spec_check(const char *spec, ac_err *e)
{
  if (!spec || !*spec) return ac_err_set(e, "empty precision class");
  int bare = 0;
  for (const char *s = spec; s;) {
    const char *end = strchr(s, ',');
    size_t l = end ? (size_t)(end - s) : strlen(s);
    const char *eq = memchr(s, '=', l);
    char buf[64];
    ac_dtype d;
    if (l == 0 || l >= sizeof buf) return ac_err_set(e, "bad precision '%s': expected CLASS or DTYPE=CLASS,...", spec);
    snprintf(buf, sizeof buf, "%.*s", (int)l, s);
    if (eq) {
      buf[eq - s] = 0;
      if (ac_dtype_parse(buf, &d)) return ac_err_set(e, "precision '%s': unknown dtype '%s'", spec, buf);
      memmove(buf, buf + (eq - s) + 1, strlen(buf + (eq - s) + 1) + 1);
    } else if (bare++) {
      return ac_err_set(e, "precision '%s': more than one class without a dtype", spec);
    }
    if (!ac_precision_find(buf)) return ac_err_set(e, "unknown precision class '%s' (see 'attncheck list --precision')", buf);
    s = end ? end + 1 : NULL;
  }
  return 0;
}

int ac_precision_resolve(const char *override_name, const char *declared, ac_dtype t,
                         const ac_precision **out, ac_err *e)
{
  char name[64];
  spec_entry(override_name, t, name, sizeof name);
  if (!name[0]) spec_entry(declared, t, name, sizeof name);
  if (!name[0]) {
    *out = ac_precision_default(t);
    return 0;
  }
  const ac_precision *c = ac_precision_find(name);
  if (!c) return ac_err_set(e, "unknown precision class '%s' (see 'attncheck list --precision')", name);
  *out = c;
  return 0;
}

int64_t ac_precision_nr(const ac_precision *c, int64_t T)
{
  if (c->nr_tile <= 0 || T <= 0) return 0;
  return (T + c->nr_tile - 1) / c->nr_tile;
}

int64_t ac_precision_tacc(const ac_precision *c, int64_t T)
{
  if (c->acc_block <= 0 || T <= c->acc_block) return T;
  return c->acc_block + (T + c->acc_block - 1) / c->acc_block;
}

int ac_precision_mu_list(double *mu, int max)
{
  int n = (int)(sizeof mu_list / sizeof mu_list[0]);
  for (int i = 0; i < n && i < max; i++) mu[i] = mu_list[i];
  return n < max ? n : max;
}

int ac_precision_mu_index(double mu)
{
  for (int i = 0; i < (int)(sizeof mu_list / sizeof mu_list[0]); i++)
    if (mu_list[i] == mu) return i;
  return -1;
}

static void put_u(FILE *f, double u, int trunc)
{
  if (u == 0) fprintf(f, " %-8s", "-");
  else fprintf(f, " 2^%-3d%-3s", (int)lrint(log2(u)), trunc ? "t" : "");
}

void ac_precision_print(FILE *f)
{
  fprintf(f, "precision classes (u = unit roundoff as 2^k; t = truncating accumulation, 2u per step;\n"
             "n_r = online rescales; mu = smallest P kept; range = working range for OUT-OF-DOMAIN;\n"
             "scaled Q,K = format Q and K may be rounded to after scaling, before Q.K^T; - = u_qk)\n\n");
  fprintf(f, "%-12s %-8s %-8s %-8s %-8s %-8s %-8s %-9s %-8s %-7s %-6s %s\n", "class", " u_qk", " u_S", " u_s",
          " u_e", " u_p", " u_a", "T_acc", "n_r", "mu", "range", "scaled Q,K");
  size_t n;
  const ac_precision *t = ac_precision_table(&n);
  for (size_t i = 0; i < n; i++) {
    const ac_precision *c = &t[i];
    fprintf(f, "%-12s", c->name);
    put_u(f, c->u_qk, c->qk_trunc);
    put_u(f, c->u_S, 0);
    if (c->u_s == 1.5 * U32) fprintf(f, " 1.5*2^-24");
    else put_u(f, c->u_s, 0);
    fprintf(f, " %-8s", c->u_e == 4 * U64 ? "4*2^-53" : "4*2^-24");
    put_u(f, c->u_p, 0);
    put_u(f, c->u_a, c->acc_trunc);
    if (c->acc_block > 0) fprintf(f, " blk%-5lld", (long long)c->acc_block);
    else fprintf(f, " %-8s", "T");
    if (c->nr_tile == 1) fprintf(f, " %-8s", "T");
    else if (c->nr_tile > 1) fprintf(f, " T/%-6lld", (long long)c->nr_tile);
    else fprintf(f, " %-8s", "0");
    fprintf(f, " 2^%-5d %-6s %s\n", (int)lrint(log2(c->mu)), ac_dtype_name(c->range),
            c->scaled_in == AC_F64 ? "-" : ac_dtype_name(c->scaled_in));
  }
  fprintf(f, "\ndefault per dtype: f64 fp64, f32 fp32, f16 fp16-fa2, bf16 bf16-fa2, e4m3 e4m3-fa3, e5m2 e5m2-fa3\n\n");
  for (size_t i = 0; i < n; i++) fprintf(f, "%-12s %s\n", t[i].name, t[i].description);
}
