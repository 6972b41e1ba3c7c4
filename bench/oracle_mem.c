/* bench/oracle_mem.c: peak memory of `attncheck oracle --rows edges+8` against the size of
 * the inputs. Writes a case with `attncheck gen` (fp32 normal(0,1), causal, T = 16384,
 * d = 128 unless told otherwise), runs the oracle on it in a child process without the
 * cache, and prints the child's peak resident set (wait4 / ru_maxrss) next to the bytes of
 * q, k and v. The aim is a peak below 2x the inputs.
 *
 *   bench/oracle_mem [ATTNCHECK [T [D [DTYPE [ROWS]]]]]   (default ./attncheck 16384 128 f32 edges+8)
 */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "dtype.h"

/* Runs argv in a child (stdout to /dev/null); its exit status and peak RSS in KiB. */
static int run(char *const argv[], long *maxrss_kb, double *seconds)
{
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    if (!freopen("/dev/null", "w", stdout)) _exit(127);
    execv(argv[0], argv);
    perror(argv[0]);
    _exit(127);
  }
  int st;
  struct rusage ru;
  if (wait4(pid, &st, 0, &ru) != pid) return -1;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  if (maxrss_kb) *maxrss_kb = ru.ru_maxrss;
  if (seconds) *seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(int argc, char **argv)
{
  char *bin = argc > 1 ? argv[1] : "./attncheck";
  char *t = argc > 2 ? argv[2] : "16384", *d = argc > 3 ? argv[3] : "128";
  char *dt = argc > 4 ? argv[4] : "f32", *rows = argc > 5 ? argv[5] : "edges+8";
  ac_dtype dtype;
  if (ac_dtype_parse(dt, &dtype)) {
    fprintf(stderr, "oracle_mem: unknown dtype %s\n", dt);
    return 2;
  }
  char dir[] = "/tmp/attncheck-oracle-mem-XXXXXX";
  if (!mkdtemp(dir)) { perror("mkdtemp"); return 2; }
  char path[256];
  snprintf(path, sizeof path, "%s/case.npz", dir);
  char *gen[] = {bin, "gen", "--out", path, "--t", t, "--dk", d, "--dtype", dt, "--mask", "causal", "--seed", "1", NULL};
  int rc = run(gen, NULL, NULL);
  if (rc != 0) {
    fprintf(stderr, "oracle_mem: gen failed (%d)\n", rc);
    return 2;
  }
  struct stat st;
  stat(path, &st);
  double T = atof(t), D = atof(d), in = 3 * T * D * (double)ac_dtype_size(dtype);
  setenv("ATTNCHECK_CACHE", "off", 1);
  char *orc[] = {bin, "oracle", path, "--rows", rows, "-q", NULL};
  long kb = 0;
  double sec = 0;
  rc = run(orc, &kb, &sec);
  unlink(path);
  rmdir(dir);
  if (rc != 0) {
    fprintf(stderr, "oracle_mem: oracle failed (%d)\n", rc);
    return 2;
  }
  double peak = (double)kb * 1024;
  printf("oracle --rows %s, %s causal T=%s d=%s: inputs %.1f MiB (file %.1f MiB), peak RSS %.1f MiB = %.2fx the inputs (%.1f s)%s\n",
         rows, dt, t, d, in / 1048576, (double)st.st_size / 1048576, peak / 1048576, peak / in, sec,
         peak < 2 * in ? "" : "; aim: below 2x");
  return 0;
}
