# kernels/: the ABI, harness, plugin loader, built-in CPU kernels, mutants (layer 3).
noinst_LTLIBRARIES += kernels/libac_kernels.la
kernels_libac_kernels_la_CFLAGS = $(AM_CFLAGS)
kernels_libac_kernels_la_SOURCES = $(AC_CPU_KERNEL_SOURCES) \
	kernels/attncheck_kernel.h kernels/harness.h \
	kernels/harness.c kernels/harness_priv.h kernels/harness_layout.c \
	kernels/harness_body.c kernels/harness_grad.c \
	kernels/harness_quant.c kernels/quant_view.h kernels/cpu_quant.c kernels/cpu_quant_paths.c \
	kernels/worker.c \
	kernels/child.c kernels/child.h kernels/reaper.c \
	kernels/plugin.c kernels/plugin.h \
	kernels/resolve.c \
	kernels/exec.c kernels/exec.h kernels/exec_dir.c kernels/exec_spec.c \
	kernels/exec_worker.c kernels/exec_priv.h \
	kernels/exec_decl.c kernels/exec_decl.h \
	kernels/exec_grad.c kernels/grad_npz.c kernels/grad_npz.h \
	kernels/testkernels/testkernels.h \
	kernels/testkernels/registry.c \
	kernels/testkernels/reference.c \
	kernels/testkernels/process.c \
	kernels/testkernels/memory.c \
	kernels/testkernels/outcome.c kernels/testkernels/abi5.c \
	kernels/testkernels/nondeterministic.c \
	kernels/testkernels/masked_leak.c \
	kernels/testkernels/strides.c kernels/testkernels/variants.c \
	kernels/testkernels/layout_bias.c kernels/testkernels/grad_meta.c \
	kernels/testkernels/lse_forms.c kernels/testkernels/quant.c \
	kernels/testkernels/layout_poison.c
include kernels/cpu.mk
