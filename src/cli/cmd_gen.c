/* cmd_gen.c: attncheck gen — write a case file from explicit options or a worked example. */
#include "config.h"
#include <getopt.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "casefile.h"
#include "layout.h"
#include "commands.h"
#include "gen_variants.h"
#include "rng.h"
#include "variants.h"
#include "vgen.h"
#include "dout.h"
#include "quant.h"
#include "util.h"

static void usage(FILE *f)
{
  fprintf(f,
          "usage: attncheck gen -o|--out FILE [OPTIONS]\n"
          "       attncheck gen --out FILE --example NAME [--layout L] [--pad N]\n\n"
          "Writes one case (NPZ: q, k, v and meta.json) from explicit options.\n\n"
          "  -o, --out FILE      the case file to write (required; written atomically)\n"
          "  --example NAME      a worked example: tiny3, andrea-120m\n"
          "  --dtype T           f64 f32 f16 bf16 e4m3 e5m2 (default f32); with --dtypes the compute dtype\n"
          "  --dtypes Q,K,V,O    each tensor in its own dtype (mixed_dtypes), e.g. f32,f16,f16,f32 or\n"
          "                      e4m3,e4m3,e4m3,bf16; q, k and v within the compute dtype (default: the\n"
          "                      one of q, k, v that holds the other two)\n"
          "  --mask M            none, causal, causal-bottom-right (default none)\n"
          "  --batch N           (default 1)\n"
          "  --heads N           query heads (default 1)\n"
          "  --kv-heads N        key/value heads, dividing heads (default: heads)\n"
          "  --t N               tq = tk = N (default 16)\n"
          "  --tq N, --tk N      query and key lengths\n"
          "  --dk N              (default 64)\n"
          "  --dv N              (default: dk)\n"
          "  --scale S           default (1/sqrt(dk)), a decimal or a hex float such as 0x1p-3\n"
          "  --seed S            (default 0); values come from stream 0, drawn for q, k, v in that order\n"
          "  --case-index K      recorded in meta.json (default -1)\n"
          "  --dist D            normal, uniform, zeros (default normal)\n"
          "  --mean M, --sigma S normal(M, S) (default 0, 1)\n"
          "  --lo A, --hi B      uniform on [A, B) (default -1, 1)\n"
          "  --layout L          strides presented to kernels: contiguous (bhtd), padded (bhtd with gaps),\n"
          "                      bthd (heads interleaved per position), bthd-padded; strided = padded\n"
          "  --pad N             elements of gap after each row of d (default 8 for the padded layouts)\n"
          "  --mem-cap SIZE      refuse cases larger than SIZE bytes (default 8G)\n"
          "attention variants (docs/variants.md; tensors drawn from stream 11 of the seed):\n"
          "  --window L,R        sliding window: keys i+off-L .. i+off+R visible (-1 = unbounded)\n"
          "  --window-align A    bottom-right (off = tk - tq, FlashAttention; default) or top-left (off = 0)\n"
          "  --softcap C         s = C tanh(s / C), C finite and > 0\n"
          "  --alibi M           ALiBi slopes m_h = M 2^(-8(h+1)/H) (binary32); --alibi-per-batch: [B][H]\n"
          "  --bias P            additive bias: normal[:SIGMA], neginf-blocks, neginf-rows, sentinel:VALUE,\n"
          "                      nan-masked, ramp[:HEIGHT]; --bias-dtype T (default: the case's dtype);\n"
          "                      --bias-broadcast b|h|bh stores extent 1 over batch and/or heads\n"
          "  --bool-mask P       boolean mask: random, banded, empty-middle, sparse; --mask-broadcast b|h|bh\n"
          "  --sinks P           a sink logit per head: normal, dominant, vanishing, level (at the LSE\n"
          "                      of the head's last query row, +-3)\n"
          "  --descale P         fp32 descales of q, k, v per (batch, kv head): normal, tiny, huge\n"
          "  --dropout P         dropout with drop probability P (rounded to binary32, [0, 1)) and the keep-mask\n"
          "                      of the reference generator (docs/dropout.md); --dropout-seed S (default --seed)\n"
          "backward pass (docs/backward.md):\n"
          "  --grad P            also write dO (member do, o's shape and dtype, stream 13 of the seed):\n"
          "                      normal[:SIGMA], zero-rows, huge, tiny, zeros, cancel (dP - D cancels);\n"
          "                      a varlen batch gets a packed dO, a paged cache none (exit 2)\n"
          "serving layouts (docs/layouts.md; instead of --batch, --t, --tq, --tk):\n"
          "  --seqlens-q L,L,..  query length of each sequence (0 allowed): a varlen batch\n"
          "  --seqlens-k L,L,..  key length of each sequence (varlen; default: the query lengths)\n"
          "  --cache-seqlens L,..  a paged KV cache: keys of each sequence (queries: --seqlens-q, default 1 each)\n"
          "  --page-size N       slots per page (default 16); --spare-pages N pages no sequence lists;\n"
          "                      --shared-pages N the first N pages of every sequence are the same pages;\n"
          "                      --shuffle-pages pages in a random order; --extra-cols N block-table columns (-1)\n"
          "quantized tensors (docs/quantized.md; codes and scales from the format's reference quantizer):\n"
          "  --kv-format F[:G]   k and v as format F: q8_0 q4_0 q4_1 q5_0 q5_1 iq4_nl (blocks of 32), e4m3fn\n"
          "                      e4m3fnuz e5m2, int8 uint8 int4 int2, nvfp4 (e4m3 per 16, an f32 tensor scale),\n"
          "                      mxfp4 (e8m0 per 32); G: block tensor head token channel group:N tile:GxN\n"
          "                      channel:G, then :scale=DT :zero=DT :packed=low|high :store=QUANTIZER\n"
          "  --k-format F[:G], --v-format F[:G], --q-format F[:G]   one tensor alone\n"
          "  --kv-adversary P    k's and v's values at the quantizer's edges: outlier zero_blocks scale_overflow\n"
          "                      scale_subnormal ties asym_range nan_in_block far_outlier given_small offset\n"
          "  --help\n\n"
          "Values are rounded once, to nearest even, into the dtype (e4m3 saturates).\n"
          "exit: 0 written; 2 bad usage or the file could not be written.\n");
}

