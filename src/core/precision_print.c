/* precision_print.c: `attncheck list --precision` (the stage roundoffs of the presets, their
 * parts, the part names) and `attncheck list --precision CLASS` (a class's canonical string and
 * the budget terms its parts imply, docs/numerics.md §7). */
#include "config.h"
#include "precision.h"
#include <math.h>
#include <string.h>

/* "2^-24", "1.5*2^-24", "4*2^-53", "-" for 0 into buf. */
static const char *pow2s(double u, char *buf, size_t n)
{
  if (u == 0) return snprintf(buf, n, "-"), buf;
  int e;
  double m = frexp(u, &e); /* u = m 2^e, m in [0.5, 1) */
  m *= 2, e -= 1;
  if (m == 1)
    snprintf(buf, n, "2^%d", e);
  else if (m == 1.5)
    snprintf(buf, n, "1.5*2^%d", e - 0);
  else {
    int k = 0;
    while (m != floor(m) && k < 8) m *= 2, e--, k++;
    snprintf(buf, n, "%g*2^%d", m, e);
  }
  return buf;
}

/* u_e as "4*2^-24": the exp's ulps times the softmax format's u */
static const char *eu_s(const ac_precision *c, char *buf, size_t n)
{
  char u[24];
  int eu = c->parts.v[AC_PART_EU];
  snprintf(buf, n, "%d*%s", eu, pow2s(c->u_e / eu, u, sizeof u));
  return buf;
}

static void put_u(FILE *f, double u, int trunc)
{
  char b[32];
  if (u == 0) {
    fprintf(f, " %-8s", "-");
    return;
  }
  pow2s(u, b, sizeof b);
  fprintf(f, " %s%-*s", b, (int)(8 - strlen(b)), trunc ? "t" : "");
}

void ac_precision_print(FILE *f)
{
  fprintf(f, "precision classes (u = unit roundoff as 2^k; t = truncating accumulation, 2u per step;\n"
             "n_r = online rescales; mu = smallest P kept; range = working range for OUT-OF-DOMAIN;\n"
             "scaled Q,K = format Q and K may be rounded to after scaling, before Q.K^T; - = u_qk)\n\n");
  fprintf(f, "%-12s %-8s %-8s %-9s %-8s %-8s %-8s %-8s %-9s %-8s %-7s %-6s %s\n", "class", " u_qk", " u_S", " u_s",
          " u_e", " u_p", " u_a", " u_l", "T_acc", "n_r", "mu", "range", "scaled Q,K");
  size_t n;
  const ac_precision *t = ac_precision_table(&n);
  char b[32];
  for (size_t i = 0; i < n; i++) {
    const ac_precision *c = &t[i];
    fprintf(f, "%-12s", c->name);
    put_u(f, c->u_qk, c->qk_trunc);
    put_u(f, c->u_S, 0);
    fprintf(f, " %-9s", pow2s(c->u_s, b, sizeof b));
    fprintf(f, " %-8s", eu_s(c, b, sizeof b));
    put_u(f, c->u_p, 0);
    put_u(f, c->u_a, c->acc_trunc);
    put_u(f, c->u_l, c->l_trunc);
    if (c->acc_block > 0)
      fprintf(f, " blk%-5lld", (long long)c->acc_block);
    else
      fprintf(f, " %-8s", "T");
    if (c->nr_tile == 1)
      fprintf(f, "  %-8s", "T");
    else if (c->nr_tile > 1)
      fprintf(f, "  T/%-6lld", (long long)c->nr_tile);
    else
      fprintf(f, "  %-8s", "0");
    fprintf(f, " 2^%-5d %-6s %s\n", (int)lrint(log2(c->mu)), ac_dtype_name(c->range),
            c->scaled_in == AC_F64 ? "-" : ac_dtype_name(c->scaled_in));
  }
  fprintf(f, "\ndefault per dtype: f64 fp64, f32 fp32, f16 fp16-fa2, bf16 bf16-fa2, e4m3 e4m3-fa3, e5m2 e5m2-fa3\n\n");
  for (size_t i = 0; i < n; i++) fprintf(f, "%-12s %s\n", t[i].name, t[i].description);
  fprintf(f, "\npresets as class strings (the parts that differ from the defaults; 'attncheck list --precision NAME'\n"
             "prints every part):\n");
  ac_prec_parts d;
  ac_prec_parts_default(&d);
  char all[512], def[512];
  ac_prec_parts_format(&d, def, sizeof def);
  for (size_t i = 0; i < n; i++) {
    ac_precision_string(&t[i], all, sizeof all);
    /* the parts whose name=value differs from the default string's */
    char out[512] = "";
    size_t ol = 0;
    for (char *a = all, *x = def; a && x;) {
      char *ae = strchr(a, ','), *xe = strchr(x, ',');
      size_t al = ae ? (size_t)(ae - a) : strlen(a), xl = xe ? (size_t)(xe - x) : strlen(x);
      if ((al != xl || strncmp(a, x, al)) && ol < sizeof out)
        ol += (size_t)snprintf(out + ol, sizeof out - ol, "%s%.*s", ol ? "," : "", (int)al, a);
      a = ae ? ae + 1 : NULL;
      x = xe ? xe + 1 : NULL;
    }
    fprintf(f, "%-12s %s\n", t[i].name, out[0] ? out : "(the defaults)");
  }
  fprintf(f, "\n");
  ac_precision_parts_help(f);
}

