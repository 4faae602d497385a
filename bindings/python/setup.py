"""Builds the extension and the C library it ships with.

The C++ core is built from this checkout (two folders up) with CMake, and libtensorlife.so.N
is put in the package beside the SWIG extension, which finds it through RPATH $ORIGIN: the
wheel needs no installed tensorlife, no LD_LIBRARY_PATH and no PYTHONPATH."""
import os
import pathlib
import re
import shutil
import subprocess

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def version():
    """The library's version, from its one source: TL_VERSION_* in tl_base.h."""
    text = (ROOT / "include" / "tensorlife" / "tl_base.h").read_text()
    return ".".join(re.search(rf"^#define TL_VERSION_{p} (\d+)$", text, re.M).group(1) for p in ("MAJOR", "MINOR", "PATCH"))


class BuildWithCore(build_ext):
    def run(self):
        if not (ROOT / "include" / "tensorlife" / "tl.h").exists():
            raise RuntimeError(f"the tensorlife sources are not at {ROOT}: build from a checkout")
        core = pathlib.Path(self.build_temp).resolve() / "core"
        # A cross build (scripts/cross.sh's wheel for another platform) names its CMake toolchain.
        toolchain = os.environ.get("TL_CMAKE_TOOLCHAIN_FILE")
        subprocess.check_call(["cmake", "-S", str(ROOT), "-B", str(core), "-DCMAKE_BUILD_TYPE=Release",
                               "-DTL_BUILD_TESTS=OFF", "-DTL_BUILD_BENCH=OFF", "-DTL_BUILD_EXAMPLES=OFF",
                               "-DTL_BUILD_STATIC=OFF", "-DTL_BUILD_JAVA=OFF", "-DTL_BUILD_CSHARP=OFF"]
                              + ([f"-DCMAKE_TOOLCHAIN_FILE={toolchain}"] if toolchain else []),
                              stdout=subprocess.DEVNULL)
        subprocess.check_call(["cmake", "--build", str(core), "-j", str(os.cpu_count() or 2), "--target", "tensorlife"],
                              stdout=subprocess.DEVNULL)
        wrap = core / "tensorlife_wrap.c"
        runtime = ROOT / "bindings" / "runtime"
        subprocess.check_call(["swig", "-python", "-I" + str(ROOT / "include"), "-I" + str(runtime), "-o", str(wrap),
                               "-outdir", str(core), str(ROOT / "bindings" / "tl.i")])
        ext = self.extensions[0]
        ext.sources = [str(wrap), str(runtime / "tlb.c")]
        ext.include_dirs = [str(ROOT / "include"), str(runtime)]
        ext.library_dirs = [str(core)]
        self.core = core
        super().run()
        # The library beside the extension, under its SONAME (what the extension asks for).
        dest = pathlib.Path(self.get_ext_fullpath(ext.name)).parent
        soname = next(core.glob("libtensorlife.so.[0-9]")).name  # libtensorlife.so.<TL_ABI_VERSION>
        shutil.copy2(core / soname, dest / soname)


setup(
    version=version(),
    ext_modules=[Extension("tensorlife._tensorlife", sources=[], libraries=["tensorlife"],
                           extra_link_args=["-Wl,-rpath,$ORIGIN"])],
    cmdclass={"build_ext": BuildWithCore},
)
