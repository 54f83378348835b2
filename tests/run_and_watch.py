"""Run a command as a child subreaper and report what it left behind:
``python tests/run_and_watch.py OUT.json COMMAND...`` writes ``{"peak_kib": ..., "leftovers": [...]}``:
the peak resident memory of the command's processes, and the command lines of any process it started
that was still running after it exited (such orphans are re-parented to us, so we look only at our
own children). The command's output and exit status pass through; leftovers are killed."""

import ctypes
import json
import os
import resource
import signal
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
ctypes.CDLL(None).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
completed = subprocess.run(sys.argv[2:])
time.sleep(0.5)  # orphans are re-parented as their parents exit


def children():
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as handle:
                    fields = handle.read().rsplit(b")", 1)[1].split()
                with open(f"/proc/{entry}/cmdline", "rb") as handle:
                    command = handle.read().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if int(fields[1]) == os.getpid():
                found[int(entry)] = (fields[0].decode(), command)
    return found


leftovers = [command for state, command in children().values() if state != "Z"]
for pid in children():
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except OSError:
        pass
with open(sys.argv[1], "w") as handle:
    json.dump({"peak_kib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, "leftovers": leftovers}, handle)
sys.exit(completed.returncode)