enum {
  O_OUT = 256, O_EXAMPLE, O_DTYPE, O_MASK, O_BATCH, O_HEADS, O_KVHEADS, O_T, O_TQ, O_TK, O_DK, O_DV,
  O_SCALE, O_SEED, O_CASEINDEX, O_DIST, O_MEAN, O_SIGMA, O_LO, O_HI, O_LAYOUT, O_PAD, O_MEMCAP,
  O_WINDOW, O_WALIGN, O_SOFTCAP, O_ALIBI, O_ALIBI_PB, O_BIAS, O_BIAS_DTYPE, O_BIAS_BC, O_BMASK, O_MASK_BC,
  O_SINKS, O_DESCALE, O_DTYPES, O_SEQQ, O_SEQK, O_CACHE, O_PAGESZ, O_SPARE, O_SHARED, O_SHUFFLE, O_XCOLS, O_GRAD,
  O_KVFMT, O_KFMT, O_VFMT, O_QFMT, O_DROPOUT, O_DROPOUT_SEED, O_KVADV, O_HELP
};

static const struct option opts[] = {
  {"out", required_argument, 0, O_OUT},         {"example", required_argument, 0, O_EXAMPLE},
  {"dtype", required_argument, 0, O_DTYPE},     {"mask", required_argument, 0, O_MASK},
  {"batch", required_argument, 0, O_BATCH},     {"heads", required_argument, 0, O_HEADS},
  {"kv-heads", required_argument, 0, O_KVHEADS}, {"t", required_argument, 0, O_T},
  {"tq", required_argument, 0, O_TQ},           {"tk", required_argument, 0, O_TK},
  {"dk", required_argument, 0, O_DK},           {"dv", required_argument, 0, O_DV},
  {"scale", required_argument, 0, O_SCALE},     {"seed", required_argument, 0, O_SEED},
  {"case-index", required_argument, 0, O_CASEINDEX}, {"dist", required_argument, 0, O_DIST},
  {"mean", required_argument, 0, O_MEAN},       {"sigma", required_argument, 0, O_SIGMA},
  {"lo", required_argument, 0, O_LO},           {"hi", required_argument, 0, O_HI},
  {"layout", required_argument, 0, O_LAYOUT},   {"pad", required_argument, 0, O_PAD},
  {"mem-cap", required_argument, 0, O_MEMCAP},
  {"window", required_argument, 0, O_WINDOW},   {"window-align", required_argument, 0, O_WALIGN},
  {"softcap", required_argument, 0, O_SOFTCAP}, {"alibi", required_argument, 0, O_ALIBI},
  {"alibi-per-batch", no_argument, 0, O_ALIBI_PB}, {"bias", required_argument, 0, O_BIAS},
  {"bias-dtype", required_argument, 0, O_BIAS_DTYPE}, {"bias-broadcast", required_argument, 0, O_BIAS_BC},
  {"bool-mask", required_argument, 0, O_BMASK}, {"mask-broadcast", required_argument, 0, O_MASK_BC},
  {"sinks", required_argument, 0, O_SINKS},     {"descale", required_argument, 0, O_DESCALE},
  {"dtypes", required_argument, 0, O_DTYPES},
  {"seqlens-q", required_argument, 0, O_SEQQ},  {"seqlens-k", required_argument, 0, O_SEQK},
  {"cache-seqlens", required_argument, 0, O_CACHE}, {"page-size", required_argument, 0, O_PAGESZ},
  {"spare-pages", required_argument, 0, O_SPARE}, {"shared-pages", required_argument, 0, O_SHARED},
  {"shuffle-pages", no_argument, 0, O_SHUFFLE}, {"extra-cols", required_argument, 0, O_XCOLS},
  {"grad", required_argument, 0, O_GRAD},
  {"kv-format", required_argument, 0, O_KVFMT}, {"k-format", required_argument, 0, O_KFMT},
  {"v-format", required_argument, 0, O_VFMT},   {"q-format", required_argument, 0, O_QFMT},
  {"dropout", required_argument, 0, O_DROPOUT}, {"dropout-seed", required_argument, 0, O_DROPOUT_SEED},
  {"kv-adversary", required_argument, 0, O_KVADV},
  {"help", no_argument, 0, O_HELP},
  {0, 0, 0, 0},
};