static const char *fmtn(ac_dtype t)
{
  return ac_dtype_name(t);
}

/* The score-error lines of `list --precision CLASS`. */
static void print_scores(FILE *f, const ac_precision *c)
{
  char a[32], b[32];
  fprintf(f, "  Q.K^T        gamma(d_k, %s%s)|c|Z_j, Z_j = sum_t |q_t k_jt|\n", pow2s(c->u_qk, a, sizeof a),
          c->qk_trunc ? " truncating: 2u" : "");
  if (c->u_qin > 0 || c->u_kin > 0)
    fprintf(f,
            "  inputs       Q rounded %s, K rounded %s: (1 + u_q)(1 + u_k) on Q.K^T's gamma, + (u_q + u_k + u_q "
            "u_k)|c|Z_j\n",
            c->u_qin > 0 ? pow2s(c->u_qin, a, sizeof a) : "-", c->u_kin > 0 ? pow2s(c->u_kin, b, sizeof b) : "-");
  if (c->q8)
    fprintf(f,
            "  Q in q8      (1/254 + 2^-15/127 + 2^-11)(1 + gamma)|c| sum_t qb_t |k_jt|, qb_t = max |q| of t's block "
            "of %d\n"
            "               (per block, absolute), + 127*2^-25 |c| (|q|_1 + max_j |k_j|_1) (f16 scale subnormal)\n",
            AC_Q8_BLOCK);
  if (c->q81)
    fprintf(f, "  q8_1 sums    |c| M ((2^-10 + 2^-24 + 2^-35) 1.126 (1 + 2^-24) + 2.01 gamma(8 n_b + 4, 2^-24)) (|q|_1 + max_j "
               "|k_j|_1)\n"
               "               + |c| M 4065*2^-25 n_b, M = max |min| of a q4_1 or q5_1 K, n_b its blocks a row\n");
  if (c->scaled_in != AC_F64)
    fprintf(f, "  scaled Q,K   (1 + u_in)^2 on Q.K^T's gamma, + (2u_in + u_in^2)|c|Z_j, u_in = %s (%s)\n",
            pow2s(ac_dtype_get(c->scaled_in)->u, a, sizeof a), fmtn(c->scaled_in));
  if (c->u_S > 0) fprintf(f, "  stored S     %s |s_j| (%s scores)\n", pow2s(c->u_S, a, sizeof a), fmtn(c->score_store));
  fprintf(f, "  score arith  %s (|s_j| + 2|s_j - m|)%s\n", pow2s(c->u_s, a, sizeof a),
          c->parts.v[AC_PART_EXP] ? " (exp2: log2 e folded into the scale)" : "");
  fprintf(f, "  exp          %s per key\n", eu_s(c, a, sizeof a));
  fprintf(f, "  rescales     n_r = T: %s per key%s\n", pow2s(c->u_s, a, sizeof a),
          c->rs_acc ? "; and n_r more roundings of the P.V and row-sum accumulators" : "");
  fprintf(f, "  underflow    (|c| d_k + 2)%s per key%s\n", pow2s(c->eta_qk, a, sizeof a),
          c->scaled_in != AC_F64 || c->u_qin > 0 || c->u_kin > 0 || c->daz_qk > 0
              ? ", + |c|(|q|_1 + max_j |k_j|_1) times the inputs' underflow"
              : "");
}

