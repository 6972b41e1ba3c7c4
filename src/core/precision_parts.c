/* precision_parts.c: the parts of a precision class (docs/numerics.md §6.1): their names and
 * values, the class string (parse, canonical form) and the fields of ac_precision each part
 * sets (ac_prec_parts_derive). */
#include "config.h"
#include "precision.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { K_FMT, K_ENUM, K_INT };
/* allowed values of a format part: a bit per dtype, then none, q8 and truncating f32 */
#define A_F64  (1u << AC_F64)
#define A_F32  (1u << AC_F32)
#define A_F16  (1u << AC_F16)
#define A_BF16 (1u << AC_BF16)
#define A_FP8  ((1u << AC_E4M3) | (1u << AC_E5M2))
#define A_NONE (1u << 8)
#define A_Q8   (1u << 9)
#define A_T    (1u << 10)
#define A_Q81  (1u << 11)
#define A_ACC  (A_F64 | A_F32 | A_T | A_F16 | A_BF16)

typedef struct {
  const char *key;
  int kind;
  unsigned allow;           /* K_FMT */
  const char *const *names; /* K_ENUM: value i is names[i] */
  int def;
  const char *what;
} part_def;

static const char *const exp_names[] = {"exp", "exp2", NULL};
static const char *const lse_names[] = {"ln", "log2", NULL};
static const char *const rs_names[] = {"sm", "acc", NULL};
static const char *const sub_names[] = {"ieee", "ftz", "daz", NULL};

static const part_def parts[AC_NPARTS] = {
    {"q", K_FMT, A_NONE | A_F32 | A_F16 | A_BF16 | A_FP8 | A_Q8 | A_Q81, NULL, AC_PF_NONE,
     "Q rounded on input (q8: blocks of 32 along d_k, one f16 scale max|x|/127, codes round(x/scale); q81: q8_1 "
     "blocks, q8's with the block sum in f16, which a q4_1 or q5_1 K's min multiplies)"},
    {"k", K_FMT, A_NONE | A_F32 | A_F16 | A_BF16 | A_FP8, NULL, AC_PF_NONE, "K rounded on input"},
    {"v", K_FMT, A_NONE | A_F32 | A_F16 | A_BF16 | A_FP8, NULL, AC_PF_NONE, "V rounded on input"},
    {"sqk", K_FMT, A_NONE | A_F16 | A_BF16, NULL, AC_PF_NONE,
     "Q and K multiplied by sqrt(scale) and rounded before Q.K^T (PyTorch's math path)"},
    {"qk", K_FMT, A_ACC, NULL, AC_F32, "Q.K^T accumulator (t: truncating, tensor cores)"},
    {"s", K_FMT, A_NONE | A_F32 | A_F16 | A_BF16, NULL, AC_PF_NONE, "raw scores stored (a GEMM's output)"},
    {"sm", K_FMT, A_F64 | A_F32, NULL, AC_F32,
     "softmax arithmetic: scale, maximum, exp argument, exp, rescale factors, division, LSE"},
    {"exp", K_ENUM, 0, exp_names, 0, "exp, or exp2 with log2(e) folded into the scale (one more rounding)"},
    {"eu", K_INT, 0, NULL, 4, "accuracy of exp/exp2 (and log) in ulps of sm"},
    {"lse", K_ENUM, 0, lse_names, -1,
     "LSE formula: ln (m + ln l) or log2 ((m2 + log2 l) ln 2); default log2 with exp=exp2, else ln"},
    {"p", K_FMT, A_NONE | A_F32 | A_F16 | A_BF16 | A_FP8, NULL, AC_PF_NONE, "P rounded before P.V (none: kept in sm)"},
    {"pv", K_FMT, A_ACC, NULL, AC_F32, "P.V accumulator (t: truncating)"},
    {"l", K_FMT, A_ACC, NULL, AC_F32, "row-sum accumulator (t: truncating)"},
    {"rs", K_ENUM, 0, rs_names, 0,
     "online rescale: sm (charged on the exp arguments) or acc (rounded in pv and l: n_r more roundings)"},
    {"sub", K_ENUM, 0, sub_names, 0, "subnormals: ieee, ftz (results flushed to 0), daz (inputs too: FTZ+DAZ)"},
    {"fold", K_FMT, A_NONE | A_F32, NULL, AC_PF_NONE,
     "quantized Q's and K's scales folded into the softmax scale, V's applied to the output, rounded in this format "
     "(FlashAttention-3's descales)"},
    {"dq", K_FMT, A_NONE | A_F32, NULL, AC_PF_NONE,
     "quantized tensors dequantized in this format from code, scale and zero point or min, in up to two operations "
     "((c - z) s, c s - z s, d c + m): 2u relative and 4u max|z s| absolute per element"},
};

