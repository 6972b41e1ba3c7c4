"""setup.py: the build step of the attncheck wheel (pyproject.toml holds the metadata).

build_py compiles libattncheck with the project's autotools build in a temporary copy of the
tree (autoreconf, configure --without-cuda, make libattncheck.la) and puts the shared library
inside the package (attncheck/_lib/libattncheck.so.0). ATTNCHECK_PREBUILT_LIB=PATH ships an
already built library instead (the test suite's venv uses the build tree's). The wheel is
platform-specific (it carries a shared object) but not tied to a Python version (ctypes).
"""
import glob
import os
import shutil
import subprocess
import tempfile

from setuptools import setup
from setuptools.command.build_py import build_py

try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # setuptools < 70.1
    from wheel.bdist_wheel import bdist_wheel

HERE = os.path.dirname(os.path.abspath(__file__))
_IGNORE = shutil.ignore_patterns(".git", "build", "dist", "*.egg-info", "__pycache__", "*.o", "*.lo", "*.la",
                                 ".libs", ".deps", "autom4te.cache")


def IGNORE(d, names):
    """Build trees (build, build-*) stay behind; build-aux holds configure's auxiliary scripts."""
    out = set(_IGNORE(d, names))
    out.update(n for n in names if n.startswith("build-") and n != "build-aux")
    return out


def _run(cmd, cwd):
    print("attncheck build:", " ".join(cmd))
    subprocess.run(cmd, cwd=cwd, check=True)


def build_library(dest):
    pre = os.environ.get("ATTNCHECK_PREBUILT_LIB")
    if pre:
        shutil.copyfile(pre, dest)
        return
    jobs = str(max(1, min(os.cpu_count() or 1, 8)))
    with tempfile.TemporaryDirectory(prefix="attncheck-build-") as tmp:
        src = os.path.join(tmp, "src")
        shutil.copytree(HERE, src, ignore=IGNORE, symlinks=True)
        if not os.path.exists(os.path.join(src, "configure")):
            _run(["autoreconf", "-fi"], src)
        bdir = os.path.join(tmp, "build")
        os.mkdir(bdir)
        _run([os.path.join(src, "configure"), "--without-cuda", "--disable-static", "--quiet"], bdir)
        _run(["make", "-j" + jobs, "libattncheck.la"], bdir)
        libs = sorted(glob.glob(os.path.join(bdir, ".libs", "libattncheck.so.*.*")))
        if not libs:
            raise RuntimeError("make libattncheck.la left no .libs/libattncheck.so.*")
        shutil.copyfile(libs[0], dest)


class BuildPyWithLib(build_py):
    def run(self):
        super().run()
        d = os.path.join(self.build_lib, "attncheck", "_lib")
        os.makedirs(d, exist_ok=True)
        build_library(os.path.join(d, "libattncheck.so.0"))


class PlatformWheel(bdist_wheel):
    def finalize_options(self):
        super().finalize_options()
        self.root_is_pure = False

    def get_tag(self):
        _, _, plat = super().get_tag()
        return "py3", "none", plat


setup(cmdclass={"build_py": BuildPyWithLib, "bdist_wheel": PlatformWheel})
