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
#include "commands.h"
#include "rng.h"
#include "util.h"

static void usage(FILE *f)
{
  fprintf(f,
          "usage: attncheck gen -o|--out FILE [OPTIONS]\n"
          "       attncheck gen --out FILE --example NAME [--layout L] [--pad N]\n\n"
          "Writes one case (NPZ: q, k, v and meta.json) from explicit options.\n\n"
          "  -o, --out FILE      the case file to write (required; written atomically)\n"
          "  --example NAME      a worked example: tiny3, andrea-120m\n"
          "  --dtype T           f64 f32 f16 bf16 e4m3 e5m2 (default f32)\n"
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
          "  --help\n\n"
          "Values are rounded once, to nearest even, into the dtype (e4m3 saturates).\n"
          "exit: 0 written; 2 bad usage or the file could not be written.\n");
}

enum {
  O_OUT = 256, O_EXAMPLE, O_DTYPE, O_MASK, O_BATCH, O_HEADS, O_KVHEADS, O_T, O_TQ, O_TK, O_DK, O_DV,
  O_SCALE, O_SEED, O_CASEINDEX, O_DIST, O_MEAN, O_SIGMA, O_LO, O_HI, O_LAYOUT, O_PAD, O_MEMCAP, O_HELP
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
  {"mem-cap", required_argument, 0, O_MEMCAP},  {"help", no_argument, 0, O_HELP},
  {0, 0, 0, 0},
};