/* The long name of option value ch. */
static const char *opt_name(int ch)
{
  for (const struct option *x = opts; x->name; x++)
    if (x->val == ch) return x->name;
  return "?";
}

/* Strides in elements for [b][h][t][d]: order "bhtd" or "bthd", pad elements after each d-row. */
static void layout_strides(int64_t st[4], int bthd, int64_t pad, int64_t H, int64_t T, int64_t D)
{
  int64_t row = D + pad;
  st[3] = 1;
  if (bthd) {
    st[1] = row;
    st[2] = H * row;
    st[0] = T * H * row;
  } else {
    st[2] = row;
    st[1] = T * row;
    st[0] = H * T * row;
  }
}

typedef enum { DIST_NORMAL, DIST_UNIFORM, DIST_ZEROS } dist_kind;

static void fill(ac_dtype dt, ac_rng *r, void *t, size_t n, dist_kind d, double a, double b)
{
  for (size_t i = 0; i < n; i++) {
    double x;
    switch (d) {
    case DIST_NORMAL: x = a + b * ac_rng_normal(r); break;
    case DIST_UNIFORM: x = a + (b - a) * ac_rng_uniform(r); break;
    default: x = 0.0; break;
    }
    ac_store_bits(dt, t, i, ac_encode_f64(dt, x));
  }
}

/* The serving-layout options. */
typedef struct {
  const char *seq_q, *seq_k, *cache;   /* comma lists */
  int64_t page_size, spare, shared, xcols;
  int shuffle, dims;                   /* dims: --batch, --t, --tq, --tk given */
} lay_opts;

