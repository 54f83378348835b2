"""The sandboxed worker: the only code that runs beside a student's submission.

It is copied into the sandbox's runtime and started there as a script; it imports nothing of the
project, only the standard library and numpy. The grader imports this same file for the framing
functions, so both ends speak one protocol.

Protocol: length-prefixed frames over two pipes (requests in, responses out). A frame is a JSON
header plus binary blobs; an array travels as its raw C-ordered bytes in a blob, named in the header
with its dtype and shape (``{"$array": blob, "dtype": "<f8", "shape": [5, 4]}``): no pickle, and
nothing to parse but JSON (a .npy header is parsed by ``ast.literal_eval``: six times slower for the
small arrays a hidden test sends).
Requests:
    {"op": "load", "cells": [{"index": n, "source": "..."}]}  -> {"ok", "cell_errors", "defined"}
    {"op": "call", "name": f, "args": [...], "kwargs": {...}} -> {"ok", "value"} or {"ok": false, "error"}
    {"op": "watch", "names": [f, ...]}                        -> {"ok", "watching"}
    {"op": "watched"}                                         -> {"ok", "calls": [{"name", "args", "kwargs", "value"}], "dropped"}
The worker trusts nothing it runs: a student's return value is encoded only if it is plain data.
"""

from __future__ import annotations

import json
import os
import struct
import sys
import traceback
import types
from collections.abc import Sequence

HEADER = struct.Struct("!II")  # JSON length, number of blobs
BLOB = struct.Struct("!Q")
MAX_FRAME_BYTES = 256 * 1024 * 1024  # what the grader may send (hidden inputs)
MAX_BLOBS = 4096
CELL_FILE = "<cell {index}>"


class FrameError(Exception):
    """A frame that is malformed, truncated or too large."""


class ChannelClosed(FrameError):
    """The other end closed the channel (it exited, or was killed)."""


# --- framing (shared with the grader) ------------------------------------------------------------


def encode_frame(header: dict, blobs: Sequence[bytes] = ()) -> bytes:
    payload = json.dumps(header, allow_nan=False, separators=(",", ":")).encode()
    parts = [HEADER.pack(len(payload), len(blobs)), payload]
    for blob in blobs:
        parts += [BLOB.pack(len(blob)), blob]
    return b"".join(parts)


def write_frame(fd: int, header: dict, blobs: Sequence[bytes] = ()) -> None:
    view = memoryview(encode_frame(header, blobs))
    while view:
        written = os.write(fd, view)
        view = view[written:]


def read_exact(fd: int, size: int, wait=None) -> bytes:
    """Exactly ``size`` bytes; ``wait(fd)``, when given, is called before each read and may raise
    (the grader's wait has a deadline; the worker's own reads simply block)."""
    chunks, remaining = [], size
    while remaining:
        if wait is not None:
            wait(fd)
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            raise ChannelClosed("the other end closed the channel")
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def read_frame(fd: int, limit: int = MAX_FRAME_BYTES, json_limit: int | None = None, read=read_exact):
    """One frame, refused (FrameError) before it is read in full when it claims more than ``limit``
    bytes in all or ``json_limit`` bytes of header. ``read(fd, size)`` reads exactly ``size`` bytes
    (the grader's reader has a deadline)."""
    json_size, blob_count = HEADER.unpack(read(fd, HEADER.size))
    if json_size > (json_limit or limit) or blob_count > MAX_BLOBS:
        raise FrameError(f"a frame of more than {(json_limit or limit) >> 10} KiB of header or {MAX_BLOBS} arrays")
    total = json_size
    try:
        header = json.loads(read(fd, json_size))
    except (ValueError, RecursionError, MemoryError) as exc:  # UnicodeDecodeError is a ValueError
        raise FrameError(f"a malformed frame ({type(exc).__name__})") from None
    blobs = []
    for _ in range(blob_count):
        (size,) = BLOB.unpack(read(fd, BLOB.size))
        total += size
        if total > limit:
            raise FrameError(f"a frame of more than {limit >> 20} MiB")
        blobs.append(read(fd, size))
    if not isinstance(header, dict):
        raise FrameError("a frame whose header is not an object")
    return header, blobs


