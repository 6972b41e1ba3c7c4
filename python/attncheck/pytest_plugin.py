"""The pytest plugin of attncheck (entry point pytest11 "attncheck"; active once the package is
installed). The fixture `attncheck_assert` is assert_attention_close with the test's id as the
producer's name and reproducer file name:

    def test_my_kernel(attncheck_assert):
        attncheck_assert(q, k, v, my_attention(q, k, v), causal=True, layout="bthd")

(attncheck_assert.grad(...) is assert_grad_close). --attncheck-save-dir DIR writes the cases of
failing assertions into DIR (default: $ATTNCHECK_SAVE_DIR, else TMPDIR/attncheck-failures);
--attncheck-rows SPEC judges only these rows by default (edges+K or a list), for long sequences.
"""
import pytest

import attncheck


def pytest_addoption(parser):
    g = parser.getgroup("attncheck")
    g.addoption("--attncheck-save-dir", metavar="DIR", default=None,
                help="write the case file of every failing attncheck assertion into DIR (attncheck check FILE replays it)")
    g.addoption("--attncheck-rows", metavar="SPEC", default=None,
                help="default row selection of attncheck assertions (edges+K or a list of rows)")


def pytest_configure(config):
    d = config.getoption("--attncheck-save-dir")
    if d:
        attncheck.save_dir = d


class _Bound:
    def __init__(self, nodeid, rows):
        self.nodeid, self.rows = nodeid, rows
        self.results = []

    def _kw(self, kw):
        kw.setdefault("name", self.nodeid)
        if self.rows and "rows" not in kw:
            kw["rows"] = self.rows
        return kw

    def __call__(self, q, k, v, o, lse=None, **kw):
        r = attncheck.assert_attention_close(q, k, v, o, lse, **self._kw(kw))
        self.results.append(r)
        return r

    def grad(self, q, k, v, do, dq, dk, dv, dsinks=None, **kw):
        r = attncheck.assert_grad_close(q, k, v, do, dq, dk, dv, dsinks, **self._kw(kw))
        self.results.append(r)
        return r


@pytest.fixture
def attncheck_assert(request):
    """assert_attention_close bound to this test (its id names the reproducer)."""
    return _Bound(request.node.nodeid, request.config.getoption("--attncheck-rows"))
