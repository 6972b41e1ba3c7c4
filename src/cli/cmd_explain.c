/* cmd_explain.c: attncheck explain — every stage of one row as the textbook formula defines it. */
#include "config.h"
#include <getopt.h>
#include <math.h>
#include <mpfr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "casefile.h"
#include "layout.h"
#include "commands.h"
#include "oracle.h"
#include "explain_grad.h"
#include "explain_variants.h"
#include "util.h"

#define SHOW_PREC 256
#define LIMIT 64

static void usage(FILE *f)
{
  fprintf(f,
          "usage: attncheck explain CASE --row I [--head H] [--batch B | --seq S] [--force]\n\n"
          "Prints every stage of query row I of head H in batch B: raw scores q·k_j (exact, decimal\n"
          "and hex), scaled scores, masked scores, the row maximum, the weights exp(s_j - m), their\n"
          "sum L, the softmax weights, the output row (exact to 20 digits, and the correctly rounded\n"
          "value in the case dtype as hex) and LSE. A case with attention variants shows per key the\n"
          "dot product, the scaled, capped, +ALiBi and +bias scores and why a key is hidden (mask,\n"
          "window, boolean mask), then the weights with the sink. Meant for small cases such as\n"
          "minimized findings.\n\n"
          "  --row I        query position i (required)\n"
          "  --head H       query head (default 0)\n"
          "  --batch B      batch index (default 0)\n"
          "  --seq S        sequence S of a varlen or paged case (required for them): row I of that\n"
          "                 sequence, explained as the sequence's own dense case (docs/layouts.md)\n"
          "  --force        explain even when tk, dk or dv exceed %d\n"
          "  --grad         the backward of the row instead (a case with dO, gen --grad): per visible key\n"
          "                 P_j, dP_j, dS_j and D, then dQ_i, dK_j and dV_j exact (docs/backward.md)\n"
          "  --help\n\n"
          "exit: 0 done; 2 bad usage or unreadable case; 3 a value the oracle could not decide.\n",
          LIMIT);
}

enum { O_ROW = 256, O_HEAD, O_BATCH, O_FORCE, O_SEQ, O_GRAD, O_HELP };
static const struct option lopts[] = {
  {"row", required_argument, 0, O_ROW}, {"head", required_argument, 0, O_HEAD},
  {"batch", required_argument, 0, O_BATCH}, {"force", no_argument, 0, O_FORCE},
  {"seq", required_argument, 0, O_SEQ}, {"grad", no_argument, 0, O_GRAD},
  {"help", no_argument, 0, O_HELP}, {0, 0, 0, 0},
};

/* dk = a^2 b with b squarefree */
static void squarefree(int64_t dk, int64_t *a, int64_t *b)
{
  *a = 1;
  *b = dk;
  for (int64_t f = 2; f * f <= *b; f++)
    while (*b % (f * f) == 0) { *b /= f * f; *a *= f; }
}

static int64_t gcd64(int64_t x, int64_t y)
{
  if (x < 0) x = -x;
  while (y) { int64_t t = x % y; x = y; y = t; }
  return x;
}

/* z / sqrt(dk) written with integers and one square root, for integer z; "" if z is not a small integer. */
static void symbolic(mpfr_srcptr z, int64_t dk, char *buf, size_t n)
{
  buf[0] = 0;
  if (!mpfr_integer_p(z) || mpfr_cmpabs_ui(z, 1000000000) > 0) return;
  int64_t zi = (int64_t)mpfr_get_si(z, MPFR_RNDN);
  if (zi == 0) { snprintf(buf, n, "0"); return; }
  int64_t a, b;
  squarefree(dk, &a, &b);
  const char *sg = zi < 0 ? "-" : "";
  int64_t p = zi < 0 ? -zi : zi, q = a, g = gcd64(p, q);
  p /= g; q /= g;          /* s = p / (q sqrt b) */
  if (b == 1) {
    if (q == 1) snprintf(buf, n, "%s%lld", sg, (long long)p);
    else snprintf(buf, n, "%s%lld/%lld", sg, (long long)p, (long long)q);
  } else if (p % b == 0) {  /* = (p/b) sqrt(b) / q */
    int64_t r = p / b, g2 = gcd64(r, q);
    r /= g2; q /= g2;
    char coef[32] = "";
    if (r != 1) snprintf(coef, sizeof coef, "%lld", (long long)r);
    if (q == 1) snprintf(buf, n, "%s%s√%lld", sg, coef, (long long)b);
    else snprintf(buf, n, "%s%s√%lld/%lld", sg, coef, (long long)b, (long long)q);
  } else if (q == 1) {
    snprintf(buf, n, "%s%lld/√%lld", sg, (long long)p, (long long)b);
  } else {
    snprintf(buf, n, "%s%lld/(%lld√%lld)", sg, (long long)p, (long long)q, (long long)b);
  }
}

