/* quant_spec.c: a quantized tensor's spec (quant.h): its string form "FMT[:GRANULARITY[:SIZE]][:KEY=VALUE]...",
 * what each format takes (group and tile sizes, token groups, scale and zero dtypes, packing, a
 * store quantizer), and the ABI feature bits beyond the first ABI 5 description. */
#include "config.h"
#include "quant.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define AC_QGROUP_MAX 4096

ac_qsdtype ac_qspec_sdtype(const ac_qspec *q)
{
  const ac_qfmt_info *f = ac_qfmt_get(q->fmt);
  if (q->sdtype > 0 && q->sdtype <= AC_QSD_N) return (ac_qsdtype)(q->sdtype - 1);
  return f ? f->sdtype : AC_QSD_F32;
}

ac_qsdtype ac_qspec_zdtype(const ac_qspec *q)
{
  const ac_qfmt_info *f = ac_qfmt_get(q->fmt);
  if (!f || f->aux == AC_QAUX_NONE) return AC_QSD_N;
  if (f->aux == AC_QAUX_MIN) return AC_QSD_F16;
  if (f->aux == AC_QAUX_TSCALE) return AC_QSD_F32;
  if (q->zdtype > 0 && q->zdtype <= AC_QSD_N) return (ac_qsdtype)(q->zdtype - 1);
  return q->fmt == AC_QF_UINT8 ? AC_QSD_U8 : AC_QSD_I8;
}

void ac_qspec_normalize(ac_qspec *q)
{
  const ac_qfmt_info *f = ac_qfmt_get(q->fmt);
  if (!f) return;
  if (q->sdtype == (int32_t)f->sdtype + 1) q->sdtype = 0;
  if (f->aux == AC_QAUX_ZERO && q->zdtype == (int32_t)(q->fmt == AC_QF_UINT8 ? AC_QSD_U8 : AC_QSD_I8) + 1) q->zdtype = 0;
  if (q->gran == AC_QG_BLOCK && q->tgroup == 1) q->tgroup = 0;
  q->rounded = 0;
  q->mins_max = 0;
  q->zs_max = 0;
}

int ac_qspec_per_byte(const ac_qspec *q)
{
  const ac_qfmt_info *f = ac_qfmt_get(q->fmt);
  return q->pack && f && f->bits ? 8 / f->bits : 1;
}

static int is_float_sd(ac_qsdtype t) { return t == AC_QSD_F16 || t == AC_QSD_BF16 || t == AC_QSD_F32; }

int ac_qspec_extended(const ac_qspec *q)
{
  const ac_qfmt_info *f = ac_qfmt_get(q->fmt);
  if (!f) return 0;
  return (q->gran == AC_QG_BLOCK && !f->block) || q->tgroup > 1 || (q->gran == AC_QG_CHANNEL && q->tgroup > 0) ||
         ac_qspec_sdtype(q) != f->sdtype || (f->aux == AC_QAUX_ZERO && ac_qspec_zdtype(q) != AC_QSD_I8) || q->pack ||
         q->fmt == AC_QF_INT2 || q->fmt == AC_QF_UINT8;
}

uint32_t ac_quant_features(const ac_problem *p)
{
  uint32_t f = 0;
  for (int i = 0; i < 3; i++) {
    if (!p->quant[i].fmt) continue;
    if (p->quant[i].store) f |= AC_FEAT_QUANT_STORE;
    if (ac_qspec_extended(&p->quant[i])) f |= AC_FEAT_QUANT_LAYOUT;
  }
  return f;
}

static int parse_size(const char *s, int64_t *v)
{
  char *end;
  long long x = strtoll(s, &end, 10);
  if (end == s || *end || x < 1 || x > AC_QGROUP_MAX) return -1;
  *v = x;
  return 0;
}

/* "f16", "bf16", "f32" (and for zero points "i8", "u8") into *t. */
static int parse_sd(const char *s, int zero, ac_qsdtype *t)
{
  for (int k = 0; k < AC_QSD_N; k++)
    if (!strcmp(s, ac_qsdtype_name((ac_qsdtype)k)) && (is_float_sd((ac_qsdtype)k) || (zero && k >= AC_QSD_I8))) {
      *t = (ac_qsdtype)k;
      return 0;
    }
  return -1;
}

