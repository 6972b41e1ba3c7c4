# tests/python: run with the attncheck package installed (pip install .); the test helpers
# (fa_kernels.py) sit beside the tests.
