/* rng.h: seeded, splittable random streams (xoshiro256** seeded through splitmix64).
 * Stream (seed, k) is independent of every other k, so case k of a run with seed S
 * can be regenerated alone. */
#ifndef AC_RNG_H
#define AC_RNG_H
#include <stdint.h>

typedef struct { uint64_t s[4]; } ac_rng;

uint64_t ac_splitmix64(uint64_t *state);
/* Hash of two words (used for shard seeds: hash(S, I)). */
uint64_t ac_hash2(uint64_t a, uint64_t b);
void ac_rng_init(ac_rng *r, uint64_t seed, uint64_t stream);
uint64_t ac_rng_next(ac_rng *r);
/* Uniform in [0, 1) with 53 random bits. */
double ac_rng_uniform(ac_rng *r);
/* Uniform integer in [0, n), unbiased. n > 0. */
uint64_t ac_rng_below(ac_rng *r, uint64_t n);
/* Uniform integer in [lo, hi]. */
int64_t ac_rng_range(ac_rng *r, int64_t lo, int64_t hi);
/* Standard normal (Box-Muller on two uniforms; deterministic). */
double ac_rng_normal(ac_rng *r);
/* A derived stream: a fresh generator seeded from this one. */
void ac_rng_split(ac_rng *r, ac_rng *child);

#endif
