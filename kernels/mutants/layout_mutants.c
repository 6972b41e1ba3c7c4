/* layout_mutants.c: the serving-layout defects (docs/bugclasses.md "Serving layouts"), each
 * flash-varlen-f32 (kernels/cpu_varlen.c) with one defect built in. */
#include "config.h"
#include "cpu_varlen.h"

#define LAYOUT_MUTANT(SYM, BUG, NAME, DESC)                                                                  \
  static int SYM##_supports(const attncheck_problem *p, char *why, size_t n)                               \
  {                                                                                                        \
    return ac_cpu_layout_supports(p, ATTNCHECK_F32, why, n);                                               \
  }                                                                                                        \
  static int SYM##_run(const attncheck_problem *p, const attncheck_tensors *t, char *err, size_t n)        \
  {                                                                                                        \
    return ac_cpu_layout_run(ATTNCHECK_F32, BUG, NAME, p, t, err, n);                                      \
  }                                                                                                        \
  extern const attncheck_kernel SYM;                                                                       \
  const attncheck_kernel SYM = {ATTNCHECK_ABI_VERSION, sizeof(attncheck_kernel), NAME, DESC, "fp32",       \
                                ATTNCHECK_MEM_HOST, AC_CPU_LAYOUT_CAPS, SYM##_supports, SYM##_run,         \
                                {NULL, NULL, NULL, NULL}, NULL, 0, 0, 0, 0, NULL, 0, 0, NULL};

LAYOUT_MUTANT(ac_mutant_cu_seqlens_off_by_one, AC_LBUG_CU_OFF_BY_ONE, "mutant-cu-seqlens-off-by-one",
              "varlen: cu_seqlens_k read off by one, each sequence takes the next one's first key")
LAYOUT_MUTANT(ac_mutant_prev_seq_boundary, AC_LBUG_PREV_BOUNDARY, "mutant-prev-seq-boundary",
              "the key count of the previous sequence used for each sequence")
LAYOUT_MUTANT(ac_mutant_last_page_whole, AC_LBUG_LAST_PAGE_WHOLE, "mutant-last-page-whole",
              "paged: the last partial page read whole, slots past cache_seqlens masked only after P.V")
LAYOUT_MUTANT(ac_mutant_block_table_row, AC_LBUG_WRONG_TABLE_ROW, "mutant-block-table-row",
              "paged: block-table row b read at b * (max_pages - 1), pages of the wrong sequence")
LAYOUT_MUTANT(ac_mutant_zero_length_seq, AC_LBUG_ZERO_LENGTH, "mutant-zero-length-seq",
              "a sequence without keys reads one key anyway")
LAYOUT_MUTANT(ac_mutant_page_count, AC_LBUG_PAGE_COUNT, "mutant-page-count",
              "paged: cache_seqlens ignored, every slot of a sequence's pages read as a key")
LAYOUT_MUTANT(ac_mutant_gqa_page64_last_page, AC_LBUG_LAST_PAGE_GQA64, "mutant-gqa-page64-last-page",
              "paged: with page size 64 and GQA only, the last partial page read whole, masked only after P.V")
LAYOUT_MUTANT(ac_mutant_block_id_u16, AC_LBUG_BLOCK_ID_U16, "mutant-block-id-u16",
              "paged: block-table entries read as 16-bit page ids (ids above 65535 wrap)")
LAYOUT_MUTANT(ac_mutant_block_table_past_end, AC_LBUG_PAGE_PAST_END, "mutant-block-table-past-end",
              "paged: cache_seqlens / page_size + 1 pages walked: a full last page reads the entry after it")
