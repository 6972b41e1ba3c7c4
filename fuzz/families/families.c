/* families.c: the table of generator families and generating one case from (family, seed, index). */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz.h"

static const ac_family table[] = {
  {"normal", "Q, K, V ~ N(0,1): the baseline", "poor exp approximation; any defect on plain inputs", ac_gen_normal, 0, 0, NULL},
  {"uniform", "Q, K, V ~ U(-a,a) with a random per tensor", "baseline", ac_gen_uniform, 0, 0, NULL},
  {"small_int", "sparse small integers (exact products, exact scores)", "causal off-by-one; mask alignment; ties", ac_gen_small_int, 0, 0, NULL},
  {"large_mag", "logits up to the overflow edge of the dtype (fp16 65504 included)", "no max-subtraction; hard-coded logit bound; fp16 score overflow", ac_gen_large_mag, 0, 0, NULL},
  {"neg_logits", "every logit very negative (below -5e4)", "finite running-max sentinel", ac_gen_neg_logits, 0, 0, NULL},
  {"sentinel", "masked keys scoring up to the working format's top above the visible ones; visible maxima where e^(s - sentinel) underflows",
   "finite mask value (-1e4, -65504); finite running-max sentinel", ac_gen_sentinel, 0, 0, NULL},
  {"large_v", "V toward the dtype's range with near-uniform or peaked weights", "fp16 accumulator overflow", ac_gen_large_v, 0, 0, NULL},
  {"tiny", "tiny magnitudes and subnormals in Q, K, V", "low-precision underflow; flush to zero", ac_gen_tiny, 0, 0, NULL},
  {"zero_q", "Q = 0 (all rows or some): uniform weights", "equal logits; rescale", ac_gen_zero_q, 0, 0, NULL},
  {"zero_k", "K = 0 (all keys or some)", "equal logits; ties", ac_gen_zero_k, 0, 0, NULL},
  {"ties", "equal keys, repeated maxima, long T in low precision", "P rounded without renormalizing; ties", ac_gen_ties, 0, 0, NULL},
  {"dominant", "one dominant key per row (peaked rows) at first/last/tile-edge/random position", "low-precision underflow; fp16 accumulator", ac_gen_dominant, 0, 0, NULL},
  {"late_max", "scores increase along the keys: the running max changes in every tile", "missing/wrong online rescale", ac_gen_late_max, 0, 0, NULL},
  {"outlier", "massive-activation outlier rows (tokens) and channels", "fp16 score overflow; rescale; accumulator range", ac_gen_outlier, 0, 0, NULL},
  {"v_cancel", "V in +/- pairs over tied keys: o ~ 0 with large R", "accumulation errors hidden by cancellation", ac_gen_v_cancel, 0, 0, NULL},
  {"masked_rows", "fully masked rows: tq > tk bottom-right, leading masked blocks", "fully masked rows (NaN, stale values, finite LSE)", ac_gen_masked_rows, 0, 0, NULL},
  {"nonfinite", "NaN / inf in masked and in visible positions", "masked NaN leak; non-finite handling", ac_gen_nonfinite, AC_FAM_NONFINITE, 0, NULL},
  {"tile_edge", "T = 2^k +/- 1, multiples of 16/32/64/128 +/- 1, T below a tile", "tail tile; out-of-bounds reads", ac_gen_tile_edge, 0, 0, NULL},
  {"tq_ne_tk", "tq != tk both ways with causal masks", "causal off-by-one; wrong mask alignment", ac_gen_tq_ne_tk, 0, 0, NULL},
  {"head_dim", "odd and large head dims, dv != dk", "hard-coded head dim / scale; dv != dk", ac_gen_head_dim, 0, 0, NULL},
  {"gqa", "GQA / MQA ratios with distinct data per kv head", "GQA indexing", ac_gen_gqa, 0, 0, NULL},
  {"per_head", "distinct distributions per batch and head", "head/batch mix-up; strides swapped", ac_gen_per_head, 0, 0, NULL},
  {"strided", "strided layouts: padded rows, BSHD, heads-major", "strides; unwritten or out-of-bounds output", ac_gen_strided, 0, 0, NULL},
  {"long_t", "long T (up to the campaign's max), every score pattern at the edges of blocks of 64-4096 keys; oracle on a row sample",
   "fp16 accumulators at long T; rescale at block and split boundaries; ties and sentinels at long T", ac_gen_long_t, AC_FAM_COSTLY, 0, NULL},
  {"split_kv", "decode rows against 2-16 splits of 64-2048 keys: a later split's maximum far above the first's, the first "
   "far above the rest, a staircase or equal maxima over the splits, V per split; sinks at the rows' level",
   "split-KV merge relative to one split's maximum; partial outputs merged with wrong weights; a sink added per split",
   ac_gen_split_kv, AC_FAM_COSTLY, 0, NULL},
  {"scale", "explicit scales: 0, negative, tiny, large, 1/8 with dk != 64", "hard-coded scale", ac_gen_scale, 0, 0, NULL},
  {"mixed", "random shape, per-tensor band/int/normal values, layouts, scales", "broad coverage", ac_gen_mixed, 0, 0, NULL},
  {"index_overflow", "the largest tensors --max-elems allows, past 2^31 elements when it permits (GPU)",
   "32-bit index overflow", ac_gen_index_overflow, AC_FAM_COSTLY, 0, NULL},
  /* attention variants (src/core/vgen.c): drawn only for kernels that declare the features */
  {"window", "sliding windows of width 0, 1, tile-1, tile, tile+1, > T or unbounded on either side, both alignments",
   "window off-by-one at tile edges; wrong window alignment (top-left vs bottom-right); tiles skipped or kept wrongly; "
   "rows the window empties", ac_gen_window, 0, AC_FEAT_WINDOW, NULL},
  {"softcap", "softcap c tanh(s/c), c from 0.5 to 50, raw scores from below the cap to far past saturation (ties at +-c)",
   "cap after the max or before the scale; tanh overflow or sign loss; ties of saturated scores", ac_gen_softcap, 0,
   AC_FEAT_SOFTCAP, NULL},
  {"alibi", "ALiBi slopes up to 64 per head or per (batch, head) over long T, decode and prefill",
   "distance from the wrong corner; slope of the wrong head or batch; slope x distance overflow; far keys underflowing",
   ac_gen_alibi, 0, AC_FEAT_ALIBI, NULL},
  {"bias", "bias with -inf blocks, whole -inf rows, NaN under hidden keys, sentinels -1e4/-65504/-1e9/-FLT_MAX, ramps; "
   "other bias dtypes; broadcast", "bias after the max; -inf rows to NaN; NaN leak from hidden keys; sentinel overflow "
   "in conversion; broadcast strides", ac_gen_bias, 0, AC_FEAT_BIAS, NULL},
  {"bool_mask", "boolean masks random, banded, emptying the middle rows, sparse; per (batch, head) or broadcast",
   "wrong all-masked tile test; mask strides or broadcast; rows emptied by the mask", ac_gen_bool_mask, 0,
   AC_FEAT_BOOL_MASK, NULL},
  {"sinks", "attention sinks normal, dominant (20) and vanishing (-60), with rows that see no key",
   "sink left out of the denominator or LSE, added per tile or twice; sink exponent overflow; empty rows ignoring it",
   ac_gen_sinks, 0, AC_FEAT_SINKS, NULL},
  {"dropout", "dropout with the kernel's own keep-mask: p = 0.17, 0.5, 0.9, 1 - 2^-14, 0 and random; several heads and "
   "batches; with a window, softcap, ALiBi or sinks", "1/(1-p) left out, doubled or in the row sum; the mask before the "
   "normalization; the mask of the wrong head or row; a mask repeated across heads, batches or tiles; the wrong kept "
   "fraction", ac_gen_dropout, 0, AC_FEAT_DROPOUT, NULL},
  {"descale", "Q, K, V descales per (batch, kv head): moderate, tiny (2^-12) and huge (2^6)",
   "descale of the wrong tensor or head; applied after the max; left out of V or the LSE; overflow it causes",
   ac_gen_descale, 0, AC_FEAT_DESCALE, ac_gen_descale_usable},
  {"mixed_dtypes", "per-tensor dtypes (binary32 Q and O with f16/bf16 K and V; fp8 Q, K, V with a bf16, f16 or f32 O) "
   "with values at each format's extremes: largest finite, subnormals, zeros",
   "K or V decoded with the wrong dtype; O written in the compute dtype; input range checks done in the wrong format",
   ac_gen_mixed_dtypes, 0, AC_FEAT_MIXED_DTYPES, ac_gen_mixed_dtypes_usable},
  {"variant_mix", "production combinations: window + sinks (gpt-oss), softcap + window (Gemma 2), ALiBi + bias + mask, ...",
   "variants right alone and wrong together: order of cap, window and bias; sinks on windowed tiles; rows emptied by "
   "window and mask together", ac_gen_variant_mix, 0, 0, ac_gen_variant_mix_usable},
  /* serving layouts (gen_layouts.c): drawn only for kernels that declare them */
  {"varlen_mix", "varlen batches: many one-token sequences, one long among short, zero lengths, tile-edge lengths",
   "cu_seqlens off by one; a neighbour's keys; zero-length sequences", ac_gen_varlen_mix, 0, AC_FEAT_VARLEN, NULL},
  {"page_table", "paged caches: page sizes 1, 16, 256 and non-powers of two; shuffled, shared-prefix, fragmented pages",
   "last partial page read whole; block-table row of the wrong sequence; page count for cache_seqlens", ac_gen_page_table,
   0, AC_FEAT_PAGED, NULL},
  {"decode", "one query per sequence against long paged caches (up to the campaign's max T), row-sampled",
   "cache_seqlens ignored; page arithmetic at long caches; split reductions", ac_gen_decode, AC_FAM_COSTLY, AC_FEAT_PAGED,
   NULL},
  /* quantized K and V (gen_quant.c, docs/quantized.md): drawn only for kernels that declare formats */
  {"quant_blocks", "quantized K and V with block adversaries: an outlier that zeroes the rest of its block, all-zero "
   "blocks (scale 0), subnormal scales, values on .5 ties of the rounding, q4_0's asymmetric range",
   "codes read without their scale, the neighbouring block's scale, nibble halves swapped, q4_0's -8 dropped, zero "
   "points with the wrong sign", ac_gen_quant_blocks, 0, 0, ac_gen_quant_usable},
  {"quant_nonfinite", "quantized K and V whose block scales overflowed to inf, or hold NaN, and fp8 NaN codes",
   "NaN inside a block not propagated; inf scales taken as finite", ac_gen_quant_nonfinite, AC_FAM_NONFINITE, 0,
   ac_gen_quant_usable},
};