/* The exact decimal expansion of a dyadic x (M 2^e = M 5^-e 10^e) when it has at most
 * 48 digits, else 25 significant digits followed by "...". */
static void exact_decimal(mpfr_srcptr x, char *buf, size_t n)
{
  if (!mpfr_number_p(x)) { mpfr_snprintf(buf, n, "%Rg", x); return; }
  if (mpfr_zero_p(x)) { snprintf(buf, n, "0"); return; }
  mpz_t M, f;
  mpz_inits(M, f, (mpz_ptr)0);
  mpfr_exp_t e = mpfr_get_z_2exp(M, x);
  while (mpz_even_p(M)) { mpz_fdiv_q_2exp(M, M, 1); e++; }
  int neg = mpz_sgn(M) < 0;
  mpz_abs(M, M);
  long k = 0;
  if (e >= 0) mpz_mul_2exp(M, M, (mp_bitcnt_t)e);
  else if (-e <= 200) { k = (long)-e; mpz_ui_pow_ui(f, 5, (unsigned long)k); mpz_mul(M, M, f); }
  else k = -1;
  char *d = k >= 0 ? mpz_get_str(NULL, 10, M) : NULL;
  if (!d || strlen(d) > 48) {
    mpfr_snprintf(buf, n, "%.25Rg...", x);
  } else {
    size_t L = strlen(d), K = (size_t)k;
    const char *sg = neg ? "-" : "";
    if (K == 0) {
      snprintf(buf, n, "%s%s", sg, d);
    } else if (L <= K) {   /* 0.000ddd */
      char zeros[64];
      memset(zeros, '0', K - L);
      zeros[K - L] = 0;
      snprintf(buf, n, "%s0.%s%s", sg, zeros, d);
    } else {
      snprintf(buf, n, "%s%.*s.%s", sg, (int)(L - K), d, d + L - K);
    }
  }
  free(d);
  mpz_clears(M, f, (mpz_ptr)0);
}

static void print_exact(mpfr_srcptr x)
{
  char buf[160];
  exact_decimal(x, buf, sizeof buf);
  printf("%-30s", buf);
  double d = mpfr_get_d(x, MPFR_RNDN);
  if (mpfr_cmp_d(x, d) == 0) printf(" %a", d);
  else mpfr_printf(" %Ra", x);
}

typedef struct {
  int64_t row, head, batch, seq;   /* seq -1: none */
  int force, grad;
  const char *path;
} explain_opts;

static int parse_explain_args(int argc, char **argv, explain_opts *o)
{
  const char *cmd = "explain";
  *o = (explain_opts){.row = -1, .seq = -1};
  optind = 0;
  opterr = 0;
  int ch;
  while ((ch = ac_cmd_getopt_long(argc, argv, ":h", lopts)) != -1) {
    const char *a = optarg;
    switch (ch) {
    case 'h':
    case O_HELP: usage(stdout); return AC_EXIT_OK;
    case O_ROW: if (ac_parse_i64(a, &o->row) || o->row < 0) return ac_cmd_usage_error(cmd, "bad --row '%s'", a); break;
    case O_HEAD: if (ac_parse_i64(a, &o->head) || o->head < 0) return ac_cmd_usage_error(cmd, "bad --head '%s'", a); break;
    case O_BATCH: if (ac_parse_i64(a, &o->batch) || o->batch < 0) return ac_cmd_usage_error(cmd, "bad --batch '%s'", a); break;
    case O_FORCE: o->force = 1; break;
    case O_GRAD: o->grad = 1; break;
    case O_SEQ: if (ac_parse_i64(a, &o->seq) || o->seq < 0) return ac_cmd_usage_error(cmd, "bad --seq '%s'", a); break;
    default: return ac_cmd_getopt_error(cmd, ch, argv);
    }
  }
  if (optind >= argc) return ac_cmd_usage_error(cmd, "no case file given");
  if (optind + 1 < argc) return ac_cmd_usage_error(cmd, "unexpected argument '%s'", argv[optind + 1]);
  if (o->row < 0) return ac_cmd_usage_error(cmd, "--row is required");
  o->path = argv[optind];
  return AC_CMD_RUN;
}