typedef struct {
  const char *out, *example, *layout, *dist_name, *scale_s, *grad;
  const char *qfmt[3];   /* --q-format, --k-format, --v-format (--kv-format sets k and v) */
  const char *qadv;      /* --kv-adversary */
  lay_opts lay;
  ac_vspec variants;
  ac_dtype dtype;
  ac_dtype dtypes[4];   /* --dtypes: q, k, v, o */
  int has_dtype, has_dtypes;
  ac_mask mask;
  int64_t batch, heads, kv_heads, tq, tk, t, dk, dv, pad, case_index;
  uint64_t seed;
  double mean, sigma, lo, hi;
  int shape_opts;   /* options that --example does not take */
  int bthd;         /* from the layout */
  dist_kind dist;
} gen_opts;

/* Applies option ch; 1 when its value is bad. */
static int gen_option(gen_opts *o, int ch, const char *a)
{
  int bad = 0;
  switch (ch) {
  case 'o':
  case O_OUT: o->out = a; return 0;
  case O_EXAMPLE: o->example = a; return 0;
  case O_LAYOUT: o->layout = a; return 0;
  case O_GRAD: o->grad = a; return 0;
  case O_KVFMT: o->qfmt[1] = o->qfmt[2] = a; break;
  case O_KFMT: o->qfmt[1] = a; break;
  case O_VFMT: o->qfmt[2] = a; break;
  case O_QFMT: o->qfmt[0] = a; break;
  case O_KVADV: o->qadv = a; break;
  case O_PAD: return ac_parse_i64(a, &o->pad) || o->pad < 0 || o->pad > (1 << 20);
  case O_MEMCAP: {
    uint64_t cap;
    bad = ac_parse_size(a, &cap) || cap == 0;
    if (!bad) ac_set_mem_cap(cap);
    return bad;
  }
  case O_SEQQ: o->lay.seq_q = a; break;
  case O_SEQK: o->lay.seq_k = a; break;
  case O_CACHE: o->lay.cache = a; break;
  case O_PAGESZ: bad = ac_parse_i64(a, &o->lay.page_size) || o->lay.page_size < 0; break;
  case O_SPARE: bad = ac_parse_i64(a, &o->lay.spare) || o->lay.spare < 0 || o->lay.spare > INT32_MAX; break;
  case O_SHARED: bad = ac_parse_i64(a, &o->lay.shared) || o->lay.shared < 0 || o->lay.shared > INT32_MAX; break;
  case O_SHUFFLE: o->lay.shuffle = 1; break;
  case O_XCOLS: bad = ac_parse_i64(a, &o->lay.xcols) || o->lay.xcols < 0 || o->lay.xcols > 1 << 20; break;
  case O_DTYPE: bad = ac_dtype_parse(a, &o->dtype), o->has_dtype = 1; break;
  case O_DTYPES: {
    char buf[4][16], tail;
    bad = sscanf(a, "%15[^,],%15[^,],%15[^,],%15[^,]%c", buf[0], buf[1], buf[2], buf[3], &tail) != 4;
    for (int i = 0; !bad && i < 4; i++) bad = ac_dtype_parse(buf[i], &o->dtypes[i]);
    o->has_dtypes = 1;
    break;
  }
  case O_MASK: bad = ac_mask_parse(a, &o->mask); break;
  case O_BATCH: o->lay.dims = 1, bad = ac_parse_i64(a, &o->batch); break;
  case O_HEADS: bad = ac_parse_i64(a, &o->heads); break;
  case O_KVHEADS: bad = ac_parse_i64(a, &o->kv_heads); break;
  case O_T: o->lay.dims = 1, bad = ac_parse_i64(a, &o->t); break;
  case O_TQ: o->lay.dims = 1, bad = ac_parse_i64(a, &o->tq); break;
  case O_TK: o->lay.dims = 1, bad = ac_parse_i64(a, &o->tk); break;
  case O_DK: bad = ac_parse_i64(a, &o->dk); break;
  case O_DV: bad = ac_parse_i64(a, &o->dv); break;
  case O_SCALE: o->scale_s = a; break;
  case O_SEED: bad = ac_parse_u64(a, &o->seed); break;
  case O_CASEINDEX: bad = ac_parse_i64(a, &o->case_index) || o->case_index < -1; break;
  case O_DIST: o->dist_name = a; break;
  case O_MEAN: bad = ac_gen_parse_double(a, &o->mean); break;
  case O_SIGMA: bad = ac_gen_parse_double(a, &o->sigma) || o->sigma < 0; break;
  case O_LO: bad = ac_gen_parse_double(a, &o->lo); break;
  case O_HI: bad = ac_gen_parse_double(a, &o->hi); break;
  default: bad = ac_gen_variant_option(&o->variants, opt_name(ch), a); break;
  }
  o->shape_opts++;
  return bad;
}

