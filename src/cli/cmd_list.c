/* cmd_list.c: attncheck list [--precision [CLASS...]] [--mutants] [--tests] [--kernel K...] */
#include "config.h"
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "accuda.h"
#include "commands.h"
#include "exec.h"
#include "exec_decl.h"
#include "harness.h"
#include "judge_args.h"
#include "precision.h"
#include "quant.h"
#include "variants.h"

static void usage(FILE *f)
{
  fprintf(f,
          "usage: attncheck list [--precision [CLASS]...] [--mutants] [--tests] [--kernel K]...\n\n"
          "Lists the built-in kernels (CUDA kernels when built) with their precision class and what each\n"
          "supports, and the precision class names.\n"
          "  --precision   print the precision class table (u of each stage, accumulation, mu, range), the\n"
          "                presets' parts and the part names; with CLASS (a preset's name or a class string,\n"
          "                'q=f16,pv=f16'), its complete class string on the first line and its budget terms\n"
          "  --mutants     also list the deliberately wrong kernels (never used by default)\n"
          "  --tests       also list the test kernels that prove each verdict kind\n"
          "  --kernel K    list the kernels of a plugin (PATH.so) or another kernel spec instead of the built-ins\n");
}

/* The ABI 5 declarations (an exec worker's too): "; empty rows nan, lse nan; class per problem;
 * env A,B; note: ...". */
static void declared_summary(const ac_kernel *k, char *buf, size_t n)
{
  static const char *const on[] = {"", "zero", "nan", "mean-v"}, *const ln[] = {"", "-inf", "+inf", "nan"};
  int eo, el;
  size_t len = 0;
  if (n) buf[0] = 0;
  ac_kernel_empty_rows(k, &eo, &el);
  if (eo || el)
    len += (size_t)snprintf(buf + len, n - len, "; empty rows %s%s%s", eo ? on[eo] : "o as --empty-rows",
                            el ? ", lse " : "", el ? ln[el] : "");
  if (ac_kernel_precision_of(k) && len < n)
    len += (size_t)snprintf(buf + len, n - len, "; class per problem (precision_of)");
  const ac_exec_decl *d = k->kind == AC_KIND_EXEC_PERSISTENT ? ac_exec_declaration(k) : NULL;
  for (int i = 0; d && i < d->nenv && len < n; i++)
    len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? "," : "; env ", d->env[i]);
  if (d && d->note[0] && len < n) snprintf(buf + len, n - len, "; note: %s", d->note);
}

/* "dtypes f32,f16; masks none,causal,causal-bottom-right; gqa; dv!=dk" from probing supports(),
 * then the ABI 2 caps: "; features window,softcap,...; no LSE". */
