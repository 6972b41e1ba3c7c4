/* cmd_info.c: attncheck info — a case's shape, provenance and value statistics. */
#include "config.h"
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include "casefile.h"
#include "layout.h"
#include "quant.h"
#include "variants.h"
#include "commands.h"
#include "util.h"

static void usage(FILE *f)
{
  fprintf(f,
          "usage: attncheck info [--mem-cap SIZE] CASE...\n\n"
          "Prints each case's shape, dtype, mask, scale (decimal and hex), seed, generator and its\n"
          "parameters, strides, and per tensor min, max, mean (over finite values) and the counts of\n"
          "zeros, subnormals, NaN and infinities; says whether kernel outputs o and lse are stored.\n\n"
          "  --mem-cap SIZE  refuse cases larger than SIZE bytes (default 8G)\n"
          "  --help\n\n"
          "exit: 0 all cases read; 2 bad usage or a case could not be read (one line naming the file).\n");
}

typedef struct {
  int64_t n, zeros, sub, nan, inf, finite;
  double min, max;
  long double sum;
} stats;

static void tally(stats *s, ac_dtype t, const void *data, int64_t n)
{
  memset(s, 0, sizeof *s);
  s->n = n;
  s->min = INFINITY;
  s->max = -INFINITY;
  for (int64_t i = 0; i < n; i++) {
    uint64_t b = ac_load_bits(t, data, (size_t)i);
    if (ac_bits_isnan(t, b)) {
      s->nan++;
      continue;
    }
    if (ac_bits_isinf(t, b)) {
      s->inf++;
      continue;
    }
    double x = ac_decode(t, b);
    if (ac_bits_iszero(t, b)) s->zeros++;
    else if (ac_bits_issubnormal(t, b)) s->sub++;
    s->finite++;
    s->sum += x;
    if (x < s->min) s->min = x;
    if (x > s->max) s->max = x;
  }
}

static void print_stats(const char *name, const char *shape, const stats *s)
{
  if (s->finite)
    printf("  %-4s %-22s %13.6g %13.6g %13.6g", name, shape, s->min, s->max, (double)(s->sum / s->finite));
  else
    printf("  %-4s %-22s %13s %13s %13s", name, shape, "-", "-", "-");
  printf(" %9lld %9lld %7lld %7lld\n", (long long)s->zeros, (long long)s->sub, (long long)s->nan, (long long)s->inf);
}

static void print_strides(const char *name, const int64_t st[4])
{
  printf(" %s [%lld, %lld, %lld, %lld]", name, (long long)st[0], (long long)st[1], (long long)st[2], (long long)st[3]);
}

/* The variants line and a stats row per variant tensor (nothing for a plain case). */
static void show_variants(const ac_case *c)
{
  const ac_problem *p = &c->p;
  const ac_features *f = &p->f;
  if (!(f->used & (AC_FEAT_ALL | AC_FEAT_DROPOUT))) return;   /* the layout has lines of its own */
  char names[160];
  printf("  variants   %s", ac_feat_list(f->used & (AC_FEAT_ALL | AC_FEAT_DROPOUT), names, sizeof names));
  if (f->used & AC_FEAT_WINDOW)
    printf("; window (%lld, %lld) %s", (long long)f->win_left, (long long)f->win_right, f->win_top_left ? "top-left" : "bottom-right");
  if (f->used & AC_FEAT_SOFTCAP) printf("; softcap %.17g (%a)", f->softcap, f->softcap);
  if (f->used & AC_FEAT_ALIBI) printf("; slopes per %s", f->alibi_per_batch ? "batch and head" : "head");
  if (f->used & AC_FEAT_BIAS) printf("; bias %s", ac_dtype_name(f->bias_dtype));
  if ((f->used & AC_FEAT_DROPOUT) && c->dropout_mask) {   /* the kept fraction where the mask matters */
    int64_t vis = 0, kept = 0;
    for (int64_t b = 0; b < p->batch; b++)
      for (int64_t h = 0; h < p->heads; h++)
        for (int64_t i = 0; i < p->tq; i++)
          for (int64_t j = 0; j < p->tk; j++) {
            if (!ac_features_visible(c, b, h, i, j)) continue;
            vis++;
            kept += c->dropout_mask[((b * p->heads + h) * p->tq + i) * p->tk + j];
          }
    printf("; dropout p %.9g (%a), seed %llu, kept %lld of %lld visible", f->dropout_p, f->dropout_p,
           (unsigned long long)f->dropout_seed, (long long)kept, (long long)vis);
  }
  printf("\n");
}