static int parse_gen_args(int argc, char **argv, gen_opts *o)
{
  const char *cmd = "gen";
  *o = (gen_opts){.layout = "contiguous", .dist_name = "normal", .scale_s = "default", .dtype = AC_F32,
                  .mask = AC_MASK_NONE, .batch = 1, .heads = 1, .kv_heads = -1, .tq = -1, .tk = -1, .t = 16,
                  .dk = 64, .dv = -1, .pad = -1, .case_index = -1, .sigma = 1, .lo = -1, .hi = 1,
                  .lay = {.page_size = 16}};
  optind = 0;
  opterr = 0;
  int ch;
  while ((ch = ac_cmd_getopt_long(argc, argv, ":o:h", opts)) != -1) {
    if (ch == 'h' || ch == O_HELP) {
      usage(stdout);
      return AC_EXIT_OK;
    }
    if (ch != 'o' && (ch < O_OUT || ch >= O_HELP)) return ac_cmd_getopt_error(cmd, ch, argv);
    if (gen_option(o, ch, optarg))
      return ac_cmd_usage_error(cmd, "bad value '%s' for --%s", optarg ? optarg : "", opt_name(ch));
  }
  if (optind < argc) return ac_cmd_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
  if (!o->out) return ac_cmd_usage_error(cmd, "--out FILE is required");
  if (o->variants.dropout_seed_set && !(o->variants.used & AC_FEAT_DROPOUT))
    return ac_cmd_usage_error(cmd, "--dropout-seed needs --dropout");
  return AC_CMD_RUN;
}

/* The layout and the distribution by name, and the padding the layout implies. */
static int resolve_names(gen_opts *o)
{
  const char *cmd = "gen", *layout = o->layout, *dist_name = o->dist_name;
  int padded;
  if (!strcmp(layout, "contiguous") || !strcmp(layout, "bhtd")) o->bthd = 0, padded = 0;
  else if (!strcmp(layout, "padded") || !strcmp(layout, "strided")) o->bthd = 0, padded = 1;
  else if (!strcmp(layout, "bthd")) o->bthd = 1, padded = 0;
  else if (!strcmp(layout, "bthd-padded")) o->bthd = 1, padded = 1;
  else return ac_cmd_usage_error(cmd, "unknown layout '%s' (contiguous, padded, bthd, bthd-padded)", layout);
  if (o->pad < 0) o->pad = padded ? 8 : 0;

  if (!strcmp(dist_name, "normal")) o->dist = DIST_NORMAL;
  else if (!strcmp(dist_name, "uniform")) o->dist = DIST_UNIFORM;
  else if (!strcmp(dist_name, "zeros")) o->dist = DIST_ZEROS;
  else return ac_cmd_usage_error(cmd, "unknown distribution '%s' (normal, uniform, zeros)", dist_name);
  if (o->dist == DIST_UNIFORM && !(o->lo < o->hi)) return ac_cmd_usage_error(cmd, "--lo must be below --hi");
  return AC_CMD_RUN;
}

