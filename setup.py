"""Build step for the optional compiled module; everything else is in pyproject.toml.

``packscope.core._native`` (core/_native.c) is a small C extension with
compiled versions of the hottest byte loops.  It is optional: when there is
no C compiler (or no Python headers, or the compile fails for any other
reason) the build prints a warning and goes on without it, and packscope
runs its pure-Python path (``packscope --version`` says which).
"""

from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class OptionalBuildExt(build_ext):
    """build_ext that never fails the install: ``optional=True`` covers a
    failing compile, this also covers a missing or unusable compiler, which
    setuptools reports before it gets to the extension."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as e:  # any build failure means "pure path"
            self._skip(e)

    def build_extension(self, ext) -> None:
        try:
            super().build_extension(ext)
        except Exception as e:
            self._skip(e)

    def _skip(self, e: Exception) -> None:
        print(f"warning: packscope's compiled module was not built ({e}); the pure-Python path will be used")


setup(
    ext_modules=[
        Extension(
            "packscope.core._native",
            sources=["core/_native.c"],
            # core/_native.c includes these (one translation unit): a change to any rebuilds it
            depends=sorted(str(p) for p in Path("core/native_c").glob("*.[ch]")),
            libraries=["z"],  # zlib: pack_info inflates a delta's first bytes for its result size
            optional=True,
        )
    ],
    cmdclass={"build_ext": OptionalBuildExt},
)
