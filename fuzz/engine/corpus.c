/* corpus.c: the best cases of campaigns, kept as files whose names carry their err/E
 * (s<score>_<family>_<hash>.npz) so that ranking them needs no reading; they seed the elite
 * pool of later runs. */
#include "config.h"
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "fuzz.h"

void ac_corpus_save(const char *dir, const ac_case *cs, const char *family, double score)
{
  char p[4400];
  snprintf(p, sizeof p, "%s/s%012.4f_%s_%016llx.npz", dir, score > 9.9e6 ? 9.9e6 : score, family,
           (unsigned long long)ac_case_hash(cs));
  ac_err e;
  ac_case_write(cs, p, &e);
}

typedef struct {
  char name[512];
  double score;
} centry;

static int cmp_centry(const void *a, const void *b)
{
  const centry *x = a, *y = b;
  return x->score < y->score ? 1 : x->score > y->score ? -1 : strcmp(x->name, y->name);
}

static centry *corpus_list(const char *dir, int *n)
{
  *n = 0;
  DIR *d = opendir(dir);
  if (!d) return NULL;
  int cap = 64;
  centry *v = ac_xmalloc(sizeof *v * (size_t)cap);
  struct dirent *de;
  while ((de = readdir(d))) {
    size_t l = strlen(de->d_name);
    if (de->d_name[0] != 's' || l < 5 || strcmp(de->d_name + l - 4, ".npz") || l >= sizeof v->name) continue;
    if (*n == cap) v = ac_xrealloc(v, sizeof *v * (size_t)(cap *= 2));
    snprintf(v[*n].name, sizeof v[*n].name, "%s", de->d_name);
    v[*n].score = strtod(de->d_name + 1, NULL);
    (*n)++;
  }
  closedir(d);
  qsort(v, (size_t)*n, sizeof *v, cmp_centry);
  return v;
}

int ac_corpus_load(const char *dir, ac_pool *pool, const ac_gen_limits *l, int max)
{
  int n, loaded = 0;
  centry *v = corpus_list(dir, &n);
  for (int i = 0; i < n && loaded < max; i++) {
    char p[4400], fam[64] = "corpus";
    snprintf(p, sizeof p, "%s/%s", dir, v[i].name);
    const char *u = strchr(v[i].name, '_'), *u2 = strrchr(v[i].name, '_');
    if (u && u2 > u && (size_t)(u2 - u - 1) < sizeof fam) {
      memcpy(fam, u + 1, (size_t)(u2 - u - 1));
      fam[u2 - u - 1] = 0;
    }
    ac_case cs;
    ac_err e;
    if (ac_case_read(&cs, p, &e)) continue;
    if ((l->dtypes & (1u << cs.p.dtype)) && (l->masks & (1u << cs.p.mask)) && !(cs.p.f.used & ~l->features) &&
        (cs.lay || !l->no_dense) && (ac_problem_quantized(&cs.p) ? l->kv_formats != 0 : !l->quant_only))
      loaded += ac_pool_offer(pool, &cs, fam, v[i].score);
    ac_case_free(&cs);
  }
  free(v);
  return loaded;
}

void ac_corpus_prune(const char *dir, int keep)
{
  int n;
  centry *v = corpus_list(dir, &n);
  for (int i = keep; i < n; i++) {
    char p[4400];
    snprintf(p, sizeof p, "%s/%s", dir, v[i].name);
    unlink(p);
  }
  free(v);
}