/* The problem the shape options describe, its scale included. */
static int make_problem(const gen_opts *o, ac_problem *p)
{
  const char *cmd = "gen", *scale_s = o->scale_s;
  p->dtype = o->dtype;
  p->mask = o->mask;
  p->batch = o->batch;
  p->heads = o->heads;
  p->kv_heads = o->kv_heads < 0 ? o->heads : o->kv_heads;
  p->tq = o->tq < 0 ? o->t : o->tq;
  p->tk = o->tk < 0 ? o->t : o->tk;
  p->dk = o->dk;
  p->dv = o->dv < 0 ? o->dk : o->dv;
  if (o->has_dtypes) {
    /* the compute dtype: --dtype, else the one of q, k, v that holds the other two */
    for (int i = 2; !o->has_dtype && i >= 0; i--)
      if (ac_dtype_within(o->dtypes[0], o->dtypes[i]) && ac_dtype_within(o->dtypes[1], o->dtypes[i]) &&
          ac_dtype_within(o->dtypes[2], o->dtypes[i]))
        p->dtype = o->dtypes[i];
    ac_err de;
    if (ac_features_set_dtypes(p, o->dtypes, &de)) return ac_cmd_usage_error(cmd, "--dtypes: %s", de.msg);
  }
  if (!strcmp(scale_s, "default")) {
    p->scale_is_default = 1;
    p->scale = ac_problem_scale(p);
  } else if (!strncasecmp(scale_s + (*scale_s == '-' || *scale_s == '+'), "0x", 2)) {
    ac_err se;
    if (ac_scale_parse_hex(scale_s, &p->scale, &se) != 0) return ac_cmd_usage_error(cmd, "%s", se.msg);
  } else if (ac_gen_parse_double(scale_s, &p->scale) != 0) {
    return ac_cmd_usage_error(cmd, "bad scale '%s' (default, a finite decimal or hex float)", scale_s);
  }
  return AC_CMD_RUN;
}

/* A comma list of lengths >= 0 into a new array; its count, or -1. */
static int64_t parse_lengths(const char *s, int64_t **out)
{
  int64_t n = 1, k = 0;
  for (const char *c = s; *c; c++) n += *c == ',';
  int64_t *v = ac_xcalloc((size_t)n, sizeof *v);
  char *copy = ac_xstrdup(s), *save = NULL;
  for (char *t = strtok_r(copy, ",", &save); t && k < n; t = strtok_r(NULL, ",", &save))
    if (ac_parse_i64(t, &v[k++]) != 0 || v[k - 1] < 0 || v[k - 1] > INT32_MAX) k = n + 1;
  free(copy);
  if (k != n) {
    free(v);
    return -1;
  }
  *out = v;
  return n;
}

/* The serving layout of the options (none without --seqlens-q or --cache-seqlens). */
static int make_layout(const gen_opts *o, ac_case *c)
{
  const char *cmd = "gen";
  const lay_opts *l = &o->lay;
  if (!l->seq_q && !l->cache) {
    if (l->seq_k) return ac_cmd_usage_error(cmd, "--seqlens-k needs --seqlens-q");
    return AC_CMD_RUN;
  }
  if (l->dims) return ac_cmd_usage_error(cmd, "--batch, --t, --tq and --tk do not go with a layout (--seqlens-q, --cache-seqlens)");
  if (l->cache && l->seq_k) return ac_cmd_usage_error(cmd, "--seqlens-k and --cache-seqlens exclude each other");
  int64_t *tq = NULL, *tk = NULL, nq = -1, nk = -1;
  const char *klist = l->cache ? l->cache : l->seq_k ? l->seq_k : l->seq_q;
  int rc = AC_CMD_RUN;
  if ((l->seq_q && (nq = parse_lengths(l->seq_q, &tq)) < 0) || (nk = parse_lengths(klist, &tk)) < 0) {
    rc = ac_cmd_usage_error(cmd, "bad length list '%s' (comma-separated integers in [0, 2^31))", nq < 0 && l->seq_q ? l->seq_q : klist);
    goto done;
  }
  if (!tq) {
    tq = ac_xcalloc((size_t)nk, sizeof *tq);
    for (int64_t b = 0; b < nk; b++) tq[b] = 1;
    nq = nk;
  }
  if (nq != nk) {
    rc = ac_cmd_usage_error(cmd, "%lld query lengths but %lld key lengths", (long long)nq, (long long)nk);
    goto done;
  }
  ac_layout_spec s = {.kind = l->cache ? AC_FEAT_PAGED : AC_FEAT_VARLEN, .nseq = nq, .tq = tq, .tk = tk,
                      .page_size = l->page_size, .spare_pages = l->spare, .extra_cols = l->xcols,
                      .shared_pages = l->shared, .shuffle = l->shuffle};
  ac_rng r;
  ac_rng_init(&r, o->seed, 12);
  ac_err e;
  if (ac_layout_build(c, &s, &r, &e) != 0) rc = ac_cmd_usage_error(cmd, "%s", e.msg);
done:
  free(tq);
  free(tk);
  return rc;
}

