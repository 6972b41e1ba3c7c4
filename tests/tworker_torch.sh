#!/bin/sh
# tworker_torch.sh: tests/tworker.sh torch (SKIP without it).
exec sh "${srcdir:-.}/tests/tworker.sh" torch
