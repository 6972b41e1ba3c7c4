/* tcuda_api: the CUDA library's C interface links (stub or real), lists the kernels the build
 * promises, and their supports() limits hold; no test here touches a CUDA device. */
#include "config.h"
#include <check.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "accuda.h"
#include "testutil.h"

/* Under AddressSanitizer the CUDA driver needs the shadow gap unprotected to map device memory. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "protect_shadow_gap=0"; }

static int yes(const char *s) { return strcmp(s, "yes") == 0; }

static const attncheck_kernel *find(const char *name)
{
  size_t n = 0;
  const attncheck_kernel *const *l = ac_cuda_kernels(&n);
  for (size_t i = 0; i < n; i++)
    if (strcmp(l[i]->name, name) == 0) return l[i];
  return NULL;
}

static attncheck_problem problem(int dtype, int mask, int64_t tq, int64_t tk, int64_t d)
{
  attncheck_problem p;
  memset(&p, 0, sizeof p);
  p.struct_size = sizeof p;
  p.dtype = dtype;
  p.mask = mask;
  p.batch = 1; p.heads = 4; p.kv_heads = 2;
  p.tq = tq; p.tk = tk; p.dk = d; p.dv = d;
  p.scale = 0.125;
  int64_t qs[4] = { 4 * tq * d, tq * d, d, 1 }, ks[4] = { 2 * tk * d, tk * d, d, 1 };
  memcpy(p.q_stride, qs, sizeof qs); memcpy(p.o_stride, qs, sizeof qs);
  memcpy(p.k_stride, ks, sizeof ks); memcpy(p.v_stride, ks, sizeof ks);
  return p;
}

START_TEST(built_flag_matches_configure)
{
  ck_assert_msg(ac_cuda_built() == yes(AC_BUILD_CUDA), AC_SEED_FMT "ac_cuda_built() = %d, configure said CUDA %s",
                AC_SEED_ARG, ac_cuda_built(), AC_BUILD_CUDA);
}
END_TEST

START_TEST(kernel_list_is_the_promised_one)
{
  const char *base[] = { "cuda-naive-f32", "cuda-flash-f32", "cuda-flash-f16", "cuda-flash-bf16" };
  const char *blas[] = { "cublas-sdpa-f32", "cublas-sdpa-f16" };
  const char *dnn[] = { "cudnn-sdpa-f16", "cudnn-sdpa-bf16" };
  size_t n = 0, want = 0;
  const attncheck_kernel *const *l = ac_cuda_kernels(&n);
  ck_assert_ptr_nonnull(l);
  if (ac_cuda_built()) {
    want = (size_t)(4 + (yes(AC_BUILD_CUBLAS) ? 2 : 0) + (yes(AC_BUILD_CUDNN) ? 2 : 0));
    for (int i = 0; i < 4; i++) ck_assert_msg(find(base[i]) != NULL, "missing %s", base[i]);
    for (int i = 0; i < 2; i++) {
      ck_assert_msg((find(blas[i]) != NULL) == yes(AC_BUILD_CUBLAS), "%s listed against configure", blas[i]);
      ck_assert_msg((find(dnn[i]) != NULL) == yes(AC_BUILD_CUDNN), "%s listed against configure", dnn[i]);
    }
  }
  ck_assert_msg(n == want, "%zu CUDA kernels listed, expected %zu", n, want);
  for (size_t i = 0; i < n; i++) {
    const attncheck_kernel *k = l[i];
    ck_assert_uint_eq(k->abi_version, ATTNCHECK_ABI_VERSION);
    ck_assert_uint_eq(k->struct_size, sizeof(attncheck_kernel));
    ck_assert_int_eq(k->memory, ATTNCHECK_MEM_CUDA);
    ck_assert_ptr_nonnull(k->supports);
    ck_assert_ptr_nonnull(k->run);
    ck_assert_ptr_nonnull(k->precision);
    ck_assert_ptr_nonnull(k->description);
    for (size_t j = 0; j < i; j++) ck_assert_msg(strcmp(l[j]->name, k->name) != 0, "duplicate %s", k->name);
  }
}
END_TEST

/* supports() is host code: it must answer without touching the device. */
START_TEST(supports_limits)
{
  if (!ac_cuda_built()) return;
  char why[256];
  const attncheck_kernel *f16 = find("cuda-flash-f16"), *f32 = find("cuda-flash-f32"), *nv = find("cuda-naive-f32");
  ck_assert_ptr_nonnull(f16);
  attncheck_problem p = problem(ATTNCHECK_F16, ATTNCHECK_MASK_CAUSAL, 70, 33, 64);
  ck_assert_int_eq(f16->supports(&p, why, sizeof why), 1);
  p.dtype = ATTNCHECK_F32;
  why[0] = 0;
  ck_assert_int_eq(f16->supports(&p, why, sizeof why), 0);
  ck_assert_msg(why[0] != 0, "no reason given");
  ck_assert_int_eq(f32->supports(&p, why, sizeof why), 1);
  ck_assert_int_eq(nv->supports(&p, why, sizeof why), 1);
  p = problem(ATTNCHECK_F16, ATTNCHECK_MASK_NONE, 8, 8, 136);
  ck_assert_int_eq(f16->supports(&p, why, sizeof why), 0);
  p.kv_heads = 3;
  ck_assert_int_eq(f32->supports(&p, why, sizeof why), 0);
  const attncheck_kernel *dnn = find("cudnn-sdpa-f16");
  if (dnn) {
    p = problem(ATTNCHECK_F16, ATTNCHECK_MASK_CAUSAL_BOTTOM_RIGHT, 40, 100, 64);
    ck_assert_int_eq(dnn->supports(&p, why, sizeof why), 1);
    p = problem(ATTNCHECK_F16, ATTNCHECK_MASK_CAUSAL_BOTTOM_RIGHT, 100, 40, 64);
    why[0] = 0;
    ck_assert_int_eq(dnn->supports(&p, why, sizeof why), 0);
    ck_assert_msg(strstr(why, "bottom-right") != NULL, "reason: %s", why);
    p = problem(ATTNCHECK_F16, ATTNCHECK_MASK_NONE, 10, 10, 60);
    ck_assert_int_eq(dnn->supports(&p, why, sizeof why), 0);
    p = problem(ATTNCHECK_BF16, ATTNCHECK_MASK_NONE, 10, 10, 64);
    ck_assert_int_eq(dnn->supports(&p, why, sizeof why), 0);
  }
}
END_TEST