/* The layout lines: kind, sequences and their lengths (the first 16), pages (layout.h). */
static void show_layout(const ac_case *c)
{
  const ac_problem *p = &c->p;
  if (!c->lay) return;
  int paged = (p->f.used & AC_FEAT_PAGED) != 0;
  printf("  layout     %s, %lld sequences, %lld query tokens, %s %lld, longest tq %lld tk %lld\n",
         paged ? "paged" : "varlen", (long long)p->l.nseq, (long long)p->tq, paged ? "slots" : "keys", (long long)p->tk,
         (long long)p->l.max_tq, (long long)p->l.max_tk);
  if (paged)
    printf("  pages      %lld of %lld slots, block table %lld x %lld\n", (long long)p->l.num_pages,
           (long long)p->l.page_size, (long long)p->l.nseq, (long long)p->l.max_pages);
  printf("  seqlens   ");
  for (int64_t b = 0; b < p->l.nseq && b < 16; b++)
    printf(" %lld:%lld", (long long)ac_layout_tq(c, b), (long long)ac_layout_tk(c, b));
  printf("%s (tq:tk)\n", p->l.nseq > 16 ? " ..." : "");
}

static void variant_stats(const ac_case *c)
{
  const ac_problem *p = &c->p;
  for (int t = 0; t < AC_FT_N; t++) {
    int64_t shape[4];
    size_t es;
    int nd = ac_feat_tensor_shape(p, (ac_feat_tensor)t, shape, &es);
    if (!nd) continue;
    char sh[96];   /* name and shape in the shape column: the names are longer than q, k, v */
    size_t k = (size_t)snprintf(sh, sizeof sh, "%s ", ac_feat_tensor_name((ac_feat_tensor)t));
    for (int i = 0; i < nd; i++) k += (size_t)snprintf(sh + k, sizeof sh - k, "%s%lld", i ? "," : "[", (long long)shape[i]);
    snprintf(sh + k, sizeof sh - k, "]");
    int64_t n = ac_feat_tensor_count(p, (ac_feat_tensor)t);
    stats s;
    if (t == AC_FT_BOOL_MASK || t == AC_FT_DROPOUT_MASK) {   /* shown as 0/1 values */
      const uint8_t *bytes = *ac_feat_tensor_slot((ac_case *)c, (ac_feat_tensor)t);
      float *tmp = ac_xmalloc((size_t)n * sizeof *tmp);
      for (int64_t i = 0; i < n; i++) tmp[i] = bytes[i];
      tally(&s, AC_F32, tmp, n);
      free(tmp);
    } else {
      tally(&s, t == AC_FT_BIAS ? p->f.bias_dtype : AC_F32, *ac_feat_tensor_slot((ac_case *)c, (ac_feat_tensor)t), n);
    }
    print_stats("", sh, &s);
  }
}

/* The quantized tensors: a line naming each format, then a stats row per array of codes and
 * scales (the q, k, v rows above show the exact values they decode to). */
static void show_quant_line(const ac_case *c)
{
  const ac_problem *p = &c->p;
  if (!ac_problem_quantized(p)) return;
  printf("  quant     ");
  for (int i = 0; i < 3; i++) {
    const ac_qfmt_info *f = ac_qfmt_get(p->quant[i].fmt);
    if (!f) continue;
    const ac_qspec *q = &p->quant[i];
    char sp[128];
    int64_t g = ac_qspec_tgroup(q);
    printf(" %c %s (%s%s, %s scales", "qkv"[i], ac_qspec_str(q, sp, sizeof sp), f->kind,
           q->gran == AC_QG_BLOCK && f->block ? " blocks" : "", ac_qsdtype_name(ac_qspec_sdtype(q)));
    if (q->gran == AC_QG_BLOCK) printf(" per %lld%s", (long long)q->block, f->block ? "" : " along d");
    else printf(" per %s", ac_qgran_name(q->gran));
    if (g > 1) printf(" over %lld tokens", (long long)g);
    if (f->aux == AC_QAUX_ZERO) printf(", %s zero points", ac_qsdtype_name(ac_qspec_zdtype(q)));
    printf("%s%s%s);", f->aux == AC_QAUX_MIN ? ", f16 mins" : f->aux == AC_QAUX_TSCALE ? ", an f32 tensor scale" : "",
           q->pack ? q->pack == AC_QPACK_LOW_FIRST ? ", codes packed low bits first" : ", codes packed high bits first" : "",
           q->store ? ", stored by the kernel from the plain values" : "");
  }
  int rounded = p->quant[0].rounded || p->quant[1].rounded || p->quant[2].rounded;
  printf(" values %s\n", rounded ? "in binary64, some rounded there (float zero points: docs/quantized.md)" : "exact, in binary64");
}