/* The granularity words: block, tensor, head, token, channel and their aliases; group and tile. */
static int parse_gran(const char *w, const char *size, ac_qspec *q, int *used_size, ac_err *e)
{
  *used_size = 0;
  int g;
  if (!strcasecmp(w, "group") || !strcasecmp(w, "tile")) {
    int64_t a = 1, b;
    const char *x = size ? strchr(size, 'x') : NULL;
    if (!size) return ac_err_set(e, "%s needs a size (group:32, group:64, group:128, tile:128x128)", w);
    char tmp[32];
    snprintf(tmp, sizeof tmp, "%.*s", x ? (int)(x - size) : 0, size);
    if (!strcasecmp(w, "tile") ? (!x || parse_size(tmp, &a) || parse_size(x + 1, &b)) : parse_size(size, &b))
      return ac_err_set(e, "%s size '%.40s': expected %s (1 to %d)", w, size, !strcasecmp(w, "tile") ? "GxN" : "N",
                        AC_QGROUP_MAX);
    q->gran = AC_QG_BLOCK, q->block = b, q->tgroup = a > 1 ? a : 0, *used_size = 1;
    return 0;
  }
  if (ac_qgran_parse(w, &g))
    return ac_err_set(e, "unknown granularity '%.40s' (block, tensor, head, token, channel, group:N, tile:GxN, channel:G)", w);
  q->gran = g;
  if (size && (g == AC_QG_CHANNEL || g == AC_QG_BLOCK) && strchr("0123456789", size[0])) {
    int64_t v;
    if (parse_size(size, &v) || (g == AC_QG_CHANNEL && v < 2))
      return ac_err_set(e, "%s size '%.40s': expected %s", w, size, g == AC_QG_CHANNEL ? "tokens 2 to 4096" : "1 to 4096");
    if (g == AC_QG_CHANNEL) q->tgroup = v;
    else q->block = v;
    *used_size = 1;
  }
  return 0;
}

static int parse_option(const char *w, ac_qspec *q, ac_err *e)
{
  const char *eq = strchr(w, '=');
  char key[16];
  snprintf(key, sizeof key, "%.*s", (int)(eq - w) < 15 ? (int)(eq - w) : 15, w);
  const char *v = eq + 1;
  ac_qsdtype t;
  if (!strcmp(key, "scale")) {
    if (parse_sd(v, 0, &t)) return ac_err_set(e, "scale=%.20s: scale dtypes are f16, bf16, f32", v);
    q->sdtype = (int32_t)t + 1;
  } else if (!strcmp(key, "zero")) {
    if (parse_sd(v, 1, &t)) return ac_err_set(e, "zero=%.20s: zero point dtypes are i8, u8, f16, bf16, f32", v);
    q->zdtype = (int32_t)t + 1;
  } else if (!strcmp(key, "packed")) {
    if (!strcmp(v, "low")) q->pack = AC_QPACK_LOW_FIRST;
    else if (!strcmp(v, "high")) q->pack = AC_QPACK_HIGH_FIRST;
    else return ac_err_set(e, "packed=%.20s: low (the first code in the low bits) or high", v);
  } else if (!strcmp(key, "store")) {
    return ac_qstore_parse(v, &q->store, e);
  } else {
    return ac_err_set(e, "unknown option '%.40s' of a quantized spec (scale=, zero=, packed=, store=)", w);
  }
  return 0;
}

