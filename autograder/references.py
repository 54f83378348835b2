"""Which reference a batch grades against (``--reference``, ``auto`` by default), and loading it
from the assignment's manifest."""

from __future__ import annotations

import importlib.util
from functools import cache
from pathlib import Path
from types import ModuleType

from .assignment import Assignment
from .errors import AssignmentError

ReferenceChoice = str  # "auto", or the name of one of the assignment's references


def resolve_reference(choice: ReferenceChoice, assignment: Assignment) -> str:
    """The reference to grade against. ``auto`` is the one named ``torch`` where torch sees a GPU,
    else the manifest's first (numpy's, for the shipped course)."""
    names = list(assignment.reference_paths)
    if choice != "auto":
        load_reference(assignment, choice)  # fail now, with a clear message, if it cannot load
        return choice
    # torch takes about 2 s to import: where there is no NVIDIA GPU (no driver's device files) or no
    # torch, the answer is decided without importing it; only a machine with a GPU pays to ask torch.
    first = "numpy" if "numpy" in names else names[0]
    if "torch" not in names or importlib.util.find_spec("torch") is None or not nvidia_gpu_present():
        return first
    import torch

    return "torch" if torch.cuda.is_available() else first


def nvidia_gpu_present() -> bool:
    """Whether the NVIDIA driver shows a GPU on this machine (its /proc entries or device files)."""
    gpus = Path("/proc/driver/nvidia/gpus")
    return (gpus.is_dir() and any(gpus.iterdir())) or any(Path("/dev").glob("nvidia[0-9]*"))


@cache
def _reference_from(path_text: str, name: str) -> ModuleType:
    path = Path(path_text)
    spec = importlib.util.spec_from_file_location(f"reference_{name}_{abs(hash(path_text))}", path)
    if spec is None or spec.loader is None or not path.is_file():
        raise AssignmentError(f"{path}: the {name} reference of this assignment does not exist")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except ImportError as exc:
        raise AssignmentError(
            f"the {name} reference needs {exc.name}: install it (pip install '.[gpu]' for torch)"
        ) from None
    return module


def load_reference(assignment: Assignment, name: str) -> ModuleType:
    paths = assignment.reference_paths
    if name not in paths:
        raise AssignmentError(
            f"--reference {name}: {assignment.name} has no such reference; its references: {', '.join(paths)}"
        )
    return _reference_from(str(paths[name]), name)
