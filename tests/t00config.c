/* t00config: the first test; prints the build configuration so every make check log says what was tested. */
#include "config.h"
#include <check.h>
#include <gmp.h>
#include <mpfr.h>
#include <stdio.h>
#include <zip.h>
#include <json-c/json_c_version.h>
#include "testutil.h"
#include "gemm.h"

START_TEST(build_configuration_is_printed)
{
  ck_assert_int_ge(MPFR_VERSION_MAJOR, 4);
}
END_TEST

int main(void)
{
  printf("attncheck %s build configuration\n", PACKAGE_VERSION);
  printf("  compiler:    %s\n", AC_BUILD_CC);
  printf("  CFLAGS:      %s\n", AC_BUILD_CFLAGS);
  printf("  sanitizers:  %s\n", AC_BUILD_SANITIZERS);
  printf("  assertions:  %s\n", AC_BUILD_ASSERT);
  printf("  GMP:         %s\n", gmp_version);
  printf("  MPFR:        %s (header %s)\n", mpfr_get_version(), MPFR_VERSION_STRING);
  printf("  Check:       %d.%d.%d\n", CHECK_MAJOR_VERSION, CHECK_MINOR_VERSION, CHECK_MICRO_VERSION);
  printf("  json-c:      %s\n", json_c_version());
  printf("  libzip:      %s\n", zip_libzip_version());
  printf("  BLAS:        %s (threads per product: %d)\n", ac_gemm_backend(), ac_gemm_threads());
  printf("  CUDA:        %s (arch %s), cuBLAS %s, cuDNN %s\n", AC_BUILD_CUDA, AC_BUILD_CUDA_ARCH,
         AC_BUILD_CUBLAS, AC_BUILD_CUDNN);
  printf("  test seed:   %llu\n", (unsigned long long)ac_test_seed());
  fflush(stdout);
  Suite *s = suite_create("config");
  TCase *tc = tcase_create("config");
  tcase_add_test(tc, build_configuration_is_printed);
  suite_add_tcase(s, tc);
  return ac_test_run(s);
}