int ac_qspec_parse(const char *s, ac_qspec *q, ac_err *e)
{
  char buf[256], *w[12];
  int nw = 0;
  memset(q, 0, sizeof *q);
  if (strlen(s) >= sizeof buf) return ac_err_set(e, "quantized spec too long: '%.60s...'", s);
  snprintf(buf, sizeof buf, "%s", s);
  for (char *t = buf; t && nw < 12;) {
    w[nw++] = t;
    t = strchr(t, ':');
    if (t) *t++ = 0;
  }
  int fmt;
  if (ac_qfmt_parse(w[0], &fmt))
    return ac_err_set(e, "unknown quantized format '%.40s' (q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl, e4m3fn, e4m3fnuz, "
                         "e5m2, int8, uint8, int4, int2, nvfp4, mxfp4)", w[0]);
  const ac_qfmt_info *f = ac_qfmt_get(fmt);
  q->fmt = fmt;
  q->gran = (int32_t)f->gran;
  int k = 1, have_gran = 0;
  if (k < nw && !strchr(w[k], '=')) {
    int used;
    if (parse_gran(w[k], k + 1 < nw && !strchr(w[k + 1], '=') ? w[k + 1] : NULL, q, &used, e)) return -1;
    k += 1 + used;
    have_gran = 1;
  }
  for (; k < nw; k++)
    if (!strchr(w[k], '=') ? ac_err_set(e, "'%.40s' in '%.80s': expected KEY=VALUE after the granularity", w[k], s)
                            : parse_option(w[k], q, e))
      return -1;
  (void)have_gran;
  if (q->gran == AC_QG_BLOCK && !q->block) q->block = f->block;
  if (!(f->grans >> q->gran & 1u)) {
    char ok[96] = "";
    for (int g = 0; g < AC_QG_N; g++)
      if (f->grans >> g & 1u)
        snprintf(ok + strlen(ok), sizeof ok - strlen(ok), "%s%s", ok[0] ? ", " : "", g == AC_QG_BLOCK && !f->block ? "group:N" : ac_qgran_name(g));
    return ac_err_set(e, "%s takes no %s granularity (it takes %s)", f->name, ac_qgran_name(q->gran), ok);
  }
  if (q->gran == AC_QG_BLOCK && !q->block)
    return ac_err_set(e, "%s: block granularity needs a group size (group:32, group:64, group:128)", f->name);
  ac_qspec_normalize(q);
  return ac_qspec_check(q, 0, 0, e);
}

const char *ac_qspec_str(const ac_qspec *q, char *buf, size_t n)
{
  const ac_qfmt_info *f = ac_qfmt_get(q->fmt);
  size_t l = 0;
#define PUT(...) (l += (size_t)snprintf(buf + (l < n ? l : n), l < n ? n - l : 0, __VA_ARGS__))
  if (n) buf[0] = 0;
  if (!f) {
    PUT("%s", ac_qfmt_name(q->fmt));
    return buf;
  }
  PUT("%s", f->name);
  int64_t tg = ac_qspec_tgroup(q);
  if (q->gran == AC_QG_BLOCK && !f->block) {
    if (tg > 1) PUT(":tile:%lldx%lld", (long long)tg, (long long)q->block);
    else PUT(":group:%lld", (long long)q->block);
  } else if (q->gran != (int)f->gran) {
    PUT(":%s", ac_qgran_name(q->gran));
  }
  if (q->gran == AC_QG_CHANNEL && tg) PUT("%s:%lld", q->gran == (int)f->gran ? ":channel" : "", (long long)tg);
  if (q->sdtype) PUT(":scale=%s", ac_qsdtype_name(ac_qspec_sdtype(q)));
  if (q->zdtype) PUT(":zero=%s", ac_qsdtype_name(ac_qspec_zdtype(q)));
  if (q->pack) PUT(":packed=%s", q->pack == AC_QPACK_HIGH_FIRST ? "high" : "low");
  if (q->store) {
    char st[64];
    PUT(":store=%s", ac_qstore_str(q->store, st, sizeof st));
  }
#undef PUT
  return buf;
}

