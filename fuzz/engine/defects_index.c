/* defects_index.c: DIR/defects.json, the index of a directory's defects: each with its id, kernel,
 * fingerprint (failing in every way one of its findings does), description, findings, families,
 * its best (smallest) case and repro.sh, and when it was first found. The findings' report.json
 * "defect" members are what it is built from (ac_defects_read); an assignment reads it and writes
 * it back with its finding added, so that each costs the defects, not the findings. */
#include "config.h"
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz.h"

#define INDEX_MAX (64u << 20)   /* the largest index read */

static json_object *info_json(const ac_defect_info *d)
{
  json_object *o = json_object_new_object(), *fams = json_object_new_array();
  char p[600], words[1200], key[700];
  json_object_object_add(o, "id", json_object_new_int(d->id));
  ac_defect_key(&d->fp, key, sizeof key);
  json_object_object_add(o, "key", json_object_new_string(key));
  json_object_object_add(o, "kind", json_object_new_string(ac_verdict_name((ac_verdict_kind)d->fp.mode.kind)));
  json_object_object_add(o, "policy", json_object_new_string(d->fail ? "fail" : "warn"));
  ac_defect_words(&d->fp, d->rep_size, words, sizeof words);
  json_object_object_add(o, "description", json_object_new_string(words));
  json_object_object_add(o, "findings", json_object_new_int(d->nfind));
  for (const char *s = d->families; *s;) {
    size_t n = strcspn(s, ",");
    json_object_array_add(fams, json_object_new_string_len(s, (int)n));
    s += n + (s[n] == ',');
  }
  json_object_object_add(o, "families", fams);
  json_object_object_add(o, "finding", json_object_new_string(d->rep));
  snprintf(p, sizeof p, "findings/%s/%s", d->rep, d->rep_file);
  json_object_object_add(o, "case", json_object_new_string(p));
  json_object_object_add(o, "size", json_object_new_string(d->rep_size));
  json_object_object_add(o, "elements", json_object_new_int64(d->rep_elems));
  if (d->rep_derived) json_object_object_add(o, "case_derived", json_object_new_boolean(1));
  if (d->overflowed) json_object_object_add(o, "overflow_of_value", json_object_new_boolean(1));
  snprintf(p, sizeof p, "findings/%s/repro.sh", d->rep);
  json_object_object_add(o, "repro", json_object_new_string(p));
  json_object_object_add(o, "first_found_s", json_object_new_double(d->first_s));
  json_object_object_add(o, "finding_kind", json_object_new_string(ac_verdict_name(d->rep_kind)));
  json_object_object_add(o, "kernel_spec", json_object_new_string(d->kernel));
  json_object_object_add(o, "fingerprint", ac_defect_fp_json(&d->fp));
  return o;
}

static const char *str(json_object *o, const char *k)
{
  json_object *v;
  return json_object_object_get_ex(o, k, &v) && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static int info_parse(json_object *o, ac_defect_info *d)
{
  memset(d, 0, sizeof *d);
  json_object *v, *fp, *fams;
  const char *rep = str(o, "finding"), *cs = str(o, "case"), *kernel = str(o, "kernel_spec"), *kind = str(o, "finding_kind");
  if (!json_object_object_get_ex(o, "id", &v) || (d->id = json_object_get_int(v)) <= 0 || !rep || !cs || !kernel ||
      !kind || ac_verdict_parse(kind, &d->rep_kind) || !json_object_object_get_ex(o, "fingerprint", &fp) ||
      ac_defect_fp_parse(fp, &d->fp) || !json_object_object_get_ex(o, "families", &fams) ||
      !json_object_is_type(fams, json_type_array))
    return -1;
  snprintf(d->rep, sizeof d->rep, "%s", rep);
  snprintf(d->rep_file, sizeof d->rep_file, "%s", strrchr(cs, '/') ? strrchr(cs, '/') + 1 : cs);
  snprintf(d->kernel, sizeof d->kernel, "%s", kernel);
  snprintf(d->rep_size, sizeof d->rep_size, "%s", str(o, "size") ? str(o, "size") : "");
  d->rep_elems = json_object_object_get_ex(o, "elements", &v) ? json_object_get_int64(v) : -1;
  d->rep_derived = json_object_object_get_ex(o, "case_derived", &v) && json_object_get_boolean(v);
  d->overflowed = json_object_object_get_ex(o, "overflow_of_value", &v) && json_object_get_boolean(v);
  d->first_s = json_object_object_get_ex(o, "first_found_s", &v) ? json_object_get_double(v) : -1;
  d->nfind = json_object_object_get_ex(o, "findings", &v) ? json_object_get_int(v) : 0;
  d->fail = str(o, "policy") && !strcmp(str(o, "policy"), "fail");
  for (size_t i = 0; i < json_object_array_length(fams); i++) {
    const char *f = json_object_get_string(json_object_array_get_idx(fams, i));
    size_t at = strlen(d->families);
    if (f && at + strlen(f) + 2 < sizeof d->families)
      snprintf(d->families + at, sizeof d->families - at, "%s%s", at ? "," : "", f), d->nfam++;
  }
  return 0;
}

int ac_defects_index_write(const char *dir, const ac_defect_list *l, ac_err *e)
{
  json_object *root = json_object_new_object(), *arr = json_object_new_array();
  json_object_object_add(root, "schema", json_object_new_int(1));
  for (int i = 0; i < l->n; i++) json_object_array_add(arr, info_json(&l->v[i]));
  json_object_object_add(root, "defects", arr);
  json_object_object_add(root, "unassigned_findings", json_object_new_int(l->unassigned));
  const char *t = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
  char path[4200];
  snprintf(path, sizeof path, "%s/defects.json", dir);
  int rc = ac_write_file_atomic(path, t, strlen(t), e);
  json_object_put(root);
  return rc;
}

int ac_defects_index_read(const char *dir, ac_defect_list *l)
{
  memset(l, 0, sizeof *l);
  ac_err e;
  char *txt = ac_data_read(dir, "defects.json", INDEX_MAX, NULL, &e);
  json_object *root = txt ? json_tokener_parse(txt) : NULL, *arr, *v;
  free(txt);
  int ok = root && json_object_object_get_ex(root, "defects", &arr) && json_object_is_type(arr, json_type_array);
  for (size_t i = 0; ok && i < json_object_array_length(arr); i++) {
    if (l->n == l->cap) l->v = ac_xrealloc(l->v, sizeof *l->v * (size_t)(l->cap = l->cap ? 2 * l->cap : 16));
    ok = info_parse(json_object_array_get_idx(arr, i), &l->v[l->n++]) == 0;
  }
  if (ok && json_object_object_get_ex(root, "unassigned_findings", &v)) l->unassigned = json_object_get_int(v);
  json_object_put(root);
  if (!ok) ac_defects_free(l);
  return ok ? 0 : -1;
}

int ac_defects_rebuild(const char *dir, ac_defect_list *out, ac_err *e)
{
  ac_defect_list l;
  if (ac_defects_read(dir, &l, e)) return -1;
  int rc = ac_defects_index_write(dir, &l, e);
  if (out) *out = l;
  else ac_defects_free(&l);
  return rc;
}
