"""setup.py: the build step of the attncheck wheel (pyproject.toml holds the metadata).

build_py builds libattncheck and the attncheck command with the project's autotools build in a
temporary copy of the source files (autoreconf when there is no configure script, configure
--without-cuda, make attncheck libattncheck.la) and puts both inside the package
(attncheck/_lib/libattncheck.so.0 and attncheck/_lib/attncheck; the console entry `attncheck`
runs the latter). The copy leaves out what a build in place or out of tree wrote (config.status,
Makefiles, objects, programs, build directories), so `pip install .` works from a fresh clone and
from a tree configured and built in place or in build/. Each step is printed with its time
(`pip install -v .` shows them; pip hides a build's output otherwise, so they also go to the
terminal, /dev/tty, where there is one; ATTNCHECK_BUILD_QUIET=1 keeps them off it).
ATTNCHECK_PREBUILT_DIR=DIR ships the library and command of an already built tree DIR instead
(tests/tpip.sh and tests/tpython.sh use the build tree's). The wheel is platform-specific (it
carries a shared object and a program) but not tied to a Python version.
"""
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import time

from setuptools import setup
from setuptools.command.build_py import build_py

try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # setuptools < 70.1
    from wheel.bdist_wheel import bdist_wheel

HERE = os.path.dirname(os.path.abspath(__file__))
# what a build writes (in place or in a build directory), never a source of the build
_DIRS = {".git", "dist", "__pycache__", ".libs", ".deps", "autom4te.cache", "build"}
_FILES = {"config.status", "config.log", "config.h", "stamp-h1", "libtool", "attncheck.pc",
          "attncheck-uninstalled.pc", ".dirstamp"}
_SUFFIXES = (".o", ".lo", ".la", ".a", ".so", ".log", ".trs", ".pyc")


def _built(path, name):
    """A file a build wrote: by name, or a program (ELF) or libtool's wrapper script of one."""
    if name in _FILES or name.endswith(_SUFFIXES) or name.endswith(".egg-info"):
        return True
    if not os.access(path, os.X_OK) or os.path.islink(path):
        return False
    with open(path, "rb") as f:
        head = f.read(512)
    return head.startswith(b"\x7fELF") or b"temporary wrapper script" in head


def _ignore(d, names):
    out = set()
    for n in names:
        p = os.path.join(d, n)
        if os.path.isdir(p) and not os.path.islink(p):
            # build trees (build, build-*), the headers a build in place copies (include/)
            if n in _DIRS or (n.startswith("build-") and n != "build-aux") or n.endswith(".egg-info") or \
                    (d == HERE and n == "include"):
                out.add(n)
        elif _built(p, n) or (n == "Makefile" and "Makefile.in" in names):   # configure's, not a hand-written one
            out.add(n)
    return out


def _tty():
    """The terminal pip runs in, where pip hides the build's output (no -v): progress goes there too."""
    if os.environ.get("ATTNCHECK_BUILD_QUIET") or sys.stdout.isatty():
        return None
    try:
        return open("/dev/tty", "w")
    except OSError:
        return None


_TTY = _tty()


def _say(msg):
    print("attncheck build: " + msg, flush=True)
    if _TTY:
        _TTY.write("attncheck build: %s\n" % msg)
        _TTY.flush()


def _run(cmd, cwd, what):
    t0 = time.time()
    _say("%s: %s" % (what, " ".join(os.path.basename(c) if i == 0 else c for i, c in enumerate(cmd))))
    subprocess.run(cmd, cwd=cwd, check=True)
    _say("%s done (%.0f s)" % (what, time.time() - t0))


def _ship(lib, exe, dest):
    shutil.copyfile(lib, os.path.join(dest, "libattncheck.so.0"))
    shutil.copyfile(exe, os.path.join(dest, "attncheck"))
    os.chmod(os.path.join(dest, "attncheck"), 0o755)


def _program(bdir):
    """The attncheck program of build tree bdir: libtool leaves a wrapper script there and the program,
    which finds libattncheck.so.0 beside itself (RUNPATH $ORIGIN), in .libs/."""
    real = os.path.join(bdir, ".libs", "attncheck")
    return real if os.path.isfile(real) else os.path.join(bdir, "attncheck")


def build_native(dest):
    """libattncheck.so.0 and the attncheck program into the folder dest."""
    pre = os.environ.get("ATTNCHECK_PREBUILT_DIR")
    if pre:
        lib, exe = os.path.join(pre, ".libs", "libattncheck.so.0"), _program(pre)
        for f in (lib, exe):
            if not os.path.isfile(f):
                raise RuntimeError("ATTNCHECK_PREBUILT_DIR=%s: no %s (run make there first)" % (pre, f))
        _say("the library and command of %s" % pre)
        _ship(lib, exe, dest)
        return
    jobs = str(max(1, min(os.cpu_count() or 1, 8)))
    with tempfile.TemporaryDirectory(prefix="attncheck-build-") as tmp:
        src = os.path.join(tmp, "src")
        _say("copying the sources of %s" % HERE)
        shutil.copytree(HERE, src, ignore=_ignore, symlinks=True)
        if not os.path.exists(os.path.join(src, "configure")):
            _run(["autoreconf", "-fi"], src, "[1/3] autoreconf")
        bdir = os.path.join(tmp, "build")
        os.mkdir(bdir)
        _run([os.path.join(src, "configure"), "--without-cuda", "--disable-static", "--quiet"], bdir,
             "[2/3] configure")
        _run(["make", "-j" + jobs, "attncheck", "libattncheck.la"], bdir, "[3/3] make (a few minutes)")
        libs = sorted(glob.glob(os.path.join(bdir, ".libs", "libattncheck.so.*.*")))
        exe = _program(bdir)
        if not libs or not os.path.isfile(exe):
            raise RuntimeError("make left no .libs/libattncheck.so.* or attncheck")
        _ship(libs[0], exe, dest)


class BuildPyWithLib(build_py):
    def run(self):
        super().run()
        d = os.path.join(self.build_lib, "attncheck", "_lib")
        os.makedirs(d, exist_ok=True)
        build_native(d)


class PlatformWheel(bdist_wheel):
    def finalize_options(self):
        super().finalize_options()
        self.root_is_pure = False

    def get_tag(self):
        _, _, plat = super().get_tag()
        return "py3", "none", plat


setup(cmdclass={"build_py": BuildPyWithLib, "bdist_wheel": PlatformWheel})
