#!/bin/sh
# tworker_onnxruntime.sh: tests/tworker.sh onnxruntime (SKIP without it).
exec sh "${srcdir:-.}/tests/tworker.sh" onnxruntime