/* The generator's parameters as meta.json records them. */
static char *params_json(const gen_opts *o)
{
  json_object *pj = json_object_new_object();
  json_object_object_add(pj, "dist", json_object_new_string(o->dist_name));
  if (o->dist == DIST_NORMAL) {
    json_object_object_add(pj, "mean", json_object_new_double(o->mean));
    json_object_object_add(pj, "sigma", json_object_new_double(o->sigma));
  } else if (o->dist == DIST_UNIFORM) {
    json_object_object_add(pj, "lo", json_object_new_double(o->lo));
    json_object_object_add(pj, "hi", json_object_new_double(o->hi));
  }
  json_object_object_add(pj, "stream", json_object_new_int(0));
  json_object_object_add(pj, "order", json_object_new_string("q,k,v"));
  json_object_object_add(pj, "layout", json_object_new_string(o->layout));
  json_object_object_add(pj, "pad", json_object_new_int64(o->pad));
  char *text = ac_xstrdup(json_object_to_json_string_ext(pj, JSON_C_TO_STRING_PLAIN));
  json_object_put(pj);
  return text;
}

/* The case: a worked example, or the shape options with values drawn from stream 0 of the seed. */
static int make_case(const gen_opts *o, ac_case *c)
{
  const char *cmd = "gen";
  ac_err e;
  if (o->example) {
    if (o->shape_opts)
      return ac_cmd_usage_error(cmd, "--example takes only --out, --layout, --pad and --mem-cap");
    if (ac_case_example(c, o->example, &e) != 0) return ac_cmd_usage_error(cmd, "%s", e.msg);
    return AC_CMD_RUN;
  }
  ac_case_init(c);
  int rc = make_problem(o, &c->p);
  if (rc != AC_CMD_RUN || (rc = make_layout(o, c)) != AC_CMD_RUN) return rc;
  if (ac_case_alloc(c, &e) != 0) {
    ac_case_free(c);
    return ac_cmd_usage_error(cmd, "%s", e.msg);
  }
  c->seed = o->seed;
  c->case_index = o->case_index;
  snprintf(c->generator, sizeof c->generator, "gen");
  ac_rng r;
  ac_rng_init(&r, o->seed, 0);
  double a = o->dist == DIST_UNIFORM ? o->lo : o->mean, b = o->dist == DIST_UNIFORM ? o->hi : o->sigma;
  for (const char *x = "qkv"; *x; x++) {
    ac_dtype dt = ac_tensor_dtype(&c->p, *x);
    fill(dt, &r, *x == 'q' ? c->q : *x == 'k' ? c->k : c->v, ac_case_bytes(c, *x) / ac_dtype_size(dt), o->dist, a, b);
  }
  c->params_json = params_json(o);
  uint32_t lay = c->p.f.used & AC_FEAT_LAYOUTS;   /* ac_vspec_apply sets the variant bits */
  if (o->variants.used && ac_vspec_apply(c, &o->variants, o->seed, &e) == 0) c->p.f.used |= lay;
  else if (o->variants.used) lay = 0, c->p.f.used = 0;
  if ((o->variants.used && !c->p.f.used) || ac_layout_validate(c, &e) != 0) {
    ac_case_free(c);
    return ac_cmd_usage_error(cmd, "%s", e.msg);
  }
  return AC_CMD_RUN;
}

