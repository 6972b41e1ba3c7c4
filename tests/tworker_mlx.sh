#!/bin/sh
# tworker_mlx.sh: tests/tworker.sh mlx (SKIP without it).
exec sh "${srcdir:-.}/tests/tworker.sh" mlx