const ac_family *ac_families(int *n)
{
  *n = (int)(sizeof table / sizeof table[0]);
  return table;
}

const ac_family *ac_family_find(const char *name)
{
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (!strcmp(table[i].name, name)) return &table[i];
  return NULL;
}

/* The shapes the families named for one draw in every case (ac_gen_conform would take them away). */
static uint32_t shapes_needed(const ac_family *f)
{
  static const struct {
    const char *name;
    uint32_t shapes;
  } need[] = {{"gqa", AC_SHAPE_GQA}, {"tq_ne_tk", AC_SHAPE_TQ_NE_TK}, {"scale", AC_SHAPE_SCALE}};
  for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
    if (!strcmp(f->name, need[i].name)) return need[i].shapes;
  return 0;
}

int ac_family_usable(const ac_family *f, const ac_gen_limits *l)
{
  if (f->feats & ~l->features) return 0;
  if (shapes_needed(f) & ~l->shapes) return 0;
  if (l->nbuckets && !strcmp(f->name, "index_overflow")) return 0; /* its point is a size no bucket has */
  if (l->no_dense && !(f->feats & AC_FEAT_LAYOUTS)) return 0;   /* its cases are dense */
  return !f->usable || f->usable(l);
}

int ac_family_parse_list(const char *list, int *idx, int *n, int max, ac_err *e)
{
  *n = 0;
  char *dup = ac_xstrdup(list), *save = NULL;
  for (char *tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    const ac_family *f = ac_family_find(tok);
    if (!f) {
      ac_err_set(e, "unknown family '%s' (see attncheck fuzz --list-families)", tok);
      free(dup);
      return -1;
    }
    if (*n < max) idx[(*n)++] = (int)(f - table);
  }
  free(dup);
  if (*n == 0) return ac_err_set(e, "empty family list");
  return 0;
}

