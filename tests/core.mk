# tests/core.mk: tests of this layer.
