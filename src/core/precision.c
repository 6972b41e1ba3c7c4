/* precision.c: the presets (docs/numerics.md §6), classes built from class strings, and the
 * precision specs that name a class per dtype. */
#include "config.h"
#include "precision.h"
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

int ac_prec_parts_parse_over(const char *whole, const ac_prec_parts *base, const char *s, ac_prec_parts *out,
                             ac_err *e);

typedef struct {
  const char *name, *parts, *description;
} preset_def;

/* exp is charged 4 ulps of the score format: libm's expf/exp are within 1 ulp, exp2f and
 * vendor fast paths within a few.  Score arithmetic: 2u_s·S counts the scale product and
 * the max subtraction; classes folding log2 e into the scale (exp2 style) do three roundings,
 * charged as u_s = 1.5u.  Every class assumes the worst online schedule (a rescale per key),
 * since a class is shared by kernels with any tiling. The presets of the first thirteen lines
 * keep the budgets they had as fixed fields (tests/tpreset_budgets): their row sum is charged
 * like their P.V accumulator, and their rescales in the softmax format. */
static const preset_def defs[] = {
    {"fp64", "qk=f64,sm=f64,pv=f64,l=f64", "binary64 throughout: scores, exp, P and accumulation in fp64"},
    {"fp32", "", "binary32 throughout: scores, exp, P and accumulation in fp32 (CPU kernels, fp32 GPU paths)"},
    {"fp32-exp2", "exp=exp2",
     "binary32 with exponentials in the log2 domain, log2 e folded into the scale (FlashAttention-3 style)"},
    {"fp16-fa2", "qk=f32t,exp=exp2,p=f16,pv=f32t,l=f32t",
     "fp16 inputs, fp32 QK^T and P.V accumulation (tensor cores, truncating), exp2 softmax in fp32, "
     "P rounded to fp16 before P.V, row sum from the fp32 P (FlashAttention-2)"},
    {"bf16-fa2", "qk=f32t,exp=exp2,p=bf16,pv=f32t,l=f32t",
     "bf16 inputs, fp32 QK^T and P.V accumulation (tensor cores, truncating), exp2 softmax in fp32, "
     "P rounded to bf16 before P.V, row sum from the fp32 P (FlashAttention-2)"},
    {"fp16-acc16", "sqk=f16,qk=f16,s=f16,p=f16,pv=f16,l=f16",
     "fp16 inputs with QK^T stored and P.V and the row sum accumulated in fp16; softmax in fp32"},
    {"bf16-acc16", "sqk=bf16,qk=bf16,s=bf16,p=bf16,pv=bf16,l=bf16",
     "bf16 inputs with QK^T stored and P.V and the row sum accumulated in bf16; softmax in fp32"},
    {"fp16-cublas", "qk=f32t,s=f16,p=f16,pv=f32t,l=f32t",
     "fp16 inputs through GEMMs: QK^T accumulated in fp32 (tensor cores, truncating) and stored as fp16 "
     "scores, softmax in fp32, P stored as fp16, P.V accumulated in fp32 (cuBLAS-style composite)"},
    {"fp16-math", "sqk=f16,qk=f32t,s=f16,p=f16,pv=f32t,l=f32t",
     "fp16-cublas with Q and K each multiplied by sqrt(scale) and rounded to fp16 before Q.K^T "
     "(PyTorch's math path)"},
    {"bf16-cublas", "qk=f32t,s=bf16,p=bf16,pv=f32t,l=f32t",
     "bf16 inputs through GEMMs: QK^T accumulated in fp32 (tensor cores, truncating) and stored as bf16 "
     "scores, softmax in fp32, P stored as bf16, P.V accumulated in fp32 (cuBLAS-style composite)"},
    {"bf16-math", "sqk=bf16,qk=f32t,s=bf16,p=bf16,pv=f32t,l=f32t",
     "bf16-cublas with Q and K each multiplied by sqrt(scale) and rounded to bf16 before Q.K^T "
     "(PyTorch's math path)"},
    {"e4m3-fa3", "qk=f32t,exp=exp2,p=e4m3,pv=f32t,l=f32t",
     "fp8 e4m3 inputs, fp32 accumulation (truncating), P rounded to e4m3 before P.V (FlashAttention-3 fp8)"},
    {"e5m2-fa3", "qk=f32t,exp=exp2,p=e5m2,pv=f32t,l=f32t",
     "fp8 e5m2 inputs, fp32 accumulation (truncating), P rounded to e5m2 before P.V"},
    {"ggml-f16", "q=f16,pv=f16,rs=acc",
     "ggml's CPU f16 path: Q rounded to fp16, fp32 Q.K^T, fp32 softmax, unrounded P, fp16 P.V accumulator "
     "(rescaled in fp16), fp32 row sum"},
    {"q8q-f32", "q=q8",
     "binary32 with Q rounded to q8_0 blocks (32 values, one f16 scale max|x|/127): ggml's quantized dot "
     "products on an fp32 K"},
    {"kv-f32", "k=f32,v=f32",
     "K and V dequantized once to binary32 (their codes' exact values rounded to nearest), then fp32: a kernel "
     "that converts a quantized cache to float (ggml-ref-f32, intkv-ref-f32, fp4kv-ref-f32)"},
    {"qkv-f32", "q=f32,k=f32,v=f32", "kv-f32 with Q dequantized to binary32 too (an fp8 Q: fp8kv-ref-f32)"},
    {"q8kv-f32", "q=q8,v=f32",
     "ggml's CPU quantized path: Q rounded to q8_0 blocks, K read exactly from its codes (integer block dot "
     "products), V dequantized to binary32, fp32 softmax and accumulation (ggml-q8-ref-f32)"},
    {"fold-f32", "fold=f32",
     "fp32 on the codes with Q's and K's scales folded into the softmax scale and V's applied to the output, "
     "each product rounded in binary32 (FlashAttention-3's descales; fp8kv-fold-ref-f32)"},
    {"dq-f32", "dq=f32",
     "K and V dequantized in binary32 from their codes, scales and zero points, (c - z) s or c s - z s (OpenVINO's "
     "u8/u4 KV cache, KIVI), then fp32 (store-minmax-ref-f32)"},
    {"kv-f16-fa2", "k=f16,v=f16,qk=f32t,exp=exp2,p=f16,pv=f32t,l=f32t",
     "K and V dequantized to fp16 (code x scale formed in binary32, then rounded), then fp16-fa2 on fp16 Q: vLLM's "
     "fp8 KV-cache paths, llama.cpp's CUDA tensor-core path (kv16-ref-f16)"},
    {"kv-bf16-fa2", "k=bf16,v=bf16,qk=f32t,exp=exp2,p=bf16,pv=f32t,l=f32t",
     "K and V dequantized to bf16 (code x scale formed in binary32, then rounded), then bf16-fa2 on bf16 Q "
     "(kv16-ref-bf16)"},
};
#define NPRESETS (sizeof defs / sizeof defs[0])

