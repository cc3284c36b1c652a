"""zlib-ng's error class, typed as the class it is.

zlib-ng's type stub declares ``error`` as an *instance* of Exception, so a
type checker refuses ``except zlib_ng.error``; every reader of zlib streams
catches ``ZlibError`` from here instead."""

from typing import cast

from zlib_ng import zlib_ng

ZlibError = cast(type[Exception], zlib_ng.error)
