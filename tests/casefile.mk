# tests/casefile.mk: NPZ case files, gen/info, fuzz-corpus replay.