static ac_precision table[NPRESETS];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void build_table(void)
{
  for (size_t i = 0; i < NPRESETS; i++) {
    ac_prec_parts pp;
    ac_err e;
    if (ac_prec_parts_parse(defs[i].parts, &pp, &e) < 0) {
      fprintf(stderr, "attncheck: preset %s: %s\n", defs[i].name, e.msg);
      abort();
    }
    ac_prec_parts_derive(&pp, &table[i]);
    table[i].name = defs[i].name;
    table[i].description = defs[i].description;
  }
}

const ac_precision *ac_precision_table(size_t *n)
{
  pthread_once(&table_once, build_table);
  *n = NPRESETS;
  return table;
}

static const ac_precision *preset_named(const char *name)
{
  size_t n;
  const ac_precision *t = ac_precision_table(&n);
  for (size_t i = 0; i < n; i++)
    if (!strcmp(t[i].name, name)) return &t[i];
  /* the dtype spellings f16, f32, f64 for fp16, fp32, fp64 */
  if (name[0] == 'f' && (name[1] == '1' || name[1] == '3' || name[1] == '6')) {
    char buf[64];
    if (snprintf(buf, sizeof buf, "fp%s", name + 1) >= (int)sizeof buf) return NULL;
    for (size_t i = 0; i < n; i++)
      if (!strcmp(t[i].name, buf)) return &t[i];
  }
  return NULL;
}

/* Classes built from strings: kept for the life of the process, one per distinct set of parts. */
#define AC_PRECISION_MADE_MAX 4096
static ac_precision *made[AC_PRECISION_MADE_MAX];
static size_t nmade;
static pthread_mutex_t made_lock = PTHREAD_MUTEX_INITIALIZER;

static int same_parts(const ac_prec_parts *a, const ac_prec_parts *b)
{
  return !memcmp(a->v, b->v, sizeof a->v);
}

