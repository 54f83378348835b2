"""What one submission's worker may use (memory, time, processes, files): the limits an assignment
sets in ``[limits]`` (and a course in ``[defaults.limits]``), and how the worker's process takes them.
Apart from ``process.py`` (which drives a running worker) because the manifests, the grading options
and every runner read them without starting anything."""

from __future__ import annotations

import resource

from pydantic import BaseModel, ConfigDict, Field


class Limits(BaseModel):
    """What one submission's worker may use. Defaults are documented in the README."""

    model_config = ConfigDict(extra="forbid")  # a misspelt limit is an error, never silently the default

    # Memory of the submission's worker, in MiB (its address space).
    memory_mib: int = Field(default=2048, ge=64)
    # Seconds one call of a student's function may take; a function that times out is not called again.
    call_timeout: float = Field(default=10.0, gt=0)
    # Seconds for the whole submission: loading the notebook and every call.
    submission_timeout: float = Field(default=120.0, gt=0)
    # CPU seconds the worker may use in all.
    cpu_seconds: int = Field(default=300, ge=1)
    # Processes (and threads) the submission may run at once.
    processes: int = Field(default=8, ge=1)
    # Files the worker may hold open at once.
    open_files: int = Field(default=64, ge=16)
    # The largest file the submission may write, in MiB.
    file_mib: int = Field(default=16, ge=1)
    # The size of the sandbox's own /tmp and /dev/shm, in MiB each.
    tmp_mib: int = Field(default=16, ge=1)

    def rlimits(self, more_processes: int = 0) -> list[tuple[str, int]]:
        """The resource limits, by name (the zygote's child sets them too): ``more_processes`` for
        the processes of the sandbox's own that run beside the submission under the same uid."""
        return [
            ("RLIMIT_AS", self.memory_mib * 1024 * 1024),
            ("RLIMIT_CPU", self.cpu_seconds),
            ("RLIMIT_NPROC", self.processes + more_processes),
            ("RLIMIT_NOFILE", self.open_files),
            ("RLIMIT_FSIZE", self.file_mib * 1024 * 1024),
            ("RLIMIT_CORE", 0),
        ]

    def apply(self) -> None:
        """Set the limits on the current process (called in the child, before exec)."""
        for name, value in self.rlimits():
            resource.setrlimit(getattr(resource, name), (value, value))