# --- values: plain data only ---------------------------------------------------------------------


def encode_value(value, blobs: list[bytes]):
    """Plain data to JSON-able form; arrays become blob references. Anything else is described,
    not sent, so the grader can say what came back."""
    import numpy as np

    if isinstance(value, float) and type(value) in (float, np.float64):
        return {"$float": repr(float(value))}
    if type(value) in (bool, int, str, type(None)):
        return value
    if isinstance(value, np.generic) and type(value) in _NUMPY_SCALARS(np):
        if isinstance(value, np.floating):  # a float32 number keeps its dtype, and so its tolerance
            return encode_value(np.asarray(value), blobs)
        return encode_value(value.item(), blobs)
    if type(value) is np.ndarray:
        if value.dtype.kind not in "biufc" or value.dtype.fields is not None:
            return {"$rejected": "dtype", "kind": value.dtype.kind}
        blobs.append(value.tobytes(order="C"))
        return {"$array": len(blobs) - 1, "dtype": value.dtype.str, "shape": list(value.shape)}
    if type(value) in (list, tuple):
        items = [encode_value(item, blobs) for item in value]
        return {"$tuple": items} if type(value) is tuple else items
    if type(value) is dict and all(type(key) is str for key in value):
        return {"$dict": {key: encode_value(item, blobs) for key, item in value.items()}}
    if isinstance(value, np.ndarray):
        return {"$rejected": "subclass"}
    # Only a codeword and a type's name go back; the grader names the type only if Python itself defines it.
    return {"$rejected": "object", "type": type(value).__name__}


def _NUMPY_SCALARS(np):  # a constant that needs numpy imported first
    return (
        np.bool_,
        np.int8,
        np.int16,
        np.int32,
        np.int64,
        np.uint8,
        np.uint16,
        np.uint32,
        np.uint64,
        np.float16,
        np.float32,
        np.float64,
    )


def decode_value(value, blobs: list[bytes]):
    """The inverse of encode_value, for trusted senders (the grader's own arguments)."""
    import numpy as np

    if isinstance(value, list):
        return [decode_value(item, blobs) for item in value]
    if isinstance(value, dict):
        if "$array" in value:
            flat = np.frombuffer(blobs[value["$array"]], dtype=np.dtype(value["dtype"]))
            return flat.reshape(value["shape"]).copy()  # writable, as the student's code may expect
        if "$tuple" in value:
            return tuple(decode_value(item, blobs) for item in value["$tuple"])
        if "$float" in value:
            return float(value["$float"])
        if "$dict" in value:
            return {key: decode_value(item, blobs) for key, item in value["$dict"].items()}
        raise ValueError(f"unknown value tag {sorted(value)}")
    return value


# --- running a submission ------------------------------------------------------------------------


def _where(tb) -> dict:
    """The cell and line of the student's own code where an exception was raised (the innermost frame
    of theirs), or none. The submission can replace this function: the grader checks what it says
    (reported.py)."""
    found: dict = {"cell": None, "line": None}
    for frame, lineno in traceback.walk_tb(tb):
        name = frame.f_code.co_filename
        if name.startswith("<cell ") and name.endswith(">") and name[6:-1].isdigit():
            found = {"cell": int(name[6:-1]), "line": lineno}
    return found


def _run_cells(namespace: dict, cells: list[dict]) -> list[dict]:
    import warnings

    warnings.filterwarnings("ignore", message=".*is non-interactive, and thus cannot be shown")
    errors = []
    for cell in cells:
        _no_figures(namespace)
        filename = CELL_FILE.format(index=cell["index"])
        try:
            code = compile(cell["source"], filename, "exec")
            exec(code, namespace)  # running the submission is the worker's job
        except SystemExit as exc:
            errors.append(
                {
                    "cell": cell["index"],
                    "type": "SystemExit",
                    "message": f"exit({exc.code!r}) called",
                    "line": _where(exc.__traceback__)["line"],
                }
            )
        except BaseException as exc:  # every failure of student code is reported, not raised
            where, line = cell["index"], getattr(exc, "lineno", None)
            if not isinstance(exc, SyntaxError):
                # A function defined in one cell and called from another failed in the cell that defines it.
                found = _where(exc.__traceback__)
                where, line = (found["cell"], found["line"]) if found["cell"] is not None else (where, None)
            message = exc.msg if isinstance(exc, SyntaxError) else str(exc)
            error = {"cell": where, "type": type(exc).__name__, "message": message[:500], "line": line}
            if where != cell["index"]:
                error["ran_from"] = cell["index"]  # the cell that called it
            errors.append(error)
    return errors


