"""Builds the extension and the C library it ships with: the one way the extension is built
(the wheel, pip install, the sdist, the cross-built wheel and the test command's build tree).

The C++ core is built with CMake from the checkout (two folders up) or, in an sdist, from the
copy of it the sdist carries (core/), and libtensorlife.so.N is put in the package beside the
SWIG extension, which finds it through RPATH $ORIGIN: the wheel needs no installed tensorlife,
no LD_LIBRARY_PATH and no PYTHONPATH.  TL_CORE_BUILD names a CMake build folder whose library
is taken as it is (the test command's, built already) instead of building the core again."""
import os
import pathlib
import re
import shutil
import subprocess

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.sdist import sdist

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE / "core" if (HERE / "core").is_dir() else HERE.parent.parent
# What building the core takes, copied into an sdist as core/.
CORE = ["CMakeLists.txt", "LICENSE", "cmake", "include", "capi", "impl", "pkgconfig", "bindings/runtime", "bindings/tl.i"]


def version():
    """The library's version, from its one source: TL_VERSION_* in tl_base.h."""
    text = (ROOT / "include" / "tensorlife" / "tl_base.h").read_text()
    return ".".join(re.search(rf"^#define TL_VERSION_{p} (\d+)$", text, re.M).group(1) for p in ("MAJOR", "MINOR", "PATCH"))


class BuildWithCore(build_ext):
    def run(self):
        if not (ROOT / "include" / "tensorlife" / "tl.h").exists():
            raise RuntimeError(f"the tensorlife sources are not at {ROOT}: build from a checkout")
        prebuilt = os.environ.get("TL_CORE_BUILD")
        core = pathlib.Path(prebuilt or self.build_temp).resolve() / ("" if prebuilt else "core")
        # A cross build (scripts/cross.sh's wheel for another platform) names its CMake toolchain.
        toolchain = os.environ.get("TL_CMAKE_TOOLCHAIN_FILE")
        if not prebuilt:
            subprocess.check_call(["cmake", "-S", str(ROOT), "-B", str(core), "-DCMAKE_BUILD_TYPE=Release",
                                   "-DTL_BUILD_TESTS=OFF", "-DTL_BUILD_BENCH=OFF", "-DTL_BUILD_EXAMPLES=OFF",
                                   "-DTL_BUILD_STATIC=OFF", "-DTL_BUILD_JAVA=OFF", "-DTL_BUILD_CSHARP=OFF"]
                                  + ([f"-DCMAKE_TOOLCHAIN_FILE={toolchain}"] if toolchain else []),
                                  stdout=subprocess.DEVNULL)
            subprocess.check_call(["cmake", "--build", str(core), "-j", str(os.cpu_count() or 2), "--target",
                                   "tensorlife"], stdout=subprocess.DEVNULL)
        wrap = pathlib.Path(self.build_temp).resolve() / "tensorlife_wrap.c"
        wrap.parent.mkdir(parents=True, exist_ok=True)
        runtime = ROOT / "bindings" / "runtime"
        subprocess.check_call(["swig", "-python", "-I" + str(ROOT / "include"), "-I" + str(runtime), "-o", str(wrap),
                               "-outdir", str(wrap.parent), str(ROOT / "bindings" / "tl.i")])
        ext = self.extensions[0]
        ext.sources = [str(wrap), str(runtime / "tlb.c"), str(runtime / "tlb_python.c")]
        ext.include_dirs = [str(ROOT / "include"), str(runtime)]
        ext.library_dirs = [str(core)]
        self.core = core
        super().run()
        # The library beside the extension, under its SONAME (what the extension asks for).
        dest = pathlib.Path(self.get_ext_fullpath(ext.name)).parent
        soname = next(core.glob("libtensorlife.so.[0-9]")).name  # libtensorlife.so.<TL_ABI_VERSION>
        shutil.copy2(core / soname, dest / soname)


class SdistWithCore(sdist):
    """An sdist that builds anywhere: it carries the core's sources as core/."""

    def make_release_tree(self, base_dir, files):
        super().make_release_tree(base_dir, files)
        for part in CORE:
            src, dest = ROOT / part, pathlib.Path(base_dir) / "core" / part
            dest.parent.mkdir(parents=True, exist_ok=True)
            if src.is_dir():
                shutil.copytree(src, dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
            else:
                shutil.copy2(src, dest)


setup(
    version=version(),
    ext_modules=[Extension("tensorlife._tensorlife", sources=[], libraries=["tensorlife"],
                           extra_link_args=["-Wl,-rpath,$ORIGIN"])],
    cmdclass={"build_ext": BuildWithCore, "sdist": SdistWithCore},
)