static void supports_summary(ac_kernel *k, char *buf, size_t n)
{
  static const ac_dtype ts[] = {AC_F64, AC_F32, AC_F16, AC_BF16, AC_E4M3, AC_E5M2};
  int dt_ok[6] = {0}, mask_ok[3] = {0}, gqa = 0, dvne = 0, tqne = 0, scale = 0;
  char refused[256] = ""; /* why the f32 probe (or the first one) was refused */
  uint32_t qf, kvf = ac_kernel_kv_formats(k, &qf);
  /* a kernel of quantized tensors is probed dense, then where that is refused on K and V in its
   * first format (docs/quantized.md) */
  ac_qspec pq;
  int probe_fmt = ac_kernel_quant_probe(k, &pq);
  for (int m = 0; m < 3; m++)
    for (int x = 0; x < 6; x++) {
      ac_problem p;
      memset(&p, 0, sizeof p);
      p.dtype = ts[x];
      p.mask = (ac_mask)m;
      p.batch = 1;
      p.heads = p.kv_heads = 2;
      p.tq = p.tk = 8;
      p.dk = p.dv = 16;
      p.scale_is_default = 1;
      p.scale = 0.25;
      char why[256];
      int ok = ac_kernel_supports(k, &p, why, sizeof why), qp = 0;
      if (!ok && probe_fmt) {   /* refused dense: the same problem with K and V quantized */
        p.dk = p.dv = 32;
        p.scale = 0x1.6a09e667f3bcdp-3;
        p.quant[1] = p.quant[2] = pq;
        qp = 1;
        ok = ac_kernel_supports(k, &p, why, sizeof why);
      }
      if (!ok && (ac_kernel_declared_caps(k) & ATTNCHECK_FEAT_LAYOUTS)) {   /* a layout-only kernel: one varlen sequence */
        ac_features_plain(&p);
        p.f.used = ac_kernel_declared_caps(k) & ATTNCHECK_FEAT_VARLEN ? AC_FEAT_VARLEN : AC_FEAT_PAGED;
        p.l.nseq = 1, p.l.max_tq = p.l.max_tk = 8;
        if (p.f.used == AC_FEAT_PAGED) p.l.page_size = 8, p.l.num_pages = p.l.max_pages = 1;
        ok = ac_kernel_supports(k, &p, why, sizeof why);
      }
      if (!ok && (!refused[0] || (ts[x] == AC_F32 && m == 0))) snprintf(refused, sizeof refused, "%s", why);
      if (!ok) continue;
      dt_ok[x] = mask_ok[m] = 1;
      ac_problem q = p;
      q.kv_heads = 1;
      gqa |= ac_kernel_supports(k, &q, why, sizeof why);
      q = p, q.dv = qp ? 64 : 8;
      dvne |= ac_kernel_supports(k, &q, why, sizeof why);
      q = p, q.tk = 12;
      tqne |= ac_kernel_supports(k, &q, why, sizeof why);
      q = p, q.scale_is_default = 0, q.scale = 0.5;
      scale |= ac_kernel_supports(k, &q, why, sizeof why);
    }
  size_t len = (size_t)snprintf(buf, n, "dtypes");
  int any = 0;
  for (int x = 0; x < 6; x++)
    if (dt_ok[x] && len < n) len += (size_t)snprintf(buf + len, n - len, "%s%s", any++ ? "," : " ", ac_dtype_name(ts[x]));
  if (!any && len < n) len += (size_t)snprintf(buf + len, n - len, " -");
  if (len < n) len += (size_t)snprintf(buf + len, n - len, "; masks");
  any = 0;
  for (int m = 0; m < 3; m++)
    if (mask_ok[m] && len < n) len += (size_t)snprintf(buf + len, n - len, "%s%s", any++ ? "," : " ", ac_mask_name((ac_mask)m));
  if (!any && len < n) len += (size_t)snprintf(buf + len, n - len, " -");
  if (len < n)
    len += (size_t)snprintf(buf + len, n - len, "%s%s%s%s", gqa ? "; gqa" : "", dvne ? "; dv!=dk" : "",
                            tqne ? "; tq!=tk" : "", scale ? "; scale" : "");
  int accepted = 0;
  for (int x = 0; x < 6; x++) accepted |= dt_ok[x];
  if (!accepted && len < n) len += (size_t)snprintf(buf + len, n - len, "; probe refused: %s", refused);
  /* ABI 2 caps (an exec worker's declaration): the variant features and whether the LSE is written */
  const uint32_t caps = ac_kernel_declared_caps(k);
  char feats[128];
  /* variants, serving layouts, dropout, quantized layouts and stores */
  const uint32_t shown = ATTNCHECK_FEAT_ALL | ATTNCHECK_FEAT_LAYOUTS | ATTNCHECK_FEAT_DROPOUT | ATTNCHECK_FEAT_QUANT_STORE |
                         ATTNCHECK_FEAT_QUANT_LAYOUT;
  if ((caps & shown) && len < n)
    len += (size_t)snprintf(buf + len, n - len, "; features %s", ac_feat_list(caps & shown, feats, sizeof feats));
  if ((caps & ATTNCHECK_CAP_NO_LSE) && len < n) len += (size_t)snprintf(buf + len, n - len, "; no LSE");
  if ((caps & ATTNCHECK_CAP_ALIBI_LSE_FA2) && len < n) len += (size_t)snprintf(buf + len, n - len, "; alibi-lse fa2");
  /* quantized tensors: the formats it reads (docs/quantized.md) */
  char fl[160];
  if (kvf && len < n) len += (size_t)snprintf(buf + len, n - len, "; kv formats %s", ac_qfmt_list(kvf, fl, sizeof fl));
  if (qf && len < n) len += (size_t)snprintf(buf + len, n - len, "; q formats %s", ac_qfmt_list(qf, fl, sizeof fl));
  if (ac_kernel_quant_only(k) && len < n) len += (size_t)snprintf(buf + len, n - len, "; quantized cases only");
  int32_t sq[16];
  int nsq = ac_kernel_store_quantizers(k, sq, 16);
  for (int j = 0; j < nsq && len < n; j++) {
    char st[64];
    len += (size_t)snprintf(buf + len, n - len, "%s%s", j ? "," : "; stores ", ac_qstore_str(sq[j], st, sizeof st));
  }
  /* ABI 3 run_backward, or an exec worker's declaration (read by list_one already) */
  if (ac_kernel_has_backward(k, 60) && len < n) {
    uint32_t bc = ac_kernel_backward_caps(k) & shown;
    len += (size_t)snprintf(buf + len, n - len, "; backward%s%s", bc ? " " : "",
                            bc ? ac_feat_list(bc, feats, sizeof feats) : "");
  }
  declared_summary(k, buf + (len < n ? len : n), len < n ? n - len : 0);
}

static void list_one(ac_kernel *k, const char *tag)
{
  char sup[1024];
  const attncheck_kernel *a = k->abi;
  ac_run_opts ro;
  ac_run_opts_init(&ro);
  ac_kernel_prepare(k, ro.timeout_s);   /* an exec worker's declaration */
  supports_summary(k, sup, sizeof sup);
  /* a plugin's or worker's strings, escaped like all a kernel supplies */
  char name[400], prec[200], desc[1024];
  ac_str_escape(k->name, name, sizeof name);
  ac_str_escape(k->precision && *k->precision ? k->precision : "(default)", prec, sizeof prec);
  ac_str_escape(a && a->description ? a->description : k->origin, desc, sizeof desc);
  printf("  %-26s %-11s %-5s %s%s\n", name, prec, a && a->memory == ATTNCHECK_MEM_CUDA ? "cuda" : "host", tag, desc);
  printf("  %-26s %s\n", "", sup);
}