def _call(namespace: dict, header: dict, blobs: list[bytes]) -> tuple[dict, list[bytes]]:
    function = namespace.get(header["name"])
    if not callable(function):
        return {"ok": False, "missing": True}, []
    args = decode_value(header.get("args", []), blobs)
    kwargs = {key: decode_value(value, blobs) for key, value in header.get("kwargs", {}).items()}
    watching = bool(_WATCH.codes)
    try:
        if watching:
            sys.setprofile(_observe)
        try:
            result = function(*args, **kwargs)
        finally:
            if watching:
                sys.setprofile(None)
        out_blobs: list[bytes] = []
        return {"ok": True, "value": encode_value(result, out_blobs)}, out_blobs
    except SystemExit:
        return {"ok": False, "error": {"type": "SystemExit"}}, []
    except RecursionError as exc:
        return {"ok": False, "error": {"type": "RecursionError", **_where(exc.__traceback__)}}, []
    except BaseException as exc:
        # Only the exception's class and line go back: a message could carry the hidden inputs,
        # and so could the name of a class the submission made up.
        # The grader checks the name against its own list of Python's and numpy's exceptions.
        base, own = _public_base(type(exc))
        return {"ok": False, "error": {"type": base, "own_class": own, **_where(exc.__traceback__)}}, []


# --- watched functions: what a question's function gave the functions it uses ----------------------
#
# When a question fails and a function it uses fails its own question, the grader asks whether the one
# explains the other: it watches that function while the question's checks run again, and compares
# each value it returned with what the reference returns for the same arguments. Only calls made by the
# submission's own code are kept (not the grader's direct calls), a bounded number, copied when made.
# What comes back is the submission's to forge, like any answer: it can change that feedback's wording,
# never a score.

MAX_WATCHED_CALLS = 64
MAX_WATCHED_BYTES = 8 * 1024 * 1024
_VARARGS, _VARKEYWORDS = 0x04, 0x08  # inspect.CO_VARARGS, inspect.CO_VARKEYWORDS, without importing inspect


class _Watch:
    def __init__(self) -> None:
        self.codes: dict = {}  # a watched function's code object -> its name in the submission
        self.calls: list[dict] = []
        self.blobs: list[bytes] = []
        self.pending: dict[int, dict] = {}  # a running watched call's frame -> its record
        self.dropped = 0  # calls not kept: past the bounds, or with a value that cannot be copied

    def bytes(self) -> int:
        return sum(len(blob) for blob in self.blobs)


_WATCH = _Watch()


def _watch(namespace: dict, names: object) -> dict:
    global _WATCH
    _WATCH = _Watch()
    for name in names[:10] if isinstance(names, list) else []:
        function = namespace.get(name) if isinstance(name, str) else None
        if isinstance(function, types.FunctionType):
            _WATCH.codes[function.__code__] = name
    return {"ok": True, "watching": sorted(_WATCH.codes.values())}


def _watched() -> tuple[dict, list[bytes]]:
    global _WATCH
    watch, _WATCH = _WATCH, _Watch()
    return {"ok": True, "calls": watch.calls, "dropped": watch.dropped + len(watch.pending)}, watch.blobs


