/* groups.c: a directory's findings in their defects, and those without one by mechanism (groups.h). */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz.h"
#include "groups.h"

static const char *str(json_object *o, const char *k)
{
  json_object *v;
  return o && json_object_object_get_ex(o, k, &v) && v ? json_object_get_string(v) : "";
}

/* The reason of the worst element from the report's mismatch text (what older reports keep). */
static const char *why_of_mismatch(const char *mm)
{
  if (!*mm) return "value";
  if (strstr(mm, "where exact is finite")) return "non-finite";
  if (strstr(mm, "empty row")) return "empty-row";
  return "wrong-non-finite";
}

/* The shape class of a stored size string ("B1 H2/1 tq1 tk65 dk8 dv8 f32 none"); its tq in *tq_out
 * (-1 when the string is not one). */
static void shape_of_size(const char *size, char *buf, size_t n, long long *tq_out)
{
  long long b, h, kvh, tq = -1, tk, dk, dv;
  char dt[32], mask[40];
  *tq_out = -1;
  if (sscanf(size, "B%lld H%lld/%lld tq%lld tk%lld dk%lld dv%lld %31s %39s", &b, &h, &kvh, &tq, &tk, &dk, &dv, dt,
             mask) == 9)
    ac_mechanism_shape_fmt(dt, mask, b, h, kvh, tq, tk, "", "", buf, n), *tq_out = tq;
  else
    snprintf(buf, n, "%s", size);
}

static void mech_read(json_object *js, ac_mech *m);

/* The mechanism of a finding's report.json; its strings escaped (report.json is someone else's text:
 * a merged shard's). */
void ac_mech_of(json_object *js, ac_mech *m)
{
  mech_read(js, m);
  ac_str_escape_inplace(m->kind, sizeof m->kind);
  ac_str_escape_inplace(m->what, sizeof m->what);
  ac_str_escape_inplace(m->row, sizeof m->row);
  ac_str_escape_inplace(m->shape, sizeof m->shape);
}

static void mech_read(json_object *js, ac_mech *m)
{
  memset(m, 0, sizeof *m);
  snprintf(m->kind, sizeof m->kind, "%s", str(js, "kind"));
  json_object *mo, *w, *dj, *id;
  if (json_object_object_get_ex(js, "defect", &dj) && json_object_object_get_ex(dj, "id", &id) &&
      json_object_is_type(id, json_type_int) && json_object_get_int(id) > 0)
    m->defect = json_object_get_int(id);
  m->pending = !m->defect && !strcmp(str(js, "minimize_state"), "pending");
  if (json_object_object_get_ex(js, "mechanism", &mo) && json_object_is_type(mo, json_type_object)) {
    const char *t = str(mo, "tensor");
    snprintf(m->what, sizeof m->what, "%s%s%s", t, *t ? " " : "", *t ? str(mo, "why") : "");
    snprintf(m->row, sizeof m->row, "%s", str(mo, "row"));
    snprintf(m->shape, sizeof m->shape, "%s", str(mo, "shape"));
    return;
  }
  ac_verdict_kind k = AC_V_FAIL;
  int elem = ac_verdict_parse(m->kind, &k) == 0 &&
             (k == AC_V_FAIL || k == AC_V_SUSPECT || k == AC_V_MASKED_LEAK || k == AC_V_WEAK_CLASS);
  if (elem && json_object_object_get_ex(js, "worst", &w))
    snprintf(m->what, sizeof m->what, "%s %s", str(w, "tensor"), why_of_mismatch(str(js, "mismatch")));
  json_object *mn;
  int minimized = json_object_object_get_ex(js, "minimized", &mn) && json_object_get_boolean(mn);
  long long tq;
  shape_of_size(str(js, minimized ? "minimized_size" : "size"), m->shape, sizeof m->shape, &tq);
  /* the position of the worst row as found; a minimized case of one row has it first */
  const char *pos = str(js, "position");
  snprintf(m->row, sizeof m->row, "%s", minimized && tq == 1 && strcmp(pos, "none") ? "first" : pos);
}

void ac_mech_desc(const ac_mech *m, char *buf, size_t n)
{
  snprintf(buf, n, "%s%srow %s, %s", m->what, *m->what ? ", " : "", m->row[0] ? m->row : "none", m->shape);
}

static int same(const ac_mech *a, const ac_mech *b)
{
  if (a->defect || b->defect) return a->defect == b->defect;
  return a->pending == b->pending && !strcmp(a->kind, b->kind) && !strcmp(a->what, b->what) && !strcmp(a->row, b->row) &&
         !strcmp(a->shape, b->shape);
}

int ac_mech_group(const ac_mech *m, int n, int *group)
{
  int ng = 0;
  for (int i = 0; i < n; i++) {
    group[i] = -1;
    for (int j = 0; j < i && group[i] < 0; j++)
      if (same(&m[i], &m[j])) group[i] = group[j];
    if (group[i] < 0) group[i] = ng++;
  }
  return ng;
}

void ac_defect_line(const ac_defect_info *d, char *buf, size_t n)
{
  char w[1200];
  ac_defect_words(&d->fp, d->rep_size, w, sizeof w);
  snprintf(buf, n, "%s %s", ac_verdict_name((ac_verdict_kind)d->fp.mode.kind), w);
  ac_str_escape_inplace(buf, n);   /* report.json is someone else's text: a merged shard's */
}

/* a before b in the order of reading */
static int before(const ac_defect_info *a, const ac_defect_info *b)
{
  return a->fail != b->fail ? a->fail > b->fail : a->id < b->id;
}

void ac_defects_order(const ac_defect_list *l, int *order)
{
  for (int i = 0; i < l->n; i++) {   /* insertion: a few defects */
    int j = i;
    for (; j > 0 && before(&l->v[i], &l->v[order[j - 1]]); j--) order[j] = order[j - 1];
    order[j] = i;
  }
}