static const char *fmt_name(int v)
{
  static const char *const t[] = {"f64", "f32t", "f16", "bf16", "e4m3", "e5m2"};
  if (v == AC_PF_NONE) return "none";
  if (v == AC_PF_Q8) return "q8";
  if (v == AC_PF_Q81) return "q81";
  if (v & AC_PF_TRUNC) return t[v & ~AC_PF_TRUNC];
  return ac_dtype_name((ac_dtype)v);
}

/* "f64, f32, f32t, ..." for part d into buf. */
static void fmt_values(const part_def *d, char *buf, size_t n)
{
  static const int order[] = {AC_PF_NONE, AC_F64,  AC_F32,   AC_F32 | AC_PF_TRUNC, AC_F16, AC_BF16,
                              AC_E4M3,    AC_E5M2, AC_PF_Q8, AC_PF_Q81};
  size_t l = 0;
  buf[0] = 0;
  for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
    int v = order[i];
    unsigned bit = v == AC_PF_NONE ? A_NONE : v == AC_PF_Q8 ? A_Q8 : v == AC_PF_Q81 ? A_Q81 : (v & AC_PF_TRUNC) ? A_T : 1u << v;
    if (!(d->allow & bit) || l >= n) continue;
    l += (size_t)snprintf(buf + l, n - l, "%s%s", l ? ", " : "", fmt_name(v));
  }
}

static void values_of(const part_def *d, char *buf, size_t n)
{
  if (d->kind == K_FMT)
    fmt_values(d, buf, n);
  else if (d->kind == K_INT)
    snprintf(buf, n, "1 to 1024");
  else {
    size_t l = 0;
    buf[0] = 0;
    for (int i = 0; d->names[i] && l < n; i++)
      l += (size_t)snprintf(buf + l, n - l, "%s%s", i ? ", " : "", d->names[i]);
  }
}

/* The value of part d spelled s; -1 when d has no such value. */
static int parse_value(const part_def *d, const char *s, int *out)
{
  if (d->kind == K_INT) {
    char *end;
    long x = strtol(s, &end, 10);
    if (!*s || *end || x < 1 || x > 1024) return -1;
    *out = (int)x;
    return 0;
  }
  if (d->kind == K_ENUM) {
    for (int i = 0; d->names[i]; i++)
      if (!strcmp(s, d->names[i])) return *out = i, 0;
    return -1;
  }
  if (!strcmp(s, "none")) return (d->allow & A_NONE) ? (*out = AC_PF_NONE, 0) : -1;
  if (!strcmp(s, "q8")) return (d->allow & A_Q8) ? (*out = AC_PF_Q8, 0) : -1;
  if (!strcmp(s, "q81")) return (d->allow & A_Q81) ? (*out = AC_PF_Q81, 0) : -1;
  if (!strcmp(s, "f32t")) return (d->allow & A_T) ? (*out = AC_F32 | AC_PF_TRUNC, 0) : -1;
  ac_dtype t;
  if (ac_dtype_parse(s, &t) < 0 || !(d->allow & (1u << t))) return -1;
  *out = (int)t;
  return 0;
}

void ac_prec_parts_default(ac_prec_parts *p)
{
  for (int i = 0; i < AC_NPARTS; i++) p->v[i] = (int16_t)parts[i].def;
  p->v[AC_PART_LSE] = 0;
}

void ac_prec_parts_format(const ac_prec_parts *p, char *buf, size_t n)
{
  size_t l = 0;
  if (n) buf[0] = 0;
  for (int i = 0; i < AC_NPARTS && l < n; i++) {
    const part_def *d = &parts[i];
    int v = p->v[i];
    char num[16];
    const char *s = d->kind == K_FMT    ? fmt_name(v)
                    : d->kind == K_ENUM ? d->names[v]
                                        : (snprintf(num, sizeof num, "%d", v), num);
    l += (size_t)snprintf(buf + l, n - l, "%s%s=%s", i ? "," : "", d->key, s);
  }
}