def _arguments(frame) -> tuple[list, dict]:
    """The arguments a call was given, read off its frame as the call starts."""
    code, values = frame.f_code, frame.f_locals
    names = code.co_varnames
    positional, keyword_only = code.co_argcount, code.co_kwonlyargcount
    args = [values[name] for name in names[:positional]]
    kwargs = {name: values[name] for name in names[positional : positional + keyword_only]}
    extra = positional + keyword_only
    if code.co_flags & _VARARGS:
        args += list(values[names[extra]])
        extra += 1
    if code.co_flags & _VARKEYWORDS:
        kwargs.update(values[names[extra]])
    return args, kwargs


def _observe(frame, event, arg) -> None:
    """The profile function while a watched call runs (sys.setprofile)."""
    watch = _WATCH
    if event == "call":
        name = watch.codes.get(frame.f_code)
        if name is None or frame.f_back is None or frame.f_back.f_code is _call.__code__:
            return  # not watched, or the grader's own call of it
        if len(watch.calls) + len(watch.pending) >= MAX_WATCHED_CALLS or watch.bytes() > MAX_WATCHED_BYTES:
            watch.dropped += 1
            return
        try:
            args, kwargs = _arguments(frame)
            record = {
                "name": name,
                "args": [encode_value(value, watch.blobs) for value in args],
                "kwargs": {key: encode_value(value, watch.blobs) for key, value in kwargs.items()},
            }
        except Exception:  # an argument that cannot be copied: the call is not kept
            watch.dropped += 1
            return
        watch.pending[id(frame)] = record
    elif event == "return":
        record = watch.pending.pop(id(frame), {})
        if not record:
            return
        try:
            record["value"] = encode_value(arg, watch.blobs)  # None when the call raised
        except Exception:
            watch.dropped += 1
            return
        watch.calls.append(record)


def _public_base(kind: type) -> tuple[str, bool]:
    """The name of the exception's class if Python or numpy defines it, else of its nearest such
    base, and whether the class is the submission's own."""
    for klass in kind.__mro__:
        if klass.__module__ == "builtins" or klass.__module__.startswith("numpy"):
            return klass.__name__, klass is not kind
    return "BaseException", True


def _no_figures(namespace: dict) -> None:
    """Figures are not shown while grading: matplotlib draws with Agg (MPLBACKEND), ``plt.show()``
    does nothing (and says nothing), and a notebook's ``display(...)`` is a no-op instead of a
    NameError. Called before each cell, so a pyplot imported by the last one is quietened too."""
    namespace.setdefault("display", lambda *args, **kwargs: None)
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None and getattr(pyplot.show, "__name__", "") != "_not_shown":

        def _not_shown(*args, **kwargs):
            return None

        pyplot.show = _not_shown  # type: ignore[attr-defined]


def _silence_output() -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    os.close(devnull)


def _in_runtime() -> bool:
    """Whether this is the sandbox's runtime (this script at the top of its Python's own prefix, as
    runtime.py lays it out), not the grader's own Python (``--unsafe-no-sandbox``)."""
    return os.path.dirname(os.path.abspath(__file__)) == sys.prefix


def _stub_autograder() -> None:
    """Notebooks call ``check("softmax")`` to run their public tests; while grading that is a no-op
    that answers as a passing check does. The runtime has the stub as a file, imported when the notebook
    imports it, as on the student's machine; the grader's own Python would import the grader instead."""
    if _in_runtime():
        return
    stub = types.ModuleType("autograder")
    stub.check = lambda *args, **kwargs: True  # type: ignore[attr-defined]
    sys.modules["autograder"] = stub


def _seed_matplotlib_cache() -> None:
    """Copy the runtime's prebuilt font cache where matplotlib looks, so it need not build one."""
    source = os.path.join(sys.prefix, "share", "matplotlib")  # runtime.MATPLOTLIB_CACHE
    target = os.environ.get("MPLCONFIGDIR")
    if not _in_runtime() or not target or not os.path.isdir(source):
        return
    os.makedirs(target, exist_ok=True)
    for name in os.listdir(source):
        with open(os.path.join(source, name), "rb") as src, open(os.path.join(target, name), "wb") as dst:
            dst.write(src.read())


