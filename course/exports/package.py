"""Writing an export: one file, a zip, or a folder (or .tar.gz) of files, byte for byte the same
for the same input (fixed timestamps, fixed order, no random names), and never half-written."""

from __future__ import annotations

import gzip
import io
import os
import secrets
import shutil
import tarfile
import zipfile
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from ..errors import ExportError

FIXED_ZIP_TIME = (1980, 1, 1, 0, 0, 0)
TAR_SUFFIXES = (".tar.gz", ".tgz")


class Package(BaseModel):
    files: list[tuple[str, bytes]]
    container: Literal["file", "zip", "tree"]


def write_package(package: Package, out: Path) -> Path:
    folder = out.parent
    if not folder.is_dir():
        raise ExportError(f"{out}: cannot write here: the folder {folder} does not exist")
    if package.container == "tree" and not out.name.endswith(TAR_SUFFIXES):
        return _write_tree(package, out)
    data = {
        "file": lambda: package.files[0][1],
        "zip": lambda: _zip_bytes(package.files),
        "tree": lambda: _tar_gz_bytes(package.files),
    }[package.container]()
    return write_atomically(out, data)


def write_atomically(out: Path, data: bytes) -> Path:
    """Write ``out`` whole or not at all (a temporary file beside it, then a rename), with the user's
    normal permissions (mode 0666 less the umask, as any program's new file; a temporary file's own
    0600 would stay on the result)."""
    temporary = out.parent / f".{out.name}.{secrets.token_hex(6)}"
    try:
        handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        os.replace(temporary, out)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return out


def _zip_bytes(files: list[tuple[str, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files:
            info = zipfile.ZipInfo(name, date_time=FIXED_ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, data)
    return buffer.getvalue()


def _tar_gz_bytes(files: list[tuple[str, bytes]]) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for name, data in files:
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode, info.uid, info.gid = len(data), 0, 0o644, 0, 0
            archive.addfile(info, io.BytesIO(data))
    return gzip.compress(raw.getvalue(), mtime=0)


def _write_tree(package: Package, out: Path) -> Path:
    staging = out.parent / f".{out.name}.{secrets.token_hex(6)}"
    staging.mkdir(0o777)  # less the umask: a folder with the user's normal permissions
    try:
        for name, data in package.files:
            path = staging / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        if out.exists():
            if not out.is_dir():
                raise ExportError(f"{out}: exists and is not a folder")
            shutil.rmtree(out)
        os.replace(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return out
