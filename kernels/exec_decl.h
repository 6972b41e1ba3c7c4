/* owner: exec backend */
/* exec_decl.h: the declaration handshake of exec-persistent workers (README "Without C").
 * Right after it starts a worker, attncheck sends the line AC_EXEC_HELLO; a worker that speaks
 * the handshake answers with one line "attncheck-worker 1 {JSON}" naming itself, its dtypes,
 * masks, features, precision class per dtype, whether it writes the LSE and whether it computes the
 * backward ("backward": true, or the list of variants its backward takes; exec_grad.c). Any other answer
 * (an "error ..." line from a worker that takes it for a request), no answer within the time
 * limit, or the worker's exit: a worker without a declaration, run as before. */
#ifndef AC_EXEC_DECL_H
#define AC_EXEC_DECL_H
#include <stddef.h>
#include <stdint.h>
#include "harness.h"

#define AC_EXEC_HELLO "hello 1\n"
#define AC_EXEC_DECL_TAG "attncheck-worker"

/* "env": at most this many variable names, each shorter than AC_EXEC_ENV_NAME */
#define AC_EXEC_MAX_ENV 16
#define AC_EXEC_ENV_NAME 64

/* features a worker may declare (bit per name, AC_EXEC_FEATURE_NAMES order) */
enum { AC_XF_GQA = 0, AC_XF_DV_NE_DK, AC_XF_TQ_NE_TK, AC_XF_SCALE, AC_XF_N };
#define AC_EXEC_FEATURE_NAMES {"gqa", "dv-ne-dk", "tq-ne-tk", "scale"}

typedef enum {
  AC_DECL_UNKNOWN = 0,  /* not asked yet */
  AC_DECL_NONE,         /* asked: the worker does not declare itself (today's behaviour) */
  AC_DECL_OK,           /* a usable declaration */
  AC_DECL_BAD           /* a declaration line that cannot be used (error says why): every case is ERROR */
} ac_exec_decl_state;

typedef struct ac_exec_decl_s {
  ac_exec_decl_state state;
  char name[128];        /* the worker's own name ("" if not given) */
  uint32_t dtypes;       /* 1u << ac_dtype; every dtype when not declared */
  uint32_t masks;        /* 1u << ac_mask */
  uint32_t features;     /* 1u << AC_XF_* */
  uint32_t variants;     /* AC_FEAT_... named in "features" ("window", "softcap", ...; variants.h); 0
                            when not declared: a worker that does not name a variant never gets it */
  int writes_lse;        /* -1 not said, 0 never, 1 always */
  int alibi_lse_fa2;     /* "alibi_lse": "fa2": its LSE follows FlashAttention-2's causal ALiBi convention
                            (ATTNCHECK_CAP_ALIBI_LSE_FA2); "abi" or not said: 0 */
  int backward;          /* 1: answers "backward IN OUT" requests (exec_grad.c); 0 when not declared */
  uint32_t backward_feats;  /* AC_FEAT_... its backward takes: "backward": true, the declared variants
                               the exact backward takes (ATTNCHECK_BACKWARD_V3_FEATS); or the list given */
  char precision[512];   /* a precision spec ("f16=fp16-cublas,bf16=q=f16,pv=f16"; "" none) */
  int empty_rows;        /* "empty_rows": ATTNCHECK_EMPTY_ZERO, _NAN or _MEAN_V (0: not declared) */
  int empty_lse;         /* "empty_lse": ATTNCHECK_EMPTY_LSE_NEG_INF, _POS_INF or _NAN (0: not declared) */
  int params_q_dtype;    /* "params_dtype": "q": the scale and a bias are taken in Q's dtype
                            (ATTNCHECK_CAP_PARAMS_Q_DTYPE); 0: as stored */
  int nenv;              /* "env": the environment variables the worker reads (recorded in reproducers) */
  char env[AC_EXEC_MAX_ENV][AC_EXEC_ENV_NAME];
  char note[256];        /* "note": one line the worker wants its user to see ("" none) */
  uint32_t kv_formats;   /* "kv_formats": the quantized formats it reads for k and v (1u << AC_QF_..., quant.h) */
  uint32_t q_formats;    /* "q_formats": those it reads for q (docs/quantized.md); 0: none */
  int quant_only;        /* "quant_only": true: it takes quantized caches only (ATTNCHECK_CAP_QUANT_ONLY) */
  char error[256];       /* AC_DECL_BAD: what is wrong with the declaration */
} ac_exec_decl;

/* Unknown; everything allowed. */
void ac_exec_decl_init(ac_exec_decl *d);
/* The worker's answer to AC_EXEC_HELLO: 1 when line answers it (d becomes OK, BAD or NONE),
 * 0 for any other line (chatter, passed on to stderr by the caller). */
int ac_exec_decl_answer(ac_exec_decl *d, const char *line);
/* Parses the JSON object of a declaration into d (state OK, or BAD with error). */
void ac_exec_decl_parse(ac_exec_decl *d, const char *json);
/* Before a case: 0 to run it; otherwise fills r (UNSUPPORTED for a capability miss,
 * HARNESS_ERROR for a bad declaration, with the reason) and returns -1. */
int ac_exec_decl_admit(const ac_exec_decl *d, const ac_problem *p, ac_run_result *r);
/* 1 when p is within the declaration (why filled otherwise); 1 without a declaration. */
int ac_exec_decl_supports(const ac_exec_decl *d, const ac_problem *p, char *why, size_t n);
/* An "error MESSAGE" answer to a case: "error unsupported: REASON" is a refusal (SKIP, the
 * reason in r->msg), any other message a KERNEL_ERROR ("worker: MESSAGE"). */
void ac_exec_decl_error(const char *line, ac_run_result *r);
/* After outputs were read: lse dropped for writes_lse false; a missing lse counted as
 * unwritten for writes_lse true (when the LSE was asked for). */
void ac_exec_decl_outputs(const ac_exec_decl *d, const ac_run_opts *o, int64_t rows, ac_run_result *r);

#endif