/* What the format allows beside its granularity (tensor 0: the spec alone, no head dim). */
static int check_options(const ac_qspec *q, const ac_qfmt_info *f, char tensor, ac_err *e)
{
  const char *who = f->name;
  int var = !strcmp(f->kind, "int") || !strcmp(f->kind, "fp8");
  if (q->gran == AC_QG_BLOCK && !f->block && (q->block < 1 || q->block > AC_QGROUP_MAX))
    return ac_err_set(e, "%s: a group of %lld elements (1 to %d)", who, (long long)q->block, AC_QGROUP_MAX);
  if (q->tgroup < 0 || q->tgroup > AC_QGROUP_MAX || (q->tgroup > 1 && !(q->gran == AC_QG_CHANNEL || (q->gran == AC_QG_BLOCK && !f->block))) ||
      (q->gran == AC_QG_CHANNEL && q->tgroup == 1))
    return ac_err_set(e, "%s: token groups of %lld are for tile:GxN and channel:G of the int and fp8 formats", who,
                      (long long)q->tgroup);
  if (q->sdtype && (q->sdtype < 1 || q->sdtype > AC_QSD_N || (ac_qspec_sdtype(q) != f->sdtype && !(var && is_float_sd(ac_qspec_sdtype(q))))))
    return ac_err_set(e, "%s: scale dtype %s (it takes %s%s)", who, ac_qsdtype_name(ac_qspec_sdtype(q)),
                      ac_qsdtype_name(f->sdtype), var ? ", f16, bf16" : "");
  if (q->zdtype) {
    ac_qsdtype z = (ac_qsdtype)(q->zdtype - 1), own = q->fmt == AC_QF_UINT8 ? AC_QSD_U8 : AC_QSD_I8;
    if (f->aux != AC_QAUX_ZERO || q->zdtype < 1 || q->zdtype > AC_QSD_N || !(z == own || is_float_sd(z)))
      return ac_err_set(e, "%s: %s zero points (%s)", who, ac_qsdtype_name(z),
                        f->aux == AC_QAUX_ZERO ? (q->fmt == AC_QF_UINT8 ? "it takes u8, f16, bf16, f32" : "it takes i8, f16, bf16, f32")
                                               : "it has none");
  }
  if (q->pack && (!f->bits || (q->pack != AC_QPACK_LOW_FIRST && q->pack != AC_QPACK_HIGH_FIRST)))
    return ac_err_set(e, "%s: codes packed%s (int4, int2, nvfp4 and mxfp4 codes pack)", who,
                      f->bits ? " in an unknown order" : " only when narrower than a byte");
  if (q->store && ac_qstore_check(q, tensor, e)) return -1;
  return 0;
}

int ac_qspec_check(const ac_qspec *q, char tensor, int64_t d, ac_err *e)
{
  char t[4] = "";
  if (tensor) snprintf(t, sizeof t, "%c: ", tensor);
  const ac_qfmt_info *f = ac_qfmt_get(q->fmt);
  if (!f) return ac_err_set(e, "%sunknown quantized format %d", t, (int)q->fmt);
  if (q->gran < 0 || q->gran >= AC_QG_N || !(f->grans >> q->gran & 1u))
    return ac_err_set(e, "%s%s takes no %s granularity", t, f->name, ac_qgran_name(q->gran));
  int64_t want = q->gran == AC_QG_BLOCK ? f->block : 0;
  if (f->block || q->gran != AC_QG_BLOCK) {
    if (q->block != want)
      return ac_err_set(e, "%s%s's block is %lld elements, not %lld", t, f->name, (long long)want, (long long)q->block);
  } else {
    want = q->block;
  }
  ac_err oe;
  if (check_options(q, f, tensor, &oe)) return ac_err_set(e, "%s%s", t, oe.msg);
  if (!tensor) return 0;
  const char dn = tensor == 'v' ? 'v' : 'k';
  if (want && d % want != 0)
    return ac_err_set(e, "%sd%c %lld is not a multiple of %s's %s of %lld (the format defines no padding)", t, dn,
                      (long long)d, f->name, f->block ? "block" : "group", (long long)want);
  int per = ac_qspec_per_byte(q);
  if (d % per != 0)
    return ac_err_set(e, "%sd%c %lld is not a multiple of the %d codes a byte packs", t, dn, (long long)d, per);
  return 0;
}
