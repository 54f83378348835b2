"""The committed bundle (labextension/) records the digest of the sources it was built from
(``built_from.txt``, written by package.json's build scripts), so that a test fails when src/, style/,
package.json or yarn.lock changed and the bundle was not built again: pip installs the bundle, never src/.

    $ cd jupyterlab_gradewright && jlpm install && jlpm build:prod
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RECORD = HERE / "labextension" / "built_from.txt"


def sources_digest(folder: Path = HERE) -> str:
    """The SHA-256 of what the build reads: src/, style/, package.json, yarn.lock and tsconfig.json."""
    files = sorted(
        [*folder.glob("src/**/*"), *folder.glob("style/**/*")]
        + [folder / name for name in ("package.json", "yarn.lock", "tsconfig.json")]
    )
    digest = hashlib.sha256()
    for path in files:
        if path.is_file():
            digest.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def is_current(folder: Path = HERE) -> bool:
    """Whether the committed bundle was built from the sources as they are now."""
    record = folder / "labextension" / "built_from.txt"
    return record.is_file() and record.read_text(encoding="ascii").strip() == sources_digest(folder)


def build_when_changed(target_name: str, version: str, **kwargs: Any) -> None:
    """pip's build of the extension (hatch-jupyter-builder's build function, pyproject.toml): the
    template's npm build, run only when the bundle was not built from the current sources. The
    template decides by file times, which a fresh clone sets in checkout order: its editable install
    would rebuild (and rewrite) the committed bundle wherever jlpm is found; the recorded digest says
    exactly when a build is due."""
    path = Path(kwargs.get("path", ".")).resolve()
    if is_current(path):
        print(f"{path / 'labextension'}: built from the current sources, not built again", file=sys.stderr)
        return
    from hatch_jupyter_builder import npm_builder  # only in the build's environment

    npm_builder(target_name, version, **kwargs)


def main(argv: list[str]) -> int:
    if argv == ["--write"]:
        RECORD.write_text(sources_digest() + "\n", encoding="ascii")
        return 0
    if not is_current():
        print(f"{RECORD.parent}: not built from the current sources: run `jlpm build:prod` in {HERE}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