/* A layout case: sequence o->seq as its own dense case in place of c (layout.h); a dense case
 * takes no --seq. -1 with one line (c freed). */
static char seq_line[256];   /* printed once the row is known to exist */

static int select_sequence(const explain_opts *o, ac_case *c)
{
  const char *cmd = "explain";
  ac_err e;
  if (!c->lay && o->seq < 0) return 0;
  if (!c->lay) ac_cmd_error(cmd, "%s: --seq needs a varlen or paged case", o->path);
  else if (o->seq < 0) ac_cmd_error(cmd, "%s: a %s case needs --seq S (0 to %lld)", o->path,
                                     c->p.f.used & AC_FEAT_PAGED ? "paged" : "varlen", (long long)c->p.l.nseq - 1);
  else if (o->seq >= c->p.l.nseq) ac_cmd_error(cmd, "%s: sequence %lld outside the case (%lld sequences)", o->path,
                                              (long long)o->seq, (long long)c->p.l.nseq);
  else if (o->batch) ac_cmd_error(cmd, "%s: --batch does not go with --seq", o->path);
  else {
    ac_case sub;
    if (ac_layout_seq_case(c, o->seq, &sub, &e) == 0) {
      snprintf(seq_line, sizeof seq_line, "sequence %lld of %lld: %lld queries (packed tokens from %d), %lld keys%s\n", (long long)o->seq,
             (long long)c->p.l.nseq, (long long)ac_layout_tq(c, o->seq), (int)c->lay->cu_q[o->seq],
             (long long)ac_layout_tk(c, o->seq),
             ac_layout_tk(c, o->seq) ? "" : " (one zero key, hidden by a boolean mask of zeros)");
      ac_case_free(c);
      *c = sub;
      return 0;
    }
    ac_cmd_error(cmd, "%s: %s", o->path, e.msg);
  }
  ac_case_free(c);
  return -1;
}

/* The case, refused (one line, AC_EXIT_USAGE) when it cannot be read, the row is outside it, it
 * is too large to print usefully (without --force) or its scale is not finite. */
static int load_case(const explain_opts *o, ac_case *c)
{
  const char *cmd = "explain", *path = o->path;
  ac_err e;
  if (ac_case_read(c, path, &e)) {
    ac_cmd_error(cmd, "%s", e.msg);
    return AC_EXIT_USAGE;
  }
  if (select_sequence(o, c) != 0) return AC_EXIT_USAGE;
  const ac_problem *p = &c->p;
  if (o->row >= p->tq || o->head >= p->heads || o->batch >= p->batch)
    ac_cmd_error(cmd, "%s: row %lld, head %lld, batch %lld outside the case (tq %lld, heads %lld, batch %lld)", path,
                 (long long)o->row, (long long)o->head, (long long)o->batch, (long long)p->tq, (long long)p->heads,
                 (long long)p->batch);
  else if (!o->force && (p->tk > LIMIT || p->dk > LIMIT || p->dv > LIMIT))
    ac_cmd_error(cmd, "%s: tk %lld, dk %lld, dv %lld: too large to print usefully (limit %d); minimize the case "
                      "first or pass --force",
                 path, (long long)p->tk, (long long)p->dk, (long long)p->dv, LIMIT);
  else if (!p->scale_is_default && !isfinite(p->scale))
    ac_cmd_error(cmd, "%s: the scale %a is not finite", path, p->scale);
  else
    return AC_CMD_RUN;
  ac_case_free(c);
  return AC_EXIT_USAGE;
}

/* One row's stages: the scale, the exact raw scores z_j, the scaled scores s_j (later the
 * weights) and their symbolic forms. */
typedef struct {
  const explain_opts *o;
  const ac_case *c;
  const ac_problem *p;
  int64_t kvh, n, tk, grow;
  int def;
  mpfr_t sc, x, m, L, tmp;
  mpfr_t *z, *s;
  char (*sym)[96];
} row_state;

