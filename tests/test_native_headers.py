"""Each part of the compiled module says what it needs: every core/native_c/X.c
compiles on its own from the headers it includes (X.h and what X.h includes),
without leaning on what _native.c happened to include before it."""

from __future__ import annotations

import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest

NATIVE_C = Path(__file__).resolve().parent.parent / "core" / "native_c"
INCLUDE = sysconfig.get_paths()["include"]
COMPILER = shutil.which("cc") or shutil.which("gcc")
# Files that do not include their own headers yet (none now: keep it empty).
NOT_YET: set[str] = set()

pytestmark = pytest.mark.skipif(
    COMPILER is None or not (Path(INCLUDE) / "Python.h").exists(), reason="no C compiler or no Python headers"
)


def _parts():
    for path in sorted(NATIVE_C.glob("*.c")):
        marks = (
            [pytest.mark.xfail(reason="does not include its headers yet", strict=True)] if path.name in NOT_YET else []
        )
        yield pytest.param(path, id=path.name, marks=marks)


@pytest.mark.parametrize("part", _parts())
def test_each_c_file_compiles_from_its_own_headers(part):
    # A call with no declaration in sight is an error, not C's silent guess (gcc 12 only warns).
    header = part.with_suffix(".h")
    assert header.exists(), f"{part.name} has no header saying what it offers"
    done = subprocess.run(
        [str(COMPILER), "-fsyntax-only", "-Werror=implicit-function-declaration", f"-I{INCLUDE}", str(part)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
