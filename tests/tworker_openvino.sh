#!/bin/sh
# tworker_openvino.sh: tests/tworker.sh openvino (SKIP without it).
exec sh "${srcdir:-.}/tests/tworker.sh" openvino
