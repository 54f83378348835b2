"""The committed bundle (labextension/) records the digest of the sources it was built from
(``built_from.txt``, written by package.json's build scripts), so that a test fails when src/, style/,
package.json or yarn.lock changed and the bundle was not built again: pip installs the bundle, never src/.

    $ cd jupyterlab_gradewright && jlpm install && jlpm build:prod
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

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


def main(argv: list[str]) -> int:
    if argv == ["--write"]:
        RECORD.write_text(sources_digest() + "\n", encoding="ascii")
        return 0
    recorded = RECORD.read_text(encoding="ascii").strip() if RECORD.is_file() else ""
    if recorded != sources_digest():
        print(f"{RECORD.parent}: not built from the current sources: run `jlpm build:prod` in {HERE}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
