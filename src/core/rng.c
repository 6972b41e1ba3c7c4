/* rng.c: xoshiro256** streams seeded through splitmix64; stream (seed, k) stands alone. */
#include "config.h"
#include "rng.h"
#include <math.h>

static uint64_t mix64(uint64_t z)
{
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t ac_splitmix64(uint64_t *state)
{
  *state += 0x9e3779b97f4a7c15ULL;
  return mix64(*state);
}

/* mix64 is a bijection, so for a fixed a distinct b give distinct hashes. */
uint64_t ac_hash2(uint64_t a, uint64_t b)
{
  return mix64(mix64(a ^ 0x6a09e667f3bcc909ULL) ^ (b + 0xbb67ae8584caa73bULL));
}

void ac_rng_init(ac_rng *r, uint64_t seed, uint64_t stream)
{
  uint64_t sm = ac_hash2(seed, stream);
  for (int i = 0; i < 4; i++) r->s[i] = ac_splitmix64(&sm);
  /* Four consecutive splitmix64 outputs are never all zero (at most one input maps to 0). */
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t ac_rng_next(ac_rng *r)
{
  uint64_t *s = r->s;
  const uint64_t result = rotl(s[1] * 5, 7) * 9;
  const uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

double ac_rng_uniform(ac_rng *r) { return (double)(ac_rng_next(r) >> 11) * 0x1p-53; }

uint64_t ac_rng_below(ac_rng *r, uint64_t n)
{
  if (n == 0) return 0;
  const uint64_t threshold = (0 - n) % n;   /* 2^64 mod n: reject the short last block */
  for (;;) {
    uint64_t x = ac_rng_next(r);
    if (x >= threshold) return x % n;
  }
}

int64_t ac_rng_range(ac_rng *r, int64_t lo, int64_t hi)
{
  if (hi <= lo) return lo;
  uint64_t span = (uint64_t)hi - (uint64_t)lo + 1;
  uint64_t off = span == 0 ? ac_rng_next(r) : ac_rng_below(r, span);
  return (int64_t)((uint64_t)lo + off);
}

double ac_rng_normal(ac_rng *r)
{
  const double u1 = 1.0 - ac_rng_uniform(r);   /* (0, 1]: log is finite */
  const double u2 = ac_rng_uniform(r);
  return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

void ac_rng_split(ac_rng *r, ac_rng *child)
{
  uint64_t a = ac_rng_next(r);
  uint64_t b = ac_rng_next(r);
  ac_rng_init(child, a, b);
}