/* The stub answers without a device; in a CUDA build the probe runs in a child (it initializes CUDA). */
START_TEST(device_probe_in_a_child)
{
  int fd[2];
  ck_assert_int_eq(pipe(fd), 0);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    char err[256] = "";
    int n = ac_cuda_device_count(err, sizeof err);
    char line[300];
    int len = snprintf(line, sizeof line, "%d %s", n, err);
    if (write(fd[1], line, (size_t)len) < 0) _exit(1);
    _exit(0);
  }
  close(fd[1]);
  char buf[300] = "";
  ssize_t r = read(fd[0], buf, sizeof buf - 1);
  close(fd[0]);
  int st = 0;
  waitpid(pid, &st, 0);
  ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "probe child failed");
  ck_assert_int_gt(r, 0);
  printf("CUDA devices: %s\n", buf);
  if (!ac_cuda_built()) {
    ck_assert_msg(buf[0] == '0' && strstr(buf, "not built") != NULL, "stub said: %s", buf);
    char err[128];
    double ms = 1;
    float f = 0;
    ac_cuda_case cc = {.q_span = &f, .k_span = &f, .v_span = &f, .q_n = 1, .k_n = 1, .v_n = 1, .o_span = &f, .o_n = 1};
    ck_assert_int_eq(ac_cuda_run_case(&cc, &ms, err, sizeof err), AC_CUDA_RUN_SETUP_ERROR);
    ck_assert(ms == 0);
  }
}
END_TEST

int main(void)
{
  Suite *s = suite_create("cuda_api");
  TCase *tc = tcase_create("api");
  tcase_add_test(tc, built_flag_matches_configure);
  tcase_add_test(tc, kernel_list_is_the_promised_one);
  tcase_add_test(tc, supports_limits);
  tcase_add_test(tc, device_probe_in_a_child);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
