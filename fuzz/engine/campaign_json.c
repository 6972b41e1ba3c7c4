/* campaign_json.c: campaign.json, a campaign's identity (kernel, seed, shard, families, limits,
 * policies), written when a campaign starts and read back by --resume; after each run it also
 * counts the findings and defects. */
#include "config.h"
#include <stddef.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "campaign.h"
/* campaign.json: the campaign's identity, one row per field, saved and loaded alike. PSTR
 * fields (a pointer, NULL when not given) and KEEP fields are taken from the file only when
 * the command line did not give them. */
typedef enum { CJ_PSTR, CJ_ARR, CJ_U64, CJ_INT, CJ_I64, CJ_U32 } cj_type;
typedef struct {
  const char *name;
  cj_type type;
  size_t off, size;
  int keep;
} cj_field;

#define CJ(n, t, m, k) {n, t, offsetof(ac_campaign_opts, m), sizeof(((ac_campaign_opts *)0)->m), k}
static const cj_field cj_fields[] = {
  CJ("kernel_spec", CJ_PSTR, kernel_spec, 1),   CJ("seed", CJ_U64, seed, 0),
  CJ("shard_i", CJ_INT, shard_i, 0),            CJ("shard_n", CJ_INT, shard_n, 0),
  CJ("families", CJ_ARR, families, 0),          CJ("dtypes", CJ_U32, lim.dtypes, 0),
  CJ("masks", CJ_U32, lim.masks, 0),            CJ("max_t", CJ_I64, lim.max_t, 0),
  CJ("max_elems", CJ_I64, lim.max_elems, 0),    CJ("max_d", CJ_I64, lim.max_d, 0),
  CJ("no_strided", CJ_INT, lim.no_strided, 0),  CJ("no_nonfinite", CJ_INT, lim.no_nonfinite, 0),
  CJ("features", CJ_U32, lim.features, 0),      CJ("no_dense", CJ_INT, lim.no_dense, 0),
  CJ("policies", CJ_ARR, policies, 1),          CJ("precision", CJ_PSTR, precision, 1),
  CJ("empty_rows", CJ_PSTR, empty_rows, 1),    CJ("backward", CJ_INT, lim.backward, 0),
  CJ("shapes", CJ_U32, lim.shapes, 0),          CJ("shape_buckets", CJ_INT, lim.nbuckets, 0),
  CJ("alibi_lse", CJ_PSTR, alibi_lse, 1),
  CJ("kv_formats", CJ_U32, lim.kv_formats, 0), CJ("q_formats", CJ_U32, lim.q_formats, 0),
  CJ("quant_only", CJ_INT, lim.quant_only, 0),
  CJ("store_only", CJ_INT, lim.store_only, 0), CJ("nstore", CJ_INT, lim.nstore, 0),   /* quantize-on-store */
  CJ("store_q0", CJ_U32, lim.store_q[0], 0),   CJ("store_q1", CJ_U32, lim.store_q[1], 0),
  CJ("store_q2", CJ_U32, lim.store_q[2], 0),   CJ("store_q3", CJ_U32, lim.store_q[3], 0),
};
#undef CJ

static json_object *cj_get(const ac_campaign_opts *o, const cj_field *f)
{
  const char *at = (const char *)o + f->off;
  char buf[32];
  switch (f->type) {
  case CJ_PSTR: return *(const char *const *)at ? json_object_new_string(*(const char *const *)at) : NULL;
  case CJ_ARR: return json_object_new_string(at);
  case CJ_U64:   /* a string: JSON numbers lose 64-bit seeds */
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)*(const uint64_t *)at);
    return json_object_new_string(buf);
  case CJ_INT: return json_object_new_int(*(const int *)at);
  case CJ_I64: return json_object_new_int64(*(const int64_t *)at);
  default: return json_object_new_int64(*(const uint32_t *)at);
  }
}

/* Strings read from campaign.json live as long as the process (the options point at them). */
static char *cj_strings[16];
static int cj_nstrings;

static void cj_free_strings(void)
{
  for (int i = 0; i < cj_nstrings; i++) free(cj_strings[i]);
  cj_nstrings = 0;
}

static char *cj_strdup(const char *s)
{
  char *d = ac_xstrdup(s);
  if (cj_nstrings == 0) atexit(cj_free_strings);
  if (cj_nstrings < (int)(sizeof cj_strings / sizeof cj_strings[0])) cj_strings[cj_nstrings++] = d;
  return d;
}

static void cj_set(ac_campaign_opts *o, const cj_field *f, json_object *v)
{
  char *at = (char *)o + f->off;
  switch (f->type) {
  case CJ_PSTR:
    if (!*(const char **)at) *(char **)at = cj_strdup(json_object_get_string(v));
    break;
  case CJ_ARR:
    if (!f->keep || !at[0]) snprintf(at, f->size, "%s", json_object_get_string(v));
    break;
  case CJ_U64: *(uint64_t *)at = strtoull(json_object_get_string(v), NULL, 10); break;
  case CJ_INT: *(int *)at = json_object_get_int(v); break;
  case CJ_I64: *(int64_t *)at = json_object_get_int64(v); break;
  default: *(uint32_t *)at = (uint32_t)json_object_get_int64(v);
  }
}

int ac_cp_save_campaign_json(ctx_t *c, ac_err *e)
{
  json_object *r = json_object_new_object();
  for (size_t i = 0; i < sizeof cj_fields / sizeof cj_fields[0]; i++) {
    json_object *v = cj_get(c->o, &cj_fields[i]);
    if (v) json_object_object_add(r, cj_fields[i].name, v);
  }
  json_object_object_add(r, "tool_version", json_object_new_string(PACKAGE_VERSION));
  const char *t = json_str(r);
  char p[4096];
  ac_cp_path_of(p, sizeof p, c->o->out_dir, "campaign.json");
  int rc = ac_write_file_atomic(p, t, strlen(t), e);
  json_object_put(r);
  return rc;
}

/* --resume: the campaign's identity (kernel, seed, shard, families, limits) comes from campaign.json. */
int ac_cp_load_campaign_json(ac_campaign_opts *o, ac_err *e)
{
  char p[4096];
  ac_cp_path_of(p, sizeof p, o->out_dir, "campaign.json");
  json_object *r = json_object_from_file(p), *v;
  if (!r) return ac_err_set(e, "%s: no campaign to resume (missing or unreadable campaign.json)", p);
  o->lim.features = 0;   /* a campaign.json without "features" drew no variant family */
  o->lim.backward = 0;   /* nor judged a backward without "backward" */
  for (size_t i = 0; i < sizeof cj_fields / sizeof cj_fields[0]; i++)
    if (json_object_object_get_ex(r, cj_fields[i].name, &v)) cj_set(o, &cj_fields[i], v);
  o->dtypes_given = 1;
  json_object_put(r);
  return 0;
}


void ac_cp_campaign_json_counts(ctx_t *c)
{
  char p[4096];
  ac_err e;
  ac_cp_path_of(p, sizeof p, c->o->out_dir, "campaign.json");
  json_object *r = json_object_from_file(p);
  if (!r) return;
  json_object_object_add(r, "findings", json_object_new_int64(c->sh->findings));
  json_object_object_add(r, "findings_fail", json_object_new_int64(c->sh->findings_fail));
  json_object_object_add(r, "defects", json_object_new_int64(c->sh->defects));
  json_object_object_add(r, "defects_fail", json_object_new_int64(c->sh->defects_fail));
  const char *t = json_str(r);
  ac_write_file_atomic(p, t, strlen(t), &e);
  json_object_put(r);
}
