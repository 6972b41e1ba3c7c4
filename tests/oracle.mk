# tests/oracle.mk: tests of this layer.