void ac_precision_print_class(FILE *f, const ac_precision *c)
{
  char s[512], a[32], b[32];
  ac_precision_string(c, s, sizeof s);
  fprintf(f, "%s\n", s);
  if (strcmp(c->name, s)) fprintf(f, "preset %s: %s\n", c->name, c->description);
  fprintf(f, "budget terms (docs/numerics.md §7; per key j of a row of T keys, c the scale; first order, each\n"
             "beyond it by phi(Delta) and e^(2 Delta), capped by the convex hull, times 1.125):\n");
  print_scores(f, c);
  if (c->u_p > 0) fprintf(f, "  P stored     %s R (R = sum_j A_j |V_j|)\n", pow2s(c->u_p, a, sizeof a));
  if (c->u_vin > 0) fprintf(f, "  V on input   %s R\n", pow2s(c->u_vin, a, sizeof a));
  if (c->u_dq > 0)
    fprintf(f, "  dequantized  a quantized Q, K or V in %s: (1 + u)(1 + 2u(1 + u)) - 1 on input, + 4u(1 + u) max|z s| + "
               "2^-149 absolute\n"
               "               per element (z s: a group's zero point times its scale, or its min)\n",
            pow2s(c->u_dq, a, sizeof a));
  fprintf(f, "  P below      %s may be lost (F)\n", pow2s(c->mu, a, sizeof a));
  const char *n_r = c->rs_acc ? " + n_r" : "";
  fprintf(f, "  P.V          gamma(T%s, %s%s) R\n", n_r, pow2s(c->u_a, a, sizeof a), c->acc_trunc ? " truncating" : "");
  fprintf(f, "  row sum      gamma(T%s, %s%s) |o|; terms below %s lost (LSE)\n", n_r, pow2s(c->u_l, a, sizeof a),
          c->l_trunc ? " truncating" : "", pow2s(c->mu_sum, b, sizeof b));
  fprintf(f, "  division     %s |o|; output underflow (T + n_r + 2)%s\n", pow2s(c->u_s, a, sizeof a),
          pow2s(c->eta_a, b, sizeof b));
  if (c->sub != AC_SUB_IEEE)
    fprintf(f, "  subnormals   flushed to zero (%s): the underflow terms at the smallest normal%s\n",
            c->sub == AC_SUB_DAZ ? "FTZ and DAZ" : "FTZ", c->sub == AC_SUB_DAZ ? "; inputs below it read as 0" : "");
  fprintf(f, "  LSE          %s (2|LSE| + |m|) (%s) + %s + the score terms + the row sum's\n",
          pow2s(c->u_lse, a, sizeof a), c->parts.v[AC_PART_LSE] ? "(m2 + log2 l) ln 2" : "m + ln l",
          eu_s(c, b, sizeof b));
  fprintf(f, "  ranges       scores %s%s%s, partial sums %s (OUT-OF-DOMAIN beyond)\n", fmtn(c->range),
          c->score_store != AC_F64 ? ", stored scores " : "", c->score_store != AC_F64 ? fmtn(c->score_store) : "",
          fmtn(c->sum_range));
}
