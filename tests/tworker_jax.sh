#!/bin/sh
# tworker_jax.sh: tests/tworker.sh jax (SKIP without it).
exec sh "${srcdir:-.}/tests/tworker.sh" jax