static void list_table(const char *title, const attncheck_kernel *const *v, size_t n, const char *tag)
{
  printf("%s:\n", title);
  for (size_t i = 0; i < n; i++) {
    ac_kernel **ks = NULL;
    int nk = 0;
    ac_err e;
    if (ac_kernel_resolve(v[i]->name, &ks, &nk, &e) < 0 || nk < 1) {
      printf("  %-26s (cannot resolve: %s)\n", v[i]->name, e.msg);
      continue;
    }
    list_one(ks[0], tag);
    for (int x = 0; x < nk; x++) ac_kernel_free(ks[x]);
    free(ks);
  }
  printf("\n");
}

int ac_cmd_list(int argc, char **argv)
{
  int prec = 0, mutants = 0, tests = 0, nks = 0;
  const char *kspecs[32];
  enum { O_PREC = 256, O_MUTANTS, O_TESTS, O_KERNEL };
  static const struct option lo[] = {{"help", no_argument, NULL, 'h'},
                                     {"precision", no_argument, NULL, O_PREC},
                                     {"mutants", no_argument, NULL, O_MUTANTS},
                                     {"tests", no_argument, NULL, O_TESTS},
                                     {"kernel", required_argument, NULL, O_KERNEL},
                                     {NULL, 0, NULL, 0}};
  optind = 0;
  opterr = 0;
  int ch;
  while ((ch = ac_cmd_getopt_long(argc, argv, ":h", lo)) != -1) {
    switch (ch) {
    case 'h': usage(stdout); return AC_EXIT_OK;
    case O_PREC: prec = 1; break;
    case O_MUTANTS: mutants = 1; break;
    case O_TESTS: tests = 1; break;
    case O_KERNEL:
      if (nks == 32) return ac_cmd_usage_error("list", "--kernel needs a value (at most 32)");
      kspecs[nks++] = optarg;
      break;
    default: return ac_cmd_getopt_error("list", ch, argv);
    }
  }
  if (optind < argc && !prec) return ac_cmd_usage_error("list", "unexpected argument '%s'", argv[optind]);
  if (optind < argc) { /* list --precision CLASS...: every class known before anything is printed */
    const ac_precision *cls[32];
    if (argc - optind > 32) return ac_cmd_usage_error("list", "at most 32 classes");
    for (int x = optind; x < argc; x++) {
      ac_err e;
      if (ac_precision_lookup(argv[x], &cls[x - optind], &e) < 0) return ac_cmd_usage_error("list", "%s", e.msg);
    }
    for (int x = 0; x < argc - optind; x++) {
      if (x) printf("\n");
      ac_precision_print_class(stdout, cls[x]);
    }
    return AC_EXIT_OK;
  }
  if (prec && !mutants && !tests && !nks) {
    ac_precision_print(stdout);
    return AC_EXIT_OK;
  }
  size_t n;
  const attncheck_kernel *const *v;
  printf("  %-26s %-11s %-5s %s\n", "kernel", "precision", "mem", "description");
  if (!nks) { /* --kernel K lists K's kernels, not the built-ins */
    v = ac_builtin_kernels(&n);
    list_table("built-in kernels", v, n, "");
    if (ac_cuda_built() && ac_cuda_unavailable()) printf("  (no CUDA kernels: %s)\n", ac_cuda_unavailable());
  }
  if (mutants) {
    v = ac_mutant_kernels(&n);
    list_table("mutants (deliberately wrong; never used by default)", v, n, "");
  }
  if (tests) {
    v = ac_test_kernels(&n);
    list_table("test kernels (each proves one verdict kind)", v, n, "");
  }
  int rc = AC_EXIT_OK;
  for (int x = 0; x < nks; x++) {
    ac_kernel **ks = NULL;
    int nk = 0;
    ac_err e;
    if (ac_kernel_resolve(kspecs[x], &ks, &nk, &e) < 0) {
      ac_cmd_error("list", "%s", e.msg);
      rc = AC_EXIT_USAGE;
      continue;
    }
    printf("%s:\n", kspecs[x]);
    for (int y = 0; y < nk; y++) {
      list_one(ks[y], "");
      ac_kernel_free(ks[y]);
    }
    free(ks);
    printf("\n");
  }
  if (prec) ac_precision_print(stdout);
  else {
    size_t nc;
    const ac_precision *t = ac_precision_table(&nc);
    printf("precision classes (attncheck list --precision):");
    for (size_t i = 0; i < nc; i++) printf(" %s", t[i].name);
    printf("\n");
  }
  return rc;
}