/* The parts given as PART=VALUE tokens in s (comma-separated), over those already in *out. */
static int parse_tokens(const char *whole, const char *s, ac_prec_parts *out, int *given, ac_err *e)
{
  while (s && *s) {
    const char *end = strchr(s, ',');
    size_t l = end ? (size_t)(end - s) : strlen(s);
    char tok[96];
    if (l == 0) return ac_err_set(e, "class '%s': empty part", whole);
    if (l >= sizeof tok) return ac_err_set(e, "class '%s': part '%.40s...' too long", whole, s);
    snprintf(tok, sizeof tok, "%.*s", (int)l, s);
    char *eq = strchr(tok, '=');
    if (!eq) return ac_err_set(e, "class '%s': '%s' is not PART=VALUE (see 'attncheck list --precision')", whole, tok);
    *eq = 0;
    int i = 0;
    while (i < AC_NPARTS && strcmp(parts[i].key, tok)) i++;
    if (i == AC_NPARTS)
      return ac_err_set(e,
                        "class '%s': unknown part '%s' (parts: q k v sqk qk s sm exp eu lse p pv l rs sub fold dq; "
                        "see 'attncheck list --precision')",
                        whole, tok);
    if (given[i]) return ac_err_set(e, "class '%s': part %s given twice", whole, tok);
    int v;
    if (parse_value(&parts[i], eq + 1, &v) < 0) {
      char vals[128];
      values_of(&parts[i], vals, sizeof vals);
      return ac_err_set(e, "class '%s': part %s has no value '%s' (%s)%s", whole, tok, eq + 1, vals,
                        !strcmp(eq + 1, "q8") || !strcmp(eq + 1, "q81") ? "; only Q is modelled in q8 blocks" : "");
    }
    out->v[i] = (int16_t)v;
    given[i] = 1;
    s = end ? end + 1 : NULL;
  }
  return 0;
}

int ac_prec_parts_parse(const char *s, ac_prec_parts *out, ac_err *e)
{
  int given[AC_NPARTS] = {0};
  ac_prec_parts_default(out);
  int rc = parse_tokens(s, s, out, given, e);
  if (rc == 0 && !given[AC_PART_LSE]) out->v[AC_PART_LSE] = out->v[AC_PART_EXP]; /* exp2: log2 */
  return rc;
}

/* A preset's base parts (s), then the tokens after it: used by ac_precision_lookup for
 * "PRESET,PART=VALUE,...". */
int ac_prec_parts_parse_over(const char *whole, const ac_prec_parts *base, const char *s, ac_prec_parts *out, ac_err *e)
{
  int given[AC_NPARTS] = {0};
  *out = *base;
  int rc = parse_tokens(whole, s, out, given, e);
  if (rc == 0 && given[AC_PART_EXP] && !given[AC_PART_LSE]) out->v[AC_PART_LSE] = out->v[AC_PART_EXP];
  return rc;
}

void ac_precision_parts_help(FILE *f)
{
  fprintf(f, "class parts (a class string is PART=VALUE,... in any order, every part defaulted; it may start\n"
             "from a preset: 'fp32,q=f16'):\n");
  for (int i = 0; i < AC_NPARTS; i++) {
    const part_def *d = &parts[i];
    char vals[128], def[16];
    values_of(d, vals, sizeof vals);
    if (d->kind == K_FMT)
      snprintf(def, sizeof def, "%s", fmt_name(d->def));
    else if (d->kind == K_INT)
      snprintf(def, sizeof def, "%d", d->def);
    else
      snprintf(def, sizeof def, "%s", d->def < 0 ? "(exp)" : d->names[d->def]);
    fprintf(f, "  %-4s %-5s %s: %s\n", d->key, def, d->what, vals);
  }
}

/* ---- the fields each part sets (docs/numerics.md §6.1) ---- */

static int fmt_dtype(int v)
{
  return v & ~AC_PF_TRUNC;
}
static double fmt_u(int v)
{
  return v == AC_PF_NONE ? 0 : ac_dtype_get((ac_dtype)fmt_dtype(v))->u;
}
static double normal_min(int v)
{
  return ldexp(1.0, ac_dtype_get((ac_dtype)fmt_dtype(v))->ieee_emin);
}

/* The absolute error of one result that falls below the normal range of format v: half the
 * smallest subnormal spacing (binary64: a full one, half of it is below binary64), or, with
 * FTZ, anything below the smallest normal. */
static double eta_of(int v, int sub)
{
  if (v == AC_PF_NONE) return 0;
  const ac_dtype_info *d = ac_dtype_get((ac_dtype)fmt_dtype(v));
  if (sub != AC_SUB_IEEE) return ldexp(1.0, d->ieee_emin);
  if (fmt_dtype(v) == AC_F64) return 0x1p-1074;
  return ldexp(1.0, d->ieee_emin - d->prec);
}

static ac_dtype narrowest(int a, int b)
{
  ac_dtype x = (ac_dtype)fmt_dtype(a), y = (ac_dtype)fmt_dtype(b);
  return ac_dtype_get(y)->max_finite < ac_dtype_get(x)->max_finite ? y : x;
}

/* Input rounding of one tensor to format v: relative u and absolute underflow (q8: 0 here, its
 * per-block term is apart). */
static void input_round(int v, int sub, double *u, double *eta)
{
  *u = v == AC_PF_NONE || v == AC_PF_Q8 || v == AC_PF_Q81 ? 0 : fmt_u(v);
  *eta = v == AC_PF_NONE || v == AC_PF_Q8 || v == AC_PF_Q81 ? 0 : eta_of(v, sub);
}