static void quant_row(const char *name, const int64_t *shape, int nd, const double *v, int64_t n)
{
  char sh[96];
  size_t k = (size_t)snprintf(sh, sizeof sh, "%s ", name);
  for (int i = 0; i < nd; i++) k += (size_t)snprintf(sh + k, sizeof sh - k, "%s%lld", i ? "," : "[", (long long)shape[i]);
  snprintf(sh + k, sizeof sh - k, "]");
  stats s;
  tally(&s, AC_F64, v, n);
  print_stats("", sh, &s);
}

static void quant_stats(const ac_case *c)
{
  const ac_problem *p = &c->p;
  for (int i = 0; i < 3 && c->quant; i++) {
    const ac_qfmt_info *f = ac_qfmt_get(p->quant[i].fmt);
    if (!f) continue;
    char x = "qkv"[i];
    const ac_qdata *t = &c->quant->t[i];
    int64_t d[4], sh[4];
    int nd;
    ac_qdims(p, x, d);
    int64_t n = d[0] * d[1] * d[2] * d[3], ns = ac_qscale_count(&p->quant[i], d);
    double *v = ac_xmalloc((size_t)(n > ns ? n : ns) * sizeof *v + 8);
    for (int64_t e = 0; e < n; e++) v[e] = f->code_signed ? (double)(int8_t)t->codes[e] : (double)t->codes[e];
    char name[24];
    snprintf(name, sizeof name, "%c_codes", x);
    quant_row(name, d, 4, v, n);
    ac_qscale_shape(&p->quant[i], d, sh, &nd);
    const ac_qsdtype sd = ac_qspec_sdtype(&p->quant[i]), zd = ac_qspec_zdtype(&p->quant[i]);
    for (int64_t e = 0; e < ns; e++) v[e] = ac_qscale_value(sd, ac_qsd_load(sd, t->scales, (size_t)e));
    snprintf(name, sizeof name, "%c_scales", x);
    quant_row(name, sh, nd, v, ns);
    if (f->aux == AC_QAUX_MIN || f->aux == AC_QAUX_ZERO) {
      for (int64_t e = 0; e < ns; e++) v[e] = ac_qscale_value(zd, ac_qsd_load(zd, t->aux, (size_t)e));
      snprintf(name, sizeof name, "%c_%s", x, f->aux == AC_QAUX_MIN ? "mins" : "zeros");
      quant_row(name, sh, nd, v, ns);
    } else if (f->aux == AC_QAUX_TSCALE) {
      const int64_t one = 1;
      v[0] = ac_decode(AC_F32, ac_load_bits(AC_F32, t->aux, 0));
      snprintf(name, sizeof name, "%c_tensor_scale", x);
      quant_row(name, &one, 1, v, 1);
    }
    free(v);
  }
}