static void row_init(row_state *st, const explain_opts *o, const ac_case *c)
{
  const ac_problem *p = &c->p;
  *st = (row_state){.o = o, .c = c, .p = p, .kvh = ac_kv_head(p, o->head), .n = ac_visible_count(p, o->row),
                    .tk = p->tk, .grow = (int64_t)ac_rowidx(p, o->batch, o->head, o->row),
                    .def = p->scale_is_default};
  mpfr_inits2(SHOW_PREC, st->sc, st->x, st->m, st->L, st->tmp, (mpfr_ptr)0);
  if (st->def) {
    mpfr_set_si(st->sc, (long)p->dk, MPFR_RNDN);
    mpfr_rec_sqrt(st->sc, st->sc, MPFR_RNDN);
  } else {
    mpfr_set_d(st->sc, p->scale, MPFR_RNDN);
  }
  st->z = ac_xmalloc((size_t)st->tk * sizeof *st->z);
  st->s = ac_xmalloc((size_t)st->tk * sizeof *st->s);
  st->sym = ac_xcalloc((size_t)st->tk, sizeof *st->sym);
  for (int64_t j = 0; j < st->tk; j++) {
    mpfr_init2(st->z[j], 4400);   /* holds any fp64 dot product of up to 2^200 terms exactly */
    mpfr_init2(st->s[j], SHOW_PREC);
  }
}

static void row_free(row_state *st)
{
  for (int64_t j = 0; j < st->tk; j++) { mpfr_clear(st->z[j]); mpfr_clear(st->s[j]); }
  free(st->z); free(st->s); free(st->sym);
  mpfr_clears(st->sc, st->x, st->m, st->L, st->tmp, (mpfr_ptr)0);
}

/* The case, the scale, the row and q_i. */
static void print_header(row_state *st)
{
  const ac_problem *p = st->p;
  const explain_opts *o = st->o;
  const ac_case *c = st->c;
  printf("case %s (%s): %s, mask %s, batch %lld, heads %lld (kv heads %lld), tq %lld, tk %lld, dk %lld, dv %lld\n",
         o->path, c->generator, ac_dtype_name(p->dtype), ac_mask_name(p->mask), (long long)p->batch,
         (long long)p->heads, (long long)p->kv_heads, (long long)p->tq, (long long)p->tk, (long long)p->dk,
         (long long)p->dv);
  if (st->def) {
    mpfr_set_ui(st->tmp, 1, MPFR_RNDN);
    char sym[96];
    symbolic(st->tmp, p->dk, sym, sizeof sym);
    char root[64];
    snprintf(root, sizeof root, "1/√%lld", (long long)p->dk);
    if (strcmp(root, sym)) mpfr_printf("scale c = %s = %s = %.20Rg (default)\n", root, sym, st->sc);
    else mpfr_printf("scale c = %s = %.20Rg (default)\n", root, st->sc);
  } else {
    mpfr_printf("scale c = %.20Rg = %Ra (stored)\n", st->sc, st->sc);
  }
  printf("row: batch %lld, head %lld (kv head %lld), query i = %lld: %lld of %lld keys visible\n\n",
         (long long)o->batch, (long long)o->head, (long long)st->kvh, (long long)o->row, (long long)st->n,
         (long long)st->tk);
  printf("q_%lld = [", (long long)o->row);
  for (int64_t t = 0; t < p->dk; t++)
    printf("%s%.17g", t ? ", " : "", ac_load(ac_tensor_dtype(p, 'q'), c->q, ac_qidx(p, o->batch, o->head, o->row, t)));
  printf("]\n\n");
}

/* z_j exactly, s_j = c z_j and, with the default scale, s_j in symbols. */
static void compute_scores(row_state *st)
{
  const ac_problem *p = st->p;
  const explain_opts *o = st->o;
  for (int64_t j = 0; j < st->tk; j++) {
    mpfr_set_zero(st->z[j], 1);
    for (int64_t t = 0; t < p->dk; t++) {
      mpfr_set_d(st->tmp, ac_load(ac_tensor_dtype(p, 'q'), st->c->q, ac_qidx(p, o->batch, o->head, o->row, t)),
                 MPFR_RNDN);
      mpfr_mul_d(st->tmp, st->tmp, ac_load(ac_tensor_dtype(p, 'k'), st->c->k, ac_kidx(p, o->batch, st->kvh, j, t)),
                 MPFR_RNDN);
      mpfr_add(st->z[j], st->z[j], st->tmp, MPFR_RNDN);
    }
    mpfr_mul(st->s[j], st->z[j], st->sc, MPFR_RNDN);
    if (st->def) symbolic(st->z[j], p->dk, st->sym[j], sizeof st->sym[j]);
  }
}