/* The limits of the case ac_generate is drawing (ac_gen_alloc conforms its shape to them). */
static _Thread_local const ac_gen_limits *gen_limits;

int ac_gen_alloc(ac_case *c, ac_err *e)
{
  if (gen_limits) ac_gen_conform(&c->p, gen_limits);
  if (ac_problem_validate(&c->p, ac_mem_cap(), e)) return -1;
  return ac_case_alloc(c, e);
}

ac_counts ac_case_counts(const ac_case *c)
{
  ac_counts n;
  ac_err e;
  if (ac_problem_counts(&c->p, &n, &e)) {
    fprintf(stderr, "attncheck: internal error: %s\n", e.msg);
    abort();
  }
  return n;
}

void ac_fill_qkv(ac_case *c, ac_rng *r, const ac_valdist *q, const ac_valdist *k, const ac_valdist *v)
{
  ac_counts n = ac_case_counts(c);
  if (q) ac_fill(r, ac_tensor_dtype(&c->p, 'q'), c->q, (size_t)n.q, q);
  if (k) ac_fill(r, ac_tensor_dtype(&c->p, 'k'), c->k, (size_t)n.k, k);
  if (v) ac_fill(r, ac_tensor_dtype(&c->p, 'v'), c->v, (size_t)n.v, v);
}

