/* png_check.c: checks a screenshot of an HTML report (8-bit RGB or RGBA PNG, not interlaced):
 * that it is not blank, that every plot frame colour given appears, that nothing is drawn
 * right of the page width and that the last N rows are white (the page ended inside the
 * screenshot, so no plot was cut off), with --clear-left that columns X0..X1-1 are white in every row
 * that holds a frame colour (nothing, such as a long label, is cut at the plots' left edge); optionally crops it to a new PNG (the screenshots in docs/).
 *
 *   png_check SHOT.png [--page-width W] [--blank-bottom N] [--frame '#rrggbb']... [--min-frame N]
 *             [--clear-left X0 X1]
 *   png_check SHOT.png --crop X0 Y0 X1 Y1 OUT.png
 *
 * Prints one line of facts; exit 0 when every check holds, 1 (with the reason) otherwise,
 * 2 on bad input. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

typedef struct {
  uint32_t w, h;
  int ch;            /* 3 or 4 */
  uint8_t *px;       /* w*h*ch */
} image;

static uint32_t be32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }

static int paeth(int a, int b, int c)
{
  int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

static int decode(const char *path, image *im)
{
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *b = malloc((size_t)n), *idat = malloc((size_t)n);
  size_t ni = 0;
  if (!b || !idat || fread(b, 1, (size_t)n, f) != (size_t)n || n < 33 || memcmp(b, "\x89PNG", 4)) {
    fclose(f);
    return -1;
  }
  fclose(f);
  im->w = be32(b + 16), im->h = be32(b + 20);
  int depth = b[24], ct = b[25], inter = b[28];
  if (depth != 8 || (ct != 2 && ct != 6) || inter) return -1;
  im->ch = ct == 6 ? 4 : 3;
  for (long p = 8; p + 8 <= n;) {
    uint32_t len = be32(b + p);
    if (!memcmp(b + p + 4, "IDAT", 4)) memcpy(idat + ni, b + p + 8, len), ni += len;
    p += 12 + (long)len;
  }
  size_t stride = (size_t)im->w * (size_t)im->ch, rawn = (stride + 1) * im->h;
  uint8_t *raw = malloc(rawn);
  uLongf got = (uLongf)rawn;
  if (!raw || uncompress(raw, &got, idat, (uLong)ni) != Z_OK || got != rawn) return -1;
  im->px = malloc(stride * im->h);
  for (uint32_t y = 0; y < im->h; y++) {
    uint8_t *in = raw + y * (stride + 1) + 1, *out = im->px + y * stride, *up = y ? out - stride : NULL;
    int ft = in[-1];
    for (size_t x = 0; x < stride; x++) {
      int a = x >= (size_t)im->ch ? out[x - (size_t)im->ch] : 0, u = up ? up[x] : 0,
          c = up && x >= (size_t)im->ch ? up[x - (size_t)im->ch] : 0;
      int pr = ft == 1 ? a : ft == 2 ? u : ft == 3 ? (a + u) / 2 : ft == 4 ? paeth(a, u, c) : 0;
      out[x] = (uint8_t)(in[x] + pr);
    }
  }
  free(b);
  free(idat);
  free(raw);
  return 0;
}

static void chunk(FILE *f, const char *type, const uint8_t *d, uint32_t n)
{
  uint8_t hd[8] = {(uint8_t)(n >> 24), (uint8_t)(n >> 16), (uint8_t)(n >> 8), (uint8_t)n};
  memcpy(hd + 4, type, 4);
  fwrite(hd, 1, 8, f);
  if (n) fwrite(d, 1, n, f);
  uLong crc = crc32(crc32(0, hd + 4, 4), d, n);
  uint8_t c[4] = {(uint8_t)(crc >> 24), (uint8_t)(crc >> 16), (uint8_t)(crc >> 8), (uint8_t)crc};
  fwrite(c, 1, 4, f);
}

/* Writes the RGB crop [x0,x1) x [y0,y1), each row with the filter (None, Sub, Up, Paeth) of
 * the smallest sum of absolute filtered bytes. */
static int crop(const image *im, uint32_t x0, uint32_t y0, uint32_t x1, uint32_t y1, const char *out)
{
  if (x1 > im->w) x1 = im->w;
  if (y1 > im->h) y1 = im->h;
  if (x0 >= x1 || y0 >= y1) return -1;
  uint32_t w = x1 - x0, h = y1 - y0;
  size_t stride = (size_t)w * 3 + 1, n = stride * h;
  uint8_t *raw = malloc(n), *cur = malloc(stride), *prev = calloc(stride, 1), *best = malloc(stride),
          *try = malloc(stride);
  for (uint32_t y = 0; y < h; y++) {
    for (uint32_t x = 0; x < w; x++)
      for (int k = 0; k < 3; k++) cur[3 * x + (uint32_t)k] = im->px[((size_t)(y0 + y) * im->w + x0 + x) * (size_t)im->ch + (size_t)k];
    long bestsum = -1;
    for (int ft = 0; ft < 5; ft++) {
      if (ft == 3) continue;
      long sum = 0;
      for (size_t i = 0; i < stride - 1; i++) {
        int a = i >= 3 ? cur[i - 3] : 0, u = prev[i], c = i >= 3 ? prev[i - 3] : 0;
        int pr = ft == 1 ? a : ft == 2 ? u : ft == 4 ? paeth(a, u, c) : 0;
        try[i + 1] = (uint8_t)(cur[i] - pr);
        sum += try[i + 1] < 128 ? try[i + 1] : 256 - try[i + 1];
      }
      if (bestsum < 0 || sum < bestsum) bestsum = sum, try[0] = (uint8_t)ft, memcpy(best, try, stride);
    }
    memcpy(raw + y * stride, best, stride);
    memcpy(prev, cur, stride - 1);
  }
  free(cur);
  free(prev);
  free(best);
  free(try);
  uLongf zn = compressBound((uLong)n);
  uint8_t *z = malloc(zn);
  if (compress2(z, &zn, raw, (uLong)n, 9) != Z_OK) return -1;
  FILE *f = fopen(out, "wb");
  if (!f) return -1;
  uint8_t ih[13] = {(uint8_t)(w >> 24), (uint8_t)(w >> 16), (uint8_t)(w >> 8), (uint8_t)w,
                    (uint8_t)(h >> 24), (uint8_t)(h >> 16), (uint8_t)(h >> 8), (uint8_t)h, 8, 2, 0, 0, 0};
  fwrite("\x89PNG\r\n\x1a\n", 1, 8, f);
  chunk(f, "IHDR", ih, 13);
  chunk(f, "IDAT", z, (uint32_t)zn);
  chunk(f, "IEND", NULL, 0);
  free(raw);
  free(z);
  return fclose(f);
}

static uint32_t rgb_at(const image *im, size_t i)
{
  const uint8_t *p = im->px + i * (size_t)im->ch;
  return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

int main(int argc, char **argv)
{
  image im;
  if (argc < 2 || decode(argv[1], &im)) {
    fprintf(stderr, "png_check: %s: not an 8-bit RGB(A) PNG\n", argc < 2 ? "(none)" : argv[1]);
    return 2;
  }
  if (argc == 8 && !strcmp(argv[2], "--crop")) {
    int rc = crop(&im, (uint32_t)atoi(argv[3]), (uint32_t)atoi(argv[4]), (uint32_t)atoi(argv[5]), (uint32_t)atoi(argv[6]),
                  argv[7]) ? 2 : 0;
    free(im.px);
    return rc;
  }
  uint32_t page_w = 0, blank_bottom = 0, frames[128], clear0 = 0, clear1 = 0;
  long min_frame = 400, fcount[128] = {0};
  int nfr = 0;
  for (int i = 2; i < argc; i++) {
    if (!strcmp(argv[i], "--page-width") && i + 1 < argc) page_w = (uint32_t)atoi(argv[++i]);
    else if (!strcmp(argv[i], "--blank-bottom") && i + 1 < argc) blank_bottom = (uint32_t)atoi(argv[++i]);
    else if (!strcmp(argv[i], "--min-frame") && i + 1 < argc) min_frame = atol(argv[++i]);
    else if (!strcmp(argv[i], "--clear-left") && i + 2 < argc)
      clear0 = (uint32_t)atoi(argv[++i]), clear1 = (uint32_t)atoi(argv[++i]);
    else if (!strcmp(argv[i], "--frame") && i + 1 < argc && nfr < 128) frames[nfr++] = (uint32_t)strtoul(argv[++i] + 1, NULL, 16);
    else {
      fprintf(stderr, "png_check: bad argument '%s'\n", argv[i]);
      free(im.px);
      return 2;
    }
  }
  size_t n = (size_t)im.w * im.h, nonbg = 0, ncol = 0;
  uint8_t *seen = calloc(1u << 21, 1);   /* colours, one bit each */
  uint32_t maxx = 0, maxy = 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t c = rgb_at(&im, i);
    if (!(seen[c >> 3] & (1u << (c & 7)))) seen[c >> 3] |= (uint8_t)(1u << (c & 7)), ncol++;
    if (c != 0xffffff) {
      nonbg++;
      if (i % im.w > maxx) maxx = (uint32_t)(i % im.w);
      maxy = (uint32_t)(i / im.w);
    }
    for (int k = 0; k < nfr; k++) fcount[k] += c == frames[k];
  }
  printf("png %ux%u: %zu colours, %.1f%% not white, rightmost drawn column %u, lowest drawn row %u\n", im.w, im.h, ncol,
         100.0 * (double)nonbg / (double)n, maxx, maxy);
  int bad = 0;
  if (ncol < 16 || nonbg < n / 50) printf("FAIL: the screenshot is (nearly) blank\n"), bad = 1;
  if (page_w && maxx >= page_w) printf("FAIL: something is drawn at x = %u, right of the page (%u px)\n", maxx, page_w), bad = 1;
  if (blank_bottom && maxy + blank_bottom >= im.h)
    printf("FAIL: drawn down to row %u of %u: the page may continue below the screenshot\n", maxy, im.h), bad = 1;
  for (int k = 0; k < nfr; k++)
    if (fcount[k] < min_frame) printf("FAIL: plot frame #%06x: %ld pixels, expected at least %ld\n", frames[k], fcount[k], min_frame), bad = 1;
  if (clear1 > clear0 && clear1 <= im.w) {
    size_t drawn = 0, rows = 0, first = 0;
    for (uint32_t y = 0; y < im.h; y++) {
      int framed = 0;
      for (uint32_t x = 0; x < im.w && !framed; x++)
        for (int k = 0; k < nfr; k++) framed |= rgb_at(&im, (size_t)y * im.w + x) == frames[k];
      if (!framed) continue;
      rows++;
      for (uint32_t x = clear0; x < clear1; x++)
        if (rgb_at(&im, (size_t)y * im.w + x) != 0xffffff && !drawn++) first = y;
    }
    if (drawn)
      printf("FAIL: %zu pixels drawn in columns %u..%u of the %zu plot rows (first in row %zu): cut at the left edge\n",
             drawn, clear0, clear1 - 1, rows, first),
          bad = 1;
  }
  free(seen);
  free(im.px);
  return bad;
}