def answer(namespace: dict, header: dict, blobs: list[bytes]) -> tuple[dict, list[bytes]]:
    """The response to one request, run in ``namespace`` (the submission's)."""
    op = header.get("op")
    if op == "load":
        errors = _run_cells(namespace, header["cells"])
        defined = sorted(name for name, value in namespace.items() if callable(value) and not name.startswith("__"))
        return {"ok": True, "cell_errors": errors, "defined": defined[:1000]}, []
    if op == "call":
        return _call(namespace, header, blobs)
    if op == "watch":
        return _watch(namespace, header.get("names")), []
    if op == "watched":
        return _watched()
    if op == "ping":
        return {"ok": True}, []
    if op == "usage":  # for the benchmarks: this process's peak resident memory
        import resource

        return {"ok": True, "max_rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}, []
    return {"ok": False, "error": {"type": "ProtocolError", "line": None}}, []


def prepare() -> None:
    """What every worker needs before a submission: the runtime's packages on the path, the notebook's
    ``check`` stubbed, matplotlib's font cache in place. The zygote does it once for all its children."""
    if _in_runtime():
        # Python's own site module puts them there already, but a distribution's (Debian's looks in
        # dist-packages) may not: then first, as the runtime's packages are the ones to import.
        site = os.path.join(sys.prefix, "lib", f"python{sys.version_info[0]}.{sys.version_info[1]}", "site-packages")
        if site not in sys.path:
            sys.path.insert(0, site)
    _stub_autograder()
    _seed_matplotlib_cache()


# Settings read once, when the interpreter started: a script run by hand has none of them in its
# environment, so the submission does not see them in os.environ either (/proc/self/environ keeps them).
READ_AT_START = ("PYTHONHASHSEED", "PYTHONIOENCODING")


def _as_a_script() -> None:
    """What the submission sees of its process, as a script run by hand (``python3 main.py``) shows it:
    no arguments (the channels' descriptors are the worker's), none of the settings read at start."""
    del sys.argv[1:]
    for name in READ_AT_START:
        os.environ.pop(name, None)


def serve(request_fd: int, response_fd: int) -> int:
    """Answer requests until the grader closes the channel."""
    _as_a_script()
    # The submission runs in the namespace of a module of its own that is ``__main__``, as a script's
    # or a notebook's is: ``import __main__`` finds its own names, not this worker.
    main_module = types.ModuleType("__main__")
    namespace: dict = main_module.__dict__
    namespace["__builtins__"] = __builtins__
    sys.modules["__main__"] = main_module
    while True:
        try:
            header, blobs = read_frame(request_fd)
        except FrameError:
            return 0
        response, out = answer(namespace, header, blobs)
        if header.get("op") == "load":
            # Output written while the submission loads is the student's to see; output written
            # during graded calls could carry hidden inputs, so from here on it goes nowhere.
            _silence_output()
        response["id"] = header.get("id")
        try:
            write_frame(response_fd, response, out)
        except (OSError, ValueError):
            write_frame(
                response_fd,
                {"ok": False, "id": header.get("id"), "error": {"type": "an unsendable value", "line": None}},
            )


def _reap_as_init() -> None:
    """In a sandbox of its own (bubblewrap's --as-pid-1), the worker is the first process of its PID
    namespace: it forks, and the parent stays as that namespace's init, as the zygote's sandboxes have
    one, reaping what the submission leaves and leaving with the worker's status (128 + N for signal N,
    as bubblewrap's own init does). Returns in the worker only. Its own init rather than bubblewrap's:
    what the submission then sees of process 1 is this same Python, not bubblewrap's command line."""
    worker = os.fork()
    if worker == 0:
        return
    # The channels are the worker's alone: the grader sees end of file the moment the worker ends.
    os.closerange(3, 1 << 16)
    while True:
        pid, status = os.wait()
        if pid == worker:
            code = os.waitstatus_to_exitcode(status)
            os._exit(128 - code if code < 0 else code)


def main(argv: list[str]) -> int:
    request_fd, response_fd = int(argv[1]), int(argv[2])
    if os.getpid() == 1:
        _reap_as_init()
    prepare()
    return serve(request_fd, response_fd)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
