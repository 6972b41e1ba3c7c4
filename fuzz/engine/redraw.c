/* redraw.c: a case drawn again exactly from the journal's "d" records (journal.h). The search
 * decides each case from every case before it (the elite pool, the family shares), so a case
 * number that was drawn but not recorded as evaluated (its finding could not be stored, a kill)
 * cannot be decided again; its record can: a fresh draw is a function of (family, seed, case
 * number), a mutation one of (parent case, step, seed, case number), and the parent is drawn
 * again from its own record, back to a fresh draw or a corpus case kept in DIR/seeds. */
#include "config.h"
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "campaign.h"

#define MUTATION_STREAM 0x6d75746174696f6eULL

int ac_cp_fresh(ctx_t *c, const ac_family *f, const ac_draw_rec *d, ac_case *cs, ac_err *e)
{
  uint64_t seed = d->attempt ? ac_hash2(c->seed_eff, (uint64_t)d->attempt) : c->seed_eff;
  return ac_generate(f, seed, d->k * c->o->shard_n + c->o->shard_i, &c->o->lim, cs, e);
}

int ac_cp_mutant(ctx_t *c, const ac_case *parent, const ac_draw_rec *d, ac_case *cs, char *desc, size_t nd, ac_err *e)
{
  int64_t gk = d->k * c->o->shard_n + c->o->shard_i;
  ac_rng r;
  uint64_t stream = ac_hash2(c->seed_eff, MUTATION_STREAM);
  ac_rng_init(&r, d->attempt ? ac_hash2(stream, (uint64_t)d->attempt) : stream, (uint64_t)gk);
  if (ac_mutate(parent, d->sigma, &r, &c->o->lim, cs, desc, nd, e)) return -1;
  cs->case_index = gk;
  char *pj = cs->params_json;
  ac_params pb;
  ac_params_init(&pb);
  ac_params_str(&pb, "family", d->family);
  ac_params_str(&pb, "mutation", desc);
  ac_params_int(&pb, "index", gk);
  cs->params_json = ac_params_finish(&pb);
  free(pj);
  if (snprintf(cs->generator, sizeof cs->generator, "%s+mut", d->family) >= (int)sizeof cs->generator)
    snprintf(cs->generator, sizeof cs->generator, "mutant");
  return 0;
}

static void seed_path(const ctx_t *c, uint64_t h, char *buf, size_t n)
{
  snprintf(buf, n, "%s/seeds/%016" PRIx64 ".npz", c->o->out_dir, h);
}

/* The case a record's chain starts from: a family's fresh draw, or the seed a mutation takes. */
static int chain_root(ctx_t *c, const ac_draw_rec *d, ac_case *cs, ac_err *e)
{
  if (d->how == 'f') {
    const ac_family *f = ac_family_find(d->family);
    if (!f) return ac_err_set(e, "no family '%s' in this attncheck", d->family);
    return ac_cp_fresh(c, f, d, cs, e);
  }
  char p[4400];
  seed_path(c, d->seed, p, sizeof p);
  if (ac_case_read(cs, p, e)) return -1;
  if (ac_case_hash(cs) == d->seed) return 0;
  ac_case_free(cs);
  return ac_err_set(e, "%s is not the corpus case it was", p);
}

int ac_cp_redraw(ctx_t *c, int64_t k, ac_case *cs, ac_draw_rec *out, char *desc, size_t nd, ac_err *e)
{
  const ac_draw_rec *d = ac_draw_find(c->draws, c->ndraws, k);
  if (!d) return 0;
  /* the chain k, parent, grandparent, ... back to a fresh draw or a seed */
  int64_t n = 0, cap = 16;
  const ac_draw_rec **ch = ac_xmalloc(sizeof *ch * (size_t)cap);
  for (const ac_draw_rec *x = d; x;) {
    if (n == cap) ch = ac_xrealloc(ch, sizeof *ch * (size_t)(cap *= 2));
    ch[n++] = x;
    if (x->how != 'm') break;
    const ac_draw_rec *p = ac_draw_find(c->draws, c->ndraws, x->parent);
    if (!p || n > c->ndraws) {
      free(ch);
      return ac_err_set(e, "the record of its ancestor case %lld is missing", (long long)x->parent);
    }
    x = p;
  }
  ac_case cur;
  int rc = chain_root(c, ch[n - 1], &cur, e);
  if (rc == 0 && ch[n - 1]->how == 'f') snprintf(desc, nd, "%s", "");
  for (int64_t i = n - 1; rc == 0 && i >= 0; i--) {
    if (ch[i]->how != 'f') {
      ac_case child;
      rc = ac_cp_mutant(c, &cur, ch[i], &child, desc, nd, e);
      ac_case_free(&cur);
      if (rc) break;
      cur = child;
    }
    if (ac_case_hash(&cur) != ch[i]->hash) {
      rc = ac_err_set(e, "case %lld comes out differently (hash %016" PRIx64 ", recorded %016" PRIx64 ")",
                      (long long)ch[i]->k, ac_case_hash(&cur), ch[i]->hash);
      ac_case_free(&cur);
    }
  }
  free(ch);
  if (rc) return -1;
  *cs = cur;
  *out = *d;
  return 1;
}

/* DIR/seeds/HASH.npz for corpus case cs: a link to its corpus file when there is one (no space
 * taken), else a copy. 0 or -1. */
static int keep_seed(ctx_t *c, const ac_case *cs, uint64_t h)
{
  char p[4400], dir[4200], tmp[4500];
  struct stat st;
  seed_path(c, h, p, sizeof p);
  if (lstat(p, &st) == 0) return S_ISREG(st.st_mode) ? 0 : -1;
  snprintf(dir, sizeof dir, "%s/seeds", c->o->out_dir);
  ac_err e;
  if (ac_mkdir_p(dir, &e)) return -1;
  char suffix[32];
  snprintf(suffix, sizeof suffix, "_%016" PRIx64 ".npz", h);
  DIR *cd = opendir(c->corpus);
  struct dirent *de;
  int rc = -1;
  while (cd && rc && (de = readdir(cd))) {
    size_t l = strlen(de->d_name), sl = strlen(suffix);
    if (de->d_name[0] != 's' || l <= sl || strcmp(de->d_name + l - sl, suffix)) continue;
    snprintf(tmp, sizeof tmp, "%s/%s", c->corpus, de->d_name);
    rc = link(tmp, p) == 0 || errno == EEXIST ? 0 : -1;
  }
  if (cd) closedir(cd);
  if (rc == 0) return 0;
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld", p, (long)getpid());
  if (ac_case_write(cs, tmp, &e) == 0 && rename(tmp, p) == 0) return 0;
  unlink(tmp);
  return -1;
}

void ac_cp_keep_seeds(ctx_t *c)
{
  ac_pool *pl = &c->pool;
  for (int i = 0; i < pl->n;) {
    if (pl->e[i].from >= 0 || keep_seed(c, &pl->e[i].c, pl->e[i].hash) == 0) {
      i++;
      continue;
    }
    /* a case whose source cannot be kept is no parent: its children could not be drawn again */
    ac_case_free(&pl->e[i].c);
    pl->e[i] = pl->e[--pl->n];
  }
}