/* The quantized tensors the options name, quantized by their formats' reference quantizers. */
static int apply_quant(const gen_opts *o, ac_case *c)
{
  ac_err e;
  return ac_quant_apply_specs(c, o->qfmt, o->qadv, o->seed, &e) ? ac_cmd_usage_error("gen", "%s", e.msg) : AC_CMD_RUN;
}

/* The strides of the layout (left zero, i.e. contiguous, when it is contiguous). */
static int apply_layout(const gen_opts *o, ac_problem *p)
{
  int64_t pad = o->pad;
  if (!o->bthd && !pad) return AC_CMD_RUN;
  if (p->dk > INT64_MAX / 4 - pad || p->dv > INT64_MAX / 4 - pad) return ac_cmd_usage_error("gen", "--pad too large");
  layout_strides(p->q_stride, o->bthd, pad, p->heads, p->tq, p->dk);
  layout_strides(p->k_stride, o->bthd, pad, p->kv_heads, p->tk, p->dk);
  layout_strides(p->v_stride, o->bthd, pad, p->kv_heads, p->tk, p->dv);
  layout_strides(p->o_stride, o->bthd, pad, p->heads, p->tq, p->dv);
  return AC_CMD_RUN;
}

int ac_cmd_gen(int argc, char **argv)
{
  gen_opts o;
  int rc = parse_gen_args(argc, argv, &o);
  if (rc != AC_CMD_RUN || (rc = resolve_names(&o)) != AC_CMD_RUN) return rc;
  ac_case c;
  if ((rc = make_case(&o, &c)) != AC_CMD_RUN) return rc;
  if ((rc = apply_quant(&o, &c)) != AC_CMD_RUN || (rc = apply_layout(&o, &c.p)) != AC_CMD_RUN) {
    ac_case_free(&c);
    return rc;
  }
  ac_err e;
  const ac_problem *p = &c.p;
  rc = AC_EXIT_OK;
  if (o.grad && ac_dout_generate(&c, o.grad, o.seed, &e) != 0) {
    ac_case_free(&c);
    return ac_cmd_usage_error("gen", "--grad: %s", e.msg);
  }
  if (ac_case_write(&c, o.out, &e) != 0) {
    ac_cmd_error("gen", "%s", e.msg);
    rc = AC_EXIT_USAGE;
  } else {
    char dts[64] = "";
    if (p->f.used & AC_FEAT_MIXED_DTYPES)
      snprintf(dts, sizeof dts, " (q %s, k %s, v %s, o %s)", ac_dtype_name(p->f.qd), ac_dtype_name(p->f.kd),
               ac_dtype_name(p->f.vd), ac_dtype_name(p->f.od));
    printf("wrote %s: %s%s %s batch %lld heads %lld/%lld tq %lld tk %lld dk %lld dv %lld, hash %016llx\n", o.out,
           ac_dtype_name(p->dtype), dts, ac_mask_name(p->mask), (long long)p->batch, (long long)p->heads,
           (long long)p->kv_heads, (long long)p->tq, (long long)p->tk, (long long)p->dk, (long long)p->dv,
           (unsigned long long)ac_case_hash(&c));
    if (c.lay)
      printf("  layout %s: %lld sequences, %lld query tokens, %s %lld\n", p->f.used & AC_FEAT_PAGED ? "paged" : "varlen",
             (long long)p->l.nseq, (long long)p->tq, p->f.used & AC_FEAT_PAGED ? "pages" : "keys",
             (long long)(p->f.used & AC_FEAT_PAGED ? p->l.num_pages : p->tk));
    if (c.dout) printf("  dO: %s\n", o.grad);
    for (int i = 0; i < 3; i++)
      if (p->quant[i].fmt) {
        char qs[48];
        printf("  %c: %s\n", "qkv"[i], ac_qspec_str(&p->quant[i], qs, sizeof qs));
      }
  }
  ac_case_free(&c);
  return rc;
}
