# tests/cuda.mk: tests of this layer.