/* Stages 1 to 3: raw, scaled and masked scores. */
static void print_scores(const row_state *st)
{
  const ac_problem *p = st->p;
  int64_t tk = st->tk;
  printf("1. raw scores z_j = q·k_j (exact)\n");
  for (int64_t j = 0; j < tk; j++) {
    printf("   j=%-4lld ", (long long)j);
    print_exact(st->z[j]);
    printf("\n");
  }
  printf("   raw: [");
  for (int64_t j = 0; j < tk; j++) {
    if (mpfr_integer_p(st->z[j]) && mpfr_cmpabs_ui(st->z[j], 1000000000) <= 0)
      mpfr_printf("%s%.0Rf", j ? ", " : "", st->z[j]);
    else mpfr_printf("%s%.10Rg", j ? ", " : "", st->z[j]);
  }
  printf("]\n\n2. scaled scores s_j = c·z_j\n");
  for (int64_t j = 0; j < tk; j++) {
    printf("   j=%-4lld ", (long long)j);
    if (st->sym[j][0]) printf("%-12s = ", st->sym[j]);
    mpfr_printf("%.20Rg\n", st->s[j]);
  }
  printf("   scaled: [");
  for (int64_t j = 0; j < tk; j++) {
    if (st->sym[j][0]) printf("%s%s", j ? ", " : "", st->sym[j]);
    else mpfr_printf("%s%.10Rg", j ? ", " : "", st->s[j]);
  }
  printf("]\n\n3. masked scores (mask %s: key j visible iff %s)\n", ac_mask_name(p->mask),
         p->mask == AC_MASK_NONE ? "always" : p->mask == AC_MASK_CAUSAL ? "j <= i" : "j <= i + tk - tq");
  for (int64_t j = 0; j < tk; j++) {
    if (j < st->n) mpfr_printf("   j=%-4lld %.20Rg\n", (long long)j, st->s[j]);
    else printf("   j=%-4lld -inf (masked)\n", (long long)j);
  }
}

/* Stages 4 to 6: the row maximum m, the weights w_j (into s_j), their sum L and the softmax. */
static void print_weights(row_state *st)
{
  int64_t n = st->n, jm = 0;
  for (int64_t j = 1; j < n; j++)
    if (mpfr_cmp(st->z[j], st->z[jm]) * (mpfr_sgn(st->sc) >= 0 ? 1 : -1) > 0) jm = j;
  mpfr_set(st->m, st->s[jm], MPFR_RNDN);
  printf("\n4. row maximum m = max_j s_j = ");
  if (st->sym[jm][0]) printf("%s = ", st->sym[jm]);
  mpfr_printf("%.20Rg (key %lld)\n", st->m, (long long)jm);
  printf("\n5. weights w_j = exp(s_j - m)\n");
  mpfr_set_zero(st->L, 1);
  for (int64_t j = 0; j < n; j++) {
    mpfr_sub(st->s[j], st->s[j], st->m, MPFR_RNDN);
    mpfr_exp(st->s[j], st->s[j], MPFR_RNDN);
    mpfr_add(st->L, st->L, st->s[j], MPFR_RNDN);
    mpfr_printf("   j=%-4lld %.20Rg\n", (long long)j, st->s[j]);
  }
  mpfr_printf("   L = Σ_j w_j = %.20Rg\n\n6. softmax weights A_j = w_j / L\n", st->L);
  mpfr_set_zero(st->x, 1);
  for (int64_t j = 0; j < n; j++) {
    mpfr_div(st->tmp, st->s[j], st->L, MPFR_RNDN);
    mpfr_add(st->x, st->x, st->tmp, MPFR_RNDN);
    mpfr_printf("   j=%-4lld %.20Rg\n", (long long)j, st->tmp);
  }
  mpfr_printf("   Σ_j A_j = %.20Rg\n\n7. output o_t = Σ_j A_j V_jt\n", st->x);
}

/* Stages 7 and 8: the output row beside the oracle's rounded values, and the LSE.
 * AC_EXIT_INTERNAL when the oracle left a value undecided. */
