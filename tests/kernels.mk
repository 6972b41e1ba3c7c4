# tests/kernels.mk: tests of this layer.
