# tests/fuzz.mk: tests of this layer.