static void show(const char *path, const ac_case *c)
{
  const ac_problem *p = &c->p;
  ac_problem q = *p;
  int zero = 1;
  for (int i = 0; i < 4; i++)
    zero &= !q.q_stride[i] && !q.k_stride[i] && !q.v_stride[i] && !q.o_stride[i];
  if (zero) ac_problem_default_strides(&q);
  double sc = ac_problem_scale(p);
  printf("%s\n", path);
  printf("  shape      batch %lld, heads %lld, kv_heads %lld, tq %lld, tk %lld, dk %lld, dv %lld\n",
         (long long)p->batch, (long long)p->heads, (long long)p->kv_heads, (long long)p->tq, (long long)p->tk,
         (long long)p->dk, (long long)p->dv);
  if (p->f.used & AC_FEAT_MIXED_DTYPES)
    printf("  dtype      %s (compute); q %s, k %s, v %s, o %s\n", ac_dtype_name(p->dtype), ac_dtype_name(p->f.qd),
           ac_dtype_name(p->f.kd), ac_dtype_name(p->f.vd), ac_dtype_name(p->f.od));
  else
    printf("  dtype      %s\n", ac_dtype_name(p->dtype));
  printf("  mask       %s\n", ac_mask_name(p->mask));
  printf("  scale      %s%.17g (%a)\n", p->scale_is_default ? "default 1/sqrt(dk) = " : "", sc, sc);
  printf("  seed       %llu, case index %lld\n", (unsigned long long)c->seed, (long long)c->case_index);
  printf("  generator  %s %s\n", c->generator, c->params_json ? c->params_json : "{}");
  printf("  tool       %s\n", c->tool_version[0] ? c->tool_version : "(unknown)");
  show_variants(c);
  show_layout(c);
  show_quant_line(c);
  printf("  strides   ");
  print_strides("q", q.q_stride);
  print_strides("k", q.k_stride);
  print_strides("v", q.v_stride);
  print_strides("o", q.o_stride);
  printf("\n  hash       %016llx\n", (unsigned long long)ac_case_hash(c));
  printf("  %-4s %-22s %13s %13s %13s %9s %9s %7s %7s\n", "", "shape", "min", "max", "mean", "zeros", "subnormal",
         "nan", "inf");
#define ES(x) ac_dtype_size(ac_tensor_dtype(p, x))
  char sh[96];
  stats s;
  snprintf(sh, sizeof sh, "[%lld,%lld,%lld,%lld]", (long long)p->batch, (long long)p->heads, (long long)p->tq,
           (long long)p->dk);
  tally(&s, ac_tensor_dtype(p, 'q'), c->q, (int64_t)(ac_case_bytes(c, 'q') / ES('q')));
  print_stats("q", sh, &s);
  snprintf(sh, sizeof sh, "[%lld,%lld,%lld,%lld]", (long long)p->batch, (long long)p->kv_heads, (long long)p->tk,
           (long long)p->dk);
  tally(&s, ac_tensor_dtype(p, 'k'), c->k, (int64_t)(ac_case_bytes(c, 'k') / ES('k')));
  print_stats("k", sh, &s);
  snprintf(sh, sizeof sh, "[%lld,%lld,%lld,%lld]", (long long)p->batch, (long long)p->kv_heads, (long long)p->tk,
           (long long)p->dv);
  tally(&s, ac_tensor_dtype(p, 'v'), c->v, (int64_t)(ac_case_bytes(c, 'v') / ES('v')));
  print_stats("v", sh, &s);
  if (c->has_o) {
    snprintf(sh, sizeof sh, "[%lld,%lld,%lld,%lld]", (long long)p->batch, (long long)p->heads, (long long)p->tq,
             (long long)p->dv);
    tally(&s, ac_tensor_dtype(p, 'o'), c->o, (int64_t)(ac_case_bytes(c, 'o') / ES('o')));
    print_stats("o", sh, &s);
  } else {
    printf("  o    absent\n");
  }
  if (c->dout) {   /* dO for the backward (docs/backward.md): shown only when the case has one */
    snprintf(sh, sizeof sh, "[%lld,%lld,%lld,%lld]", (long long)p->batch, (long long)p->heads, (long long)p->tq,
             (long long)p->dv);
    tally(&s, ac_tensor_dtype(p, 'o'), c->dout, (int64_t)(ac_case_bytes(c, 'o') / ES('o')));
    print_stats("do", sh, &s);
  }
#undef ES
  if (c->has_lse) {
    snprintf(sh, sizeof sh, "[%lld,%lld,%lld]", (long long)p->batch, (long long)p->heads, (long long)p->tq);
    tally(&s, AC_F32, c->lse, p->batch * p->heads * p->tq);
    print_stats("lse", sh, &s);
  } else {
    printf("  lse  absent\n");
  }
  variant_stats(c);
  quant_stats(c);
}

int ac_cmd_info(int argc, char **argv)
{
  const char *cmd = "info";
  static const struct option opts[] = {
    {"mem-cap", required_argument, 0, 'm'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
  optind = 0;
  opterr = 0;
  int ch;
  while ((ch = ac_cmd_getopt_long(argc, argv, ":h", opts)) != -1) {
    switch (ch) {
    case 'h': usage(stdout); return AC_EXIT_OK;
    case 'm': {
      uint64_t cap;
      if (ac_parse_size(optarg, &cap) != 0 || cap == 0)
        return ac_cmd_usage_error(cmd, "bad value '%s' for --mem-cap", optarg);
      ac_set_mem_cap(cap);
      break;
    }
    default: return ac_cmd_getopt_error(cmd, ch, argv);
    }
  }
  if (optind >= argc) return ac_cmd_usage_error(cmd, "no case file given");
  int rc = AC_EXIT_OK;
  for (int i = optind; i < argc; i++) {
    ac_case c;
    ac_err e;
    if (ac_case_read(&c, argv[i], &e) != 0) {
      ac_cmd_error(cmd, "%s", e.msg);
      rc = AC_EXIT_USAGE;
      continue;
    }
    if (i > optind) printf("\n");
    show(argv[i], &c);
    ac_case_free(&c);
  }
  fflush(stdout);
  return rc;
}