static int parse_double(const char *s, double *out)
{
  char *end;
  if (!s || !*s) return -1;
  double v = strtod(s, &end);
  if (*end || !isfinite(v)) return -1;
  *out = v;
  return 0;
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

static void fill(ac_case *c, ac_rng *r, void *t, size_t n, dist_kind d, double a, double b)
{
  for (size_t i = 0; i < n; i++) {
    double x;
    switch (d) {
    case DIST_NORMAL: x = a + b * ac_rng_normal(r); break;
    case DIST_UNIFORM: x = a + (b - a) * ac_rng_uniform(r); break;
    default: x = 0.0; break;
    }
    ac_store_bits(c->p.dtype, t, i, ac_encode_f64(c->p.dtype, x));
  }
}

int ac_cmd_gen(int argc, char **argv)
{
  const char *cmd = "gen";
  const char *out = NULL, *example = NULL, *layout = "contiguous", *dist_name = "normal", *scale_s = "default";
  ac_dtype dtype = AC_F32;
  ac_mask mask = AC_MASK_NONE;
  int64_t batch = 1, heads = 1, kv_heads = -1, tq = -1, tk = -1, t = 16, dk = 64, dv = -1, pad = -1;
  int64_t case_index = -1;
  uint64_t seed = 0;
  double mean = 0, sigma = 1, lo = -1, hi = 1;
  int shape_opts = 0;

  optind = 0;
  opterr = 0;
  int ch;
  while ((ch = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
    const char *a = optarg;
    int bad = 0;
    switch (ch) {
    case 'h':
    case O_HELP: usage(stdout); return AC_EXIT_OK;
    case 'o':
    case O_OUT: out = a; break;
    case O_EXAMPLE: example = a; break;
    case O_DTYPE: bad = ac_dtype_parse(a, &dtype); shape_opts++; break;
    case O_MASK: bad = ac_mask_parse(a, &mask); shape_opts++; break;
    case O_BATCH: bad = ac_parse_i64(a, &batch); shape_opts++; break;
    case O_HEADS: bad = ac_parse_i64(a, &heads); shape_opts++; break;
    case O_KVHEADS: bad = ac_parse_i64(a, &kv_heads); shape_opts++; break;
    case O_T: bad = ac_parse_i64(a, &t); shape_opts++; break;
    case O_TQ: bad = ac_parse_i64(a, &tq); shape_opts++; break;
    case O_TK: bad = ac_parse_i64(a, &tk); shape_opts++; break;
    case O_DK: bad = ac_parse_i64(a, &dk); shape_opts++; break;
    case O_DV: bad = ac_parse_i64(a, &dv); shape_opts++; break;
    case O_SCALE: scale_s = a; shape_opts++; break;
    case O_SEED: bad = ac_parse_u64(a, &seed); shape_opts++; break;
    case O_CASEINDEX: bad = ac_parse_i64(a, &case_index) || case_index < -1; shape_opts++; break;
    case O_DIST: dist_name = a; shape_opts++; break;
    case O_MEAN: bad = parse_double(a, &mean); shape_opts++; break;
    case O_SIGMA: bad = parse_double(a, &sigma) || sigma < 0; shape_opts++; break;
    case O_LO: bad = parse_double(a, &lo); shape_opts++; break;
    case O_HI: bad = parse_double(a, &hi); shape_opts++; break;
    case O_LAYOUT: layout = a; break;
    case O_PAD: bad = ac_parse_i64(a, &pad) || pad < 0 || pad > (1 << 20); break;
    case O_MEMCAP: {
      uint64_t cap;
      bad = ac_parse_size(a, &cap) || cap == 0;
      if (!bad) ac_set_mem_cap(cap);
      break;
    }
    default: return ac_cmd_getopt_error(cmd, ch, argv);
    }
    if (bad) return ac_cmd_usage_error(cmd, "bad value '%s' for --%s", a, opts[ch - O_OUT].name);
  }
  if (optind < argc) return ac_cmd_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
  if (!out) return ac_cmd_usage_error(cmd, "--out FILE is required");

  int bthd, padded;
  if (!strcmp(layout, "contiguous") || !strcmp(layout, "bhtd")) bthd = 0, padded = 0;
  else if (!strcmp(layout, "padded") || !strcmp(layout, "strided")) bthd = 0, padded = 1;
  else if (!strcmp(layout, "bthd")) bthd = 1, padded = 0;
  else if (!strcmp(layout, "bthd-padded")) bthd = 1, padded = 1;
  else return ac_cmd_usage_error(cmd, "unknown layout '%s' (contiguous, padded, bthd, bthd-padded)", layout);
  if (pad < 0) pad = padded ? 8 : 0;

  dist_kind dist;
  if (!strcmp(dist_name, "normal")) dist = DIST_NORMAL;
  else if (!strcmp(dist_name, "uniform")) dist = DIST_UNIFORM;
  else if (!strcmp(dist_name, "zeros")) dist = DIST_ZEROS;
  else return ac_cmd_usage_error(cmd, "unknown distribution '%s' (normal, uniform, zeros)", dist_name);
  if (dist == DIST_UNIFORM && !(lo < hi)) return ac_cmd_usage_error(cmd, "--lo must be below --hi");

  ac_case c;
  ac_err e;
  if (example) {
    if (shape_opts)
      return ac_cmd_usage_error(cmd, "--example takes only --out, --layout, --pad and --mem-cap");
    if (ac_case_example(&c, example, &e) != 0) return ac_cmd_usage_error(cmd, "%s", e.msg);
  } else {
    ac_case_init(&c);
    ac_problem *p = &c.p;
    p->dtype = dtype;
    p->mask = mask;
    p->batch = batch;
    p->heads = heads;
    p->kv_heads = kv_heads < 0 ? heads : kv_heads;
    p->tq = tq < 0 ? t : tq;
    p->tk = tk < 0 ? t : tk;
    p->dk = dk;
    p->dv = dv < 0 ? dk : dv;
    if (!strcmp(scale_s, "default")) {
      p->scale_is_default = 1;
      p->scale = ac_problem_scale(p);
    } else if (!strncasecmp(scale_s + (*scale_s == '-' || *scale_s == '+'), "0x", 2)) {
      ac_err se;
      if (ac_scale_parse_hex(scale_s, &p->scale, &se) != 0) return ac_cmd_usage_error(cmd, "%s", se.msg);
    } else if (parse_double(scale_s, &p->scale) != 0) {
      return ac_cmd_usage_error(cmd, "bad scale '%s' (default, a finite decimal or hex float)", scale_s);
    }
    if (ac_case_alloc(&c, &e) != 0) return ac_cmd_usage_error(cmd, "%s", e.msg);
    c.seed = seed;
    c.case_index = case_index;
    snprintf(c.generator, sizeof c.generator, "gen");
    ac_rng r;
    ac_rng_init(&r, seed, 0);
    double a = dist == DIST_UNIFORM ? lo : mean, b = dist == DIST_UNIFORM ? hi : sigma;
    fill(&c, &r, c.q, ac_case_bytes(&c, 'q') / ac_dtype_size(dtype), dist, a, b);
    fill(&c, &r, c.k, ac_case_bytes(&c, 'k') / ac_dtype_size(dtype), dist, a, b);
    fill(&c, &r, c.v, ac_case_bytes(&c, 'v') / ac_dtype_size(dtype), dist, a, b);
    json_object *pj = json_object_new_object();
    json_object_object_add(pj, "dist", json_object_new_string(dist_name));
    if (dist == DIST_NORMAL) {
      json_object_object_add(pj, "mean", json_object_new_double(mean));
      json_object_object_add(pj, "sigma", json_object_new_double(sigma));
    } else if (dist == DIST_UNIFORM) {
      json_object_object_add(pj, "lo", json_object_new_double(lo));
      json_object_object_add(pj, "hi", json_object_new_double(hi));
    }
    json_object_object_add(pj, "stream", json_object_new_int(0));
    json_object_object_add(pj, "order", json_object_new_string("q,k,v"));
    json_object_object_add(pj, "layout", json_object_new_string(layout));
    json_object_object_add(pj, "pad", json_object_new_int64(pad));
    c.params_json = ac_xstrdup(json_object_to_json_string_ext(pj, JSON_C_TO_STRING_PLAIN));
    json_object_put(pj);
  }

  ac_problem *p = &c.p;
  if (bthd || pad) {
    if (p->dk > INT64_MAX / 4 - pad || p->dv > INT64_MAX / 4 - pad) {
      ac_case_free(&c);
      return ac_cmd_usage_error(cmd, "--pad too large");
    }
    layout_strides(p->q_stride, bthd, pad, p->heads, p->tq, p->dk);
    layout_strides(p->k_stride, bthd, pad, p->kv_heads, p->tk, p->dk);
    layout_strides(p->v_stride, bthd, pad, p->kv_heads, p->tk, p->dv);
    layout_strides(p->o_stride, bthd, pad, p->heads, p->tq, p->dv);
  }
  int rc = AC_EXIT_OK;
  if (ac_case_write(&c, out, &e) != 0) {
    ac_cmd_error(cmd, "%s", e.msg);
    rc = AC_EXIT_USAGE;
  } else {
    printf("wrote %s: %s %s batch %lld heads %lld/%lld tq %lld tk %lld dk %lld dv %lld, hash %016llx\n", out,
           ac_dtype_name(p->dtype), ac_mask_name(p->mask), (long long)p->batch, (long long)p->heads,
           (long long)p->kv_heads, (long long)p->tq, (long long)p->tk, (long long)p->dk, (long long)p->dv,
           (unsigned long long)ac_case_hash(&c));
  }
  ac_case_free(&c);
  return rc;
}
