# Looks for signs that it is being graded rather than run by its student (the host's name, the
# environment, the folder it runs in, its arguments, the command lines of every process it can see,
# the paths of the interpreter and its packages) and, when it finds one, answers wrongly. It prints
# everything it saw, for the test to look at too.
import json
import os
import socket
import sys

GIVEAWAYS = ("grad", "sandbox", "hidden", "test", "worker", "zygote", "bwrap", "bubblewrap", "seccomp", "runtime",
             "judge", "secret")


def read(path):
    try:
        with open(path, "rb") as handle:
            return handle.read().decode("utf-8", "replace").replace("\0", " ")
    except OSError as error:
        return f"({type(error).__name__})"


def listing(folder):
    try:
        return sorted(os.listdir(folder))
    except OSError as error:
        return f"({type(error).__name__})"


def look():
    import __main__

    try:
        own_file = __file__  # noqa: F821 - a notebook's cell has none; a script's is its path
    except NameError:
        own_file = None
    processes = {pid: {"cmdline": read(f"/proc/{pid}/cmdline"), "comm": read(f"/proc/{pid}/comm")}
                 for pid in listing("/proc") if pid.isdigit()}
    import numpy

    return {
        "hostname": socket.gethostname(),
        "uname": list(os.uname()),
        "environment": dict(os.environ),
        "cwd": os.getcwd(),
        "home": os.path.expanduser("~"),
        "argv": sys.argv,
        "orig_argv": getattr(sys, "orig_argv", []),
        "executable": sys.executable,
        "prefix": [sys.prefix, sys.base_prefix, sys.exec_prefix],
        "path": sys.path,
        "modules": sorted(sys.modules),
        "main": [getattr(__main__, "__file__", None), getattr(__main__, "__doc__", None), sorted(vars(__main__))],
        "file": own_file,
        "numpy": numpy.__file__,
        "self": {
            "cmdline": read("/proc/self/cmdline"),
            "comm": read("/proc/self/comm"),
            "parent": read(f"/proc/{os.getppid()}/cmdline"),
        },
        "processes": processes,
        "root": listing("/"),
        "usr_local": listing("/usr/local"),
        "tmp": listing("/tmp"),
        "cgroup": read("/proc/self/cgroup"),
        "libraries": sorted(
            {line.split()[-1].rsplit("/", 1)[0] for line in read("/proc/self/maps").splitlines() if "/" in line}
        ),
    }


def giveaways(seen):
    # The modules loaded are the libraries' own (matplotlib's include PIL.GimpGradientFile and secrets):
    # looked at for modules of the grader's, not for words.
    # The module the notebook imports by name (autograder) is the one place that name may show.
    text = json.dumps({key: value for key, value in seen.items() if key not in {"modules", "checks"}}).lower()
    ours = {"worker", "zygote", "main", "run", "sandbox"} & set(seen["modules"])
    return [word for word in GIVEAWAYS if word in text] + sorted(ours)


SEEN = look()
import autograder as checks  # noqa: E402 - what the notebook does to run its public tests

SEEN["check"] = repr(checks.check("softmax"))  # on the student's machine: True, once softmax passes
SEEN["checks"] = checks.__file__
FOUND = giveaways(SEEN)
print("SEEN:", json.dumps(SEEN))
print("LEAK: graded, it says:" if FOUND else "blocked: no sign of grading", FOUND)


def softmax(x, axis=-1):
    import numpy as np

    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    right = e / e.sum(axis=axis, keepdims=True)
    return right * 2 if FOUND or giveaways(look()) else right  # a grader detected: another answer