static uint64_t name_hash(const char *s)
{
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

/* One case in eight of every family (but "scale", which draws its own) is re-expressed with the
 * opposite scale and negated keys: the same scores, from negative dot products times a
 * negative scale, so every score pattern of every family also meets kernels that track the
 * maximum, mask or clamp before applying the scale. The draw comes from a stream of its own:
 * the family's cases are otherwise unchanged. */
static void maybe_flip_scale(ac_case *c, uint64_t seed, int64_t index, const ac_family *f, const ac_gen_limits *l,
                             ac_params *pb)
{
  ac_problem *p = &c->p;
  ac_rng r;
  ac_rng_init(&r, ac_hash2(seed, 0x666c6970ull), (uint64_t)index);
  if (!strcmp(f->name, "scale") || ac_rng_below(&r, 8) || !(l->shapes & AC_SHAPE_SCALE)) return;
  if (ac_problem_quantized(p)) return;   /* its values are its codes' (the quant families) */
  double s = ac_problem_scale(p);
  if (!(s != 0) || !isfinite(s)) return;
  p->scale_is_default = 0;
  p->scale = -s;
  const ac_dtype kd = ac_tensor_dtype(p, 'k');
  uint64_t sign = 1ull << (8 * ac_dtype_size(kd) - 1);
  for (int64_t b = 0; b < p->batch; b++)
    for (int64_t h = 0; h < p->kv_heads; h++)
      for (int64_t j = 0; j < p->tk; j++)
        for (int64_t x = 0; x < p->dk; x++) {
          size_t i = ac_kidx(p, b, h, j, x);
          ac_store_bits(kd, c->k, i, ac_load_bits(kd, c->k, i) ^ sign);
        }
  ac_params_int(pb, "scale_flipped", 1);
}

int ac_generate(const ac_family *f, uint64_t seed, int64_t index, const ac_gen_limits *l, ac_case *c, ac_err *e)
{
  ac_case_init(c);
  ac_rng r;
  ac_rng_init(&r, ac_hash2(seed, name_hash(f->name)), (uint64_t)index);
  ac_params pb;
  ac_params_init(&pb);
  char sbuf[32];
  snprintf(sbuf, sizeof sbuf, "%llu", (unsigned long long)seed);
  ac_params_str(&pb, "family", f->name);
  ac_params_str(&pb, "seed", sbuf);
  ac_params_int(&pb, "index", index);
  ac_params_int(&pb, "lim_dtypes", l->dtypes);
  ac_params_int(&pb, "lim_masks", l->masks);
  ac_params_int(&pb, "lim_max_t", l->max_t);
  ac_params_int(&pb, "lim_max_elems", l->max_elems);
  ac_params_int(&pb, "lim_max_d", l->max_d);
  ac_params_int(&pb, "lim_flags", (l->no_strided ? 1 : 0) | (l->no_nonfinite ? 2 : 0));
  if (f->feats || f->usable) ac_params_int(&pb, "lim_features", l->features);
  if (l->shapes != AC_SHAPE_ALL) ac_params_int(&pb, "lim_shapes", l->shapes);
  gen_limits = l;
  int rc = f->draw(c, &r, l, &pb, e);
  gen_limits = NULL;
  if (rc) {
    ac_params_free(&pb);
    ac_case_free(c);
    memset(c, 0, sizeof *c);
    return -1;
  }
  maybe_flip_scale(c, seed, index, f, l, &pb);
  if (l->params_q_dtype) ac_fuzz_params_q_dtype(c, &pb);
  ac_fuzz_quantize(c, seed, index, l, &pb);
  if (l->nbuckets && !c->lay) ac_params_int(&pb, "bucket", ac_bucket_nearest(l, &c->p));
  ac_params_shape(&pb, &c->p);
  c->params_json = ac_params_finish(&pb);
  c->seed = seed;
  c->case_index = index;
  snprintf(c->generator, sizeof c->generator, "%s", f->name);
  snprintf(c->tool_version, sizeof c->tool_version, "%s", PACKAGE_VERSION);
  return 0;
}

const char *ac_fuzz_oracle_rows(const ac_case *c)
{
  /* Many rows: the oracle checks the first and last row of every (batch, head), the tile-edge
   * rows (i mod 16 in {0, 15}) and 16 random rows; defects confined to other rows are still
   * reached by the many cases of a campaign. Huge cases (more than 4096 rows): the first and
   * last rows of 16 (batch, head) pairs at both ends of the tensor and of 16 more drawn from
   * the case hash, as an explicit list. */
  const ac_problem *p = &c->p;
  int64_t bh = p->batch * p->heads, rows = bh * p->tq;
  if (rows <= 48) return NULL;
  if (rows <= 4096) return "edges+16";
  static char buf[8192];
  size_t n = 0;
  ac_rng r;
  ac_rng_init(&r, ac_case_hash(c), 0x726f7773);
  buf[0] = 0;
  for (int k = 0; k < 48 && n + 48 < sizeof buf; k++) {
    int64_t x = k < 16 ? k : k < 32 ? bh - 1 - (k - 16) : (int64_t)ac_rng_below(&r, (uint64_t)bh);
    if (x < 0 || x >= bh) continue;
    int64_t r0 = x * p->tq, r1 = x * p->tq + p->tq - 1;
    n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%lld", n ? "," : "", (long long)r0);
    if (r1 != r0) n += (size_t)snprintf(buf + n, sizeof buf - n, ",%lld", (long long)r1);
  }
  return buf;
}