static int intern(const ac_prec_parts *pp, const ac_precision **out, ac_err *e)
{
  size_t n;
  const ac_precision *t = ac_precision_table(&n);
  for (size_t i = 0; i < n; i++)
    if (same_parts(&t[i].parts, pp)) return *out = &t[i], 0;
  pthread_mutex_lock(&made_lock);
  for (size_t i = 0; i < nmade; i++)
    if (same_parts(&made[i]->parts, pp)) {
      *out = made[i];
      pthread_mutex_unlock(&made_lock);
      return 0;
    }
  if (nmade == AC_PRECISION_MADE_MAX) {
    pthread_mutex_unlock(&made_lock);
    return ac_err_set(e, "more than %d distinct precision classes in one run", AC_PRECISION_MADE_MAX);
  }
  ac_precision *c = ac_xcalloc(1, sizeof *c);
  ac_prec_parts_derive(pp, c);
  char s[512];
  ac_prec_parts_format(pp, s, sizeof s);
  c->name = ac_xstrdup(s);
  c->description = "a class built from its parts";
  made[nmade++] = c;
  *out = c;
  pthread_mutex_unlock(&made_lock);
  return 0;
}

int ac_precision_lookup(const char *cls, const ac_precision **out, ac_err *e)
{
  if (!cls || !*cls) return ac_err_set(e, "empty precision class");
  if (strlen(cls) > 400) return ac_err_set(e, "precision class '%.40s...' too long", cls);
  const char *comma = strchr(cls, ',');
  size_t l = comma ? (size_t)(comma - cls) : strlen(cls);
  ac_prec_parts pp;
  if (!memchr(cls, '=', l)) { /* a preset's name, and parts over it */
    char name[128];
    snprintf(name, sizeof name, "%.*s", (int)(l < sizeof name ? l : sizeof name - 1), cls);
    const ac_precision *p = l < sizeof name ? preset_named(name) : NULL;
    if (!p) return ac_err_set(e, "unknown precision class '%s' (see 'attncheck list --precision')", name);
    if (!comma) return *out = p, 0;
    if (ac_prec_parts_parse_over(cls, &p->parts, comma + 1, &pp, e) < 0) return -1;
  } else if (ac_prec_parts_parse(cls, &pp, e) < 0) {
    return -1;
  }
  return intern(&pp, out, e);
}

const ac_precision *ac_precision_find(const char *name)
{
  const ac_precision *c;
  ac_err e;
  return ac_precision_lookup(name, &c, &e) == 0 ? c : NULL;
}

void ac_precision_string(const ac_precision *c, char *buf, size_t n)
{
  ac_prec_parts_format(&c->parts, buf, n);
}

const ac_precision *ac_precision_default(ac_dtype t)
{
  switch (t) {
  case AC_F64: return preset_named("fp64");
  case AC_F16: return preset_named("fp16-fa2");
  case AC_BF16: return preset_named("bf16-fa2");
  case AC_E4M3: return preset_named("e4m3-fa3");
  case AC_E5M2: return preset_named("e5m2-fa3");
  default: return preset_named("fp32");
  }
}

/* ---- precision specs: "CLASS", "DTYPE=CLASS,...", a class string continuing any entry ---- */

/* What token tok (l bytes) is: 0 a class name (no '='), 1 DTYPE=..., 2 a part PART=...; the dtype
 * into *d for 1. */
static int token_kind(const char *tok, size_t l, ac_dtype *d)
{
  const char *eq = memchr(tok, '=', l);
  if (!eq) return 0;
  char key[32];
  if ((size_t)(eq - tok) >= sizeof key) return 2;
  snprintf(key, sizeof key, "%.*s", (int)(eq - tok), tok);
  return ac_dtype_parse(key, d) == 0 ? 1 : 2;
}

/* Calls fn for each entry of spec: its dtype (-1 bare) and its class string. Returns the
 * first non-zero fn result, or -2 when an entry does not fit AC_PRECISION_SPEC_MAX. */
#define AC_PRECISION_SPEC_MAX 512
typedef int (*entry_fn)(void *ctx, int dtype, const char *cls);
static int each_entry(const char *spec, entry_fn fn, void *ctx)
{
  char cur[AC_PRECISION_SPEC_MAX] = "";
  int have = 0, dt = -1;
  for (const char *s = spec; s && *s;) {
    const char *end = strchr(s, ',');
    size_t l = end ? (size_t)(end - s) : strlen(s);
    ac_dtype d;
    int kind = token_kind(s, l, &d);
    size_t cl = strlen(cur);
    if (kind == 2 && have) { /* a part continues the entry before it */
      if (cl + 1 + l >= sizeof cur) return -2;
      snprintf(cur + cl, sizeof cur - cl, ",%.*s", (int)l, s);
    } else {
      if (have) {
        int rc = fn(ctx, dt, cur);
        if (rc) return rc;
      }
      const char *val = kind == 1 ? memchr(s, '=', l) + 1 : s;
      size_t vl = l - (size_t)(val - s);
      if (vl >= sizeof cur) return -2;
      snprintf(cur, sizeof cur, "%.*s", (int)vl, val);
      dt = kind == 1 ? (int)d : -1;
      have = 1;
    }
    s = end ? end + 1 : NULL;
  }
  return have ? fn(ctx, dt, cur) : 0;
}