void ac_prec_parts_derive(const ac_prec_parts *p, ac_precision *c)
{
  const int16_t *v = p->v;
  const int sub = v[AC_PART_SUB], qk = v[AC_PART_QK], pv = v[AC_PART_PV], l = v[AC_PART_L], sm = v[AC_PART_SM];
  c->parts = *p;
  c->u_qk = fmt_u(qk);
  c->qk_trunc = (qk & AC_PF_TRUNC) != 0;
  c->u_S = fmt_u(v[AC_PART_S]);
  c->score_store = v[AC_PART_S] == AC_PF_NONE ? AC_F64 : (ac_dtype)v[AC_PART_S];
  c->u_s = v[AC_PART_EXP] ? 1.5 * fmt_u(sm) : fmt_u(sm);
  c->u_e = v[AC_PART_EU] * fmt_u(sm);
  c->u_p = fmt_u(v[AC_PART_P]);
  c->u_a = fmt_u(pv);
  c->acc_trunc = (pv & AC_PF_TRUNC) != 0;
  c->u_l = fmt_u(l);
  c->l_trunc = (l & AC_PF_TRUNC) != 0;
  c->acc_block = 0;
  c->nr_tile = 1;
  c->mu = normal_min(v[AC_PART_P] == AC_PF_NONE ? sm : v[AC_PART_P]);
  c->mu_sum = normal_min(l);
  c->range = narrowest(qk, sm);
  c->sum_range = narrowest(pv, l);
  double es = eta_of(v[AC_PART_S], sub), eq = eta_of(qk, sub);
  c->eta_qk = es > eq ? es : eq;
  c->eta_a = eta_of(pv, sub);
  c->scaled_in = v[AC_PART_SQK] == AC_PF_NONE ? AC_F64 : (ac_dtype)v[AC_PART_SQK];
  c->eta_in = eta_of(v[AC_PART_SQK], sub);
  c->u_lse = v[AC_PART_LSE] ? 1.5 * fmt_u(sm) : fmt_u(sm);
  c->rs_acc = v[AC_PART_RS] == 1;
  input_round(v[AC_PART_Q], sub, &c->u_qin, &c->eta_qin);
  input_round(v[AC_PART_K], sub, &c->u_kin, &c->eta_kin);
  input_round(v[AC_PART_V], sub, &c->u_vin, &c->eta_vin);
  /* K and V of a quantized cache reach a narrower format through binary32 (code x scale formed in
   * binary32, then stored in f16, bf16 or fp8: fl(fl32(x))): |fl(fl32(x)) - x| <= (u + 2^-24 (1 + u)) |x|
   * plus the narrow format's underflow, charged as u + 2^-23 (docs/quantized.md "Classes"). */
  for (int x = 0; x < 2; x++) {
    int f = v[x ? AC_PART_V : AC_PART_K];
    if (f != AC_PF_NONE && fmt_dtype(f) != AC_F32 && fmt_dtype(f) != AC_F64) *(x ? &c->u_vin : &c->u_kin) += 0x1p-23;
  }
  c->q8 = v[AC_PART_Q] == AC_PF_Q8 || v[AC_PART_Q] == AC_PF_Q81;
  c->q81 = v[AC_PART_Q] == AC_PF_Q81;
  c->u_fold = fmt_u(v[AC_PART_FOLD]);
  c->u_dq = fmt_u(v[AC_PART_DQ]);
  c->sub = sub;
  c->daz_qk = sub == AC_SUB_DAZ ? normal_min(qk) : 0;
  c->daz_v = sub == AC_SUB_DAZ ? normal_min(pv) : 0;
}

int ac_precision_grad_unmodelled(const ac_precision *c, char *buf, size_t n)
{
  const int16_t *v = c->parts.v;
  static const int check[] = {AC_PART_Q, AC_PART_K, AC_PART_V, AC_PART_RS, AC_PART_SUB, AC_PART_FOLD, AC_PART_DQ};
  for (size_t i = 0; i < sizeof check / sizeof check[0]; i++) {
    int x = check[i];
    if (v[x] != parts[x].def) {
      const part_def *d = &parts[x];
      snprintf(buf, n, "%s=%s", d->key, d->kind == K_FMT ? fmt_name(v[x]) : d->names[v[x]]);
      return 1;
    }
  }
  if (v[AC_PART_L] != v[AC_PART_PV]) {
    snprintf(buf, n, "l=%s beside pv=%s", fmt_name(v[AC_PART_L]), fmt_name(v[AC_PART_PV]));
    return 1;
  }
  if (v[AC_PART_LSE] != v[AC_PART_EXP]) {
    snprintf(buf, n, "lse=%s with exp=%s", lse_names[v[AC_PART_LSE]], exp_names[v[AC_PART_EXP]]);
    return 1;
  }
  return 0;
}
