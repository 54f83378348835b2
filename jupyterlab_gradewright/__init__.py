"""JupyterLab's Fetch, Check and Submit for Gradewright: a JupyterLab 4 extension (``src/``, built
into ``labextension/``, shipped built so ``pip install`` needs no Node) and the Jupyter server
extension it calls (``handlers.py``), which reaches the Gradewright service with the server's own
hub token (gradewright/cell.py): the browser never holds it."""

from __future__ import annotations

from typing import Any


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    return [{"src": "labextension", "dest": "jupyterlab-gradewright"}]


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "jupyterlab_gradewright"}]


def _load_jupyter_server_extension(server_app: Any) -> None:
    from .handlers import setup

    setup(server_app)