typedef struct {
  int t;
  char *name;
  size_t n;
  int found; /* 1 dtype entry, 2 bare */
} entry_ctx;

static int entry_pick(void *ctx, int dtype, const char *cls)
{
  entry_ctx *x = ctx;
  if (dtype == x->t) {
    snprintf(x->name, x->n, "%s", cls);
    x->found = 1;
    return 1;
  }
  if (dtype < 0 && !x->found) {
    snprintf(x->name, x->n, "%s", cls);
    x->found = 2;
  }
  return 0;
}

int ac_precision_spec_entry(const char *spec, ac_dtype t, char *name, size_t n)
{
  entry_ctx x = {(int)t, name, n, 0};
  name[0] = 0;
  if (!spec) return 0;
  each_entry(spec, entry_pick, &x);
  return x.found;
}

int ac_precision_spec_names(const char *spec, ac_dtype t)
{
  char name[AC_PRECISION_SPEC_MAX];
  return ac_precision_spec_entry(spec, t, name, sizeof name) != 0;
}

typedef struct {
  const char *spec;
  int bare;
  ac_err *e;
} check_ctx;

static int entry_check(void *ctx, int dtype, const char *cls)
{
  check_ctx *x = ctx;
  const ac_precision *c;
  if (dtype < 0 && x->bare++) return ac_err_set(x->e, "precision '%s': more than one class without a dtype", x->spec);
  return ac_precision_lookup(cls, &c, x->e) < 0 ? -1 : 0;
}

int ac_precision_spec_check(const char *spec, ac_err *e)
{
  if (!spec || !*spec) return ac_err_set(e, "empty precision class");
  for (const char *s = spec; s;) { /* every token: a name, DTYPE=, or a known part */
    const char *end = strchr(s, ',');
    size_t l = end ? (size_t)(end - s) : strlen(s);
    if (l == 0) return ac_err_set(e, "bad precision '%s': expected CLASS or DTYPE=CLASS,...", spec);
    s = end ? end + 1 : NULL;
  }
  check_ctx x = {spec, 0, e};
  int rc = each_entry(spec, entry_check, &x);
  if (rc == -2) return ac_err_set(e, "precision '%.40s...': an entry is too long", spec);
  return rc < 0 ? -1 : 0;
}

typedef struct {
  char *buf;
  size_t n, l;
} canon_ctx;

static int entry_canon(void *ctx, int dtype, const char *cls)
{
  canon_ctx *x = ctx;
  const ac_precision *c;
  ac_err e;
  if (ac_precision_lookup(cls, &c, &e) < 0) return -1;
  int w = snprintf(x->buf + x->l, x->n - x->l, "%s%s%s%s", x->l ? "," : "",
                   dtype < 0 ? "" : ac_dtype_name((ac_dtype)dtype), dtype < 0 ? "" : "=", c->name);
  if (w < 0 || (size_t)w >= x->n - x->l) return -1;
  x->l += (size_t)w;
  return 0;
}

int ac_precision_spec_canonical(const char *spec, char *buf, size_t n)
{
  canon_ctx x = {buf, n, 0};
  if (!n) return -1;
  buf[0] = 0;
  if (each_entry(spec, entry_canon, &x) != 0) {
    snprintf(buf, n, "%s", spec);
    return -1;
  }
  return 0;
}

int ac_precision_resolve(const char *override_name, const char *declared, ac_dtype t,
                         const ac_precision **out, ac_err *e)
{
  char name[AC_PRECISION_SPEC_MAX];
  if (!ac_precision_spec_entry(override_name, t, name, sizeof name))
    ac_precision_spec_entry(declared, t, name, sizeof name);
  if (!name[0]) {
    *out = ac_precision_default(t);
    return 0;
  }
  return ac_precision_lookup(name, out, e);
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

static const double mu_list[] = {0x1p-1022, 0x1p-126, 0x1p-14, 0x1p-6};

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
