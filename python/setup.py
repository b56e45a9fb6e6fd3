"""Builds the simdbloom extension: `pip install --no-build-isolation ./python` (offline).

The extension links libsimdbloom statically. The library is built here with the project's CMake
(from the checkout this folder sits in), unless SIMDBLOOM_STATIC_LIB names a libsimdbloom.a
already built (the tests pass the build tree's).
"""
import os
import subprocess

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("SIMDBLOOM_SOURCE_DIR") or os.path.dirname(HERE)  # the checkout


class BuildWithLibrary(build_ext):
    def run(self):
        lib = os.environ.get("SIMDBLOOM_STATIC_LIB")
        redis_lib = os.environ.get("SIMDBLOOM_REDIS_STATIC_LIB")
        if not lib:
            build = os.path.join(self.build_temp, "libsimdbloom")
            subprocess.check_call([
                "cmake", "-S", ROOT, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
                "-DSIMDBLOOM_BUILD_TESTS=OFF", "-DSIMDBLOOM_BUILD_PROGRAMS=OFF",
                "-DSIMDBLOOM_BUILD_EXPERIMENTS=OFF", "-DSIMDBLOOM_BUILD_SHARED=OFF",
                "-DSIMDBLOOM_BUILD_STATIC=ON", "-DSIMDBLOOM_INSTALL=OFF"])
            targets = ["simdbloom_static"]
            if os.path.exists("/usr/include/hiredis/hiredis.h"):  # the fleet filter too
                targets.append("simdbloom_redis_static")
            subprocess.check_call(["cmake", "--build", build, "--parallel", "--target"] + targets)
            lib = os.path.join(build, "libsimdbloom.a")
            if len(targets) > 1:
                redis_lib = os.path.join(build, "libsimdbloom-redis.a")
        for ext in self.extensions:
            # libsimdbloom-redis before libsimdbloom, which it calls; hiredis after both
            ext.extra_objects = ([redis_lib] if redis_lib else []) + [lib]
            if redis_lib:
                ext.define_macros.append(("SIMDBLOOM_WITH_REDIS", "1"))
                ext.libraries.insert(0, "hiredis")
        super().run()


setup(
    name="simdbloom",
    version="1.0.0",
    description="Blocked Bloom filters with SIMD kernels, and a Scrapy duplicate filter",
    packages=["simdbloom"],
    package_data={"simdbloom": ["_simdbloom.pyi", "py.typed"]},
    ext_modules=[Extension(
        "simdbloom._simdbloom",
        sources=["simdbloom/module.c", "simdbloom/keys.c", "simdbloom/filter.c",
                 "simdbloom/redis_filter.c"],
        depends=["simdbloom/_simdbloom.h"],
        include_dirs=[os.path.join(ROOT, "include")], libraries=["m", "pthread"],
        extra_compile_args=["-std=c11", "-Wall", "-Wextra"])],
    cmdclass={"build_ext": BuildWithLibrary},
)