static int print_outputs(row_state *st, const ac_oracle_result *r)
{
  const ac_problem *p = st->p;
  const explain_opts *o = st->o;
  int rc = AC_EXIT_OK;
  printf("   %-5s %-28s %-26s %-26s %s\n", "t", "exact (20 digits)", ac_dtype_name(p->dtype), "binary64", "decided");
  for (int64_t t = 0; t < p->dv; t++) {
    mpfr_set_zero(st->x, 1);
    for (int64_t j = 0; j < st->n; j++) {
      mpfr_mul_d(st->tmp, st->s[j], ac_load(ac_tensor_dtype(p, 'v'), st->c->v, ac_vidx(p, o->batch, st->kvh, j, t)),
                 MPFR_RNDN);
      mpfr_add(st->x, st->x, st->tmp, MPFR_RNDN);
    }
    mpfr_div(st->x, st->x, st->L, MPFR_RNDN);
    int64_t ex = ac_oracle_slot(r, st->grow) * p->dv + t;
    const ac_oracle_elem *el = &r->elems[ex];
    uint64_t bd = r->o_round[p->dtype][ex], b64 = r->o_round[AC_F64][ex];
    char hx[32], h64[32], col[40];
    snprintf(col, sizeof col, "%.9g (%s)", ac_decode(p->dtype, bd), ac_bits_hex(p->dtype, bd, hx, sizeof hx));
    snprintf(h64, sizeof h64, "%a", ac_decode(AC_F64, b64));
    const char *how = el->accept != AC_ACCEPT_VALUE ? "non-finite input"
                      : el->how == AC_HOW_EXACT     ? "exact case"
                      : el->how == AC_HOW_ROUNDED   ? "Ziv"
                                                    : "UNRESOLVED";
    if (el->how == AC_HOW_UNRESOLVED) rc = AC_EXIT_INTERNAL;
    mpfr_printf("   %-5lld %-28.20Rg %-26s %-26s %s\n", (long long)t, st->x, col, h64, how);
  }
  const ac_oracle_row *orow = &r->rows[st->grow];
  mpfr_log(st->tmp, st->L, MPFR_RNDN);
  mpfr_add(st->tmp, st->tmp, st->m, MPFR_RNDN);
  uint32_t lb;
  float lf = orow->lse_f32;
  memcpy(&lb, &lf, 4);
  mpfr_printf("\n8. LSE = m + ln L = %.20Rg; binary32 %a (0x%08x), binary64 %a\n", st->tmp, (double)lf, lb,
              orow->lse_f64);
  if (orow->lse_how == AC_HOW_UNRESOLVED) rc = AC_EXIT_INTERNAL;
  return rc;
}

/* Every stage of the row, in the widest exponent range. */
static int explain_row(const explain_opts *o, const ac_case *c, const ac_oracle_result *r)
{
  mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
  mpfr_set_emin(mpfr_get_emin_min());
  mpfr_set_emax(mpfr_get_emax_max());
  if (c->p.f.used) {   /* attention variants: every stage per key (explain_variants.c) */
    int vrc = ac_explain_variants(c, o->batch, o->head, o->row, r);
    mpfr_set_emin(emin);
    mpfr_set_emax(emax);
    mpfr_free_cache();
    return vrc ? AC_EXIT_INTERNAL : AC_EXIT_OK;
  }
  row_state st;
  row_init(&st, o, c);
  print_header(&st);
  compute_scores(&st);
  print_scores(&st);
  int rc = AC_EXIT_OK;
  if (st.n == 0) {
    printf("\nno visible key: the output row is 0 and LSE = -inf (empty-row convention)\n");
  } else {
    print_weights(&st);
    rc = print_outputs(&st, r);
  }
  row_free(&st);
  mpfr_set_emin(emin);
  mpfr_set_emax(emax);
  mpfr_free_cache();
  return rc;
}

int ac_cmd_explain(int argc, char **argv)
{
  explain_opts o;
  int rc = parse_explain_args(argc, argv, &o);
  if (rc != AC_CMD_RUN) return rc;
  ac_case c;
  if ((rc = load_case(&o, &c)) != AC_CMD_RUN) return rc;
  fputs(seq_line, stdout);
  if (o.grad) {
    rc = ac_explain_grad(&c, o.path, o.batch, o.head, o.row);
    ac_case_free(&c);
    return rc;
  }
  /* The oracle for this row: correctly rounded outputs and LSE. */
  ac_oracle_opts oo;
  ac_oracle_opts_init(&oo);
  char spec[64];
  snprintf(spec, sizeof spec, "%lld", (long long)ac_rowidx(&c.p, o.batch, o.head, o.row));
  oo.rows = spec;
  oo.threads = 1;
  oo.formats = 1u << AC_F64;
  oo.lse_f64 = 1;
  ac_oracle_result r;
  ac_err e;
  if (ac_oracle_run(&c, &oo, &r, &e)) {
    ac_cmd_error("explain", "%s: %s", o.path, e.msg);
    ac_case_free(&c);
    return AC_EXIT_USAGE;
  }
  rc = explain_row(&o, &c, &r);
  ac_oracle_result_free(&r);
  ac_case_free(&c);
  return rc;
}
