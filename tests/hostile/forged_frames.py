# Writes its own frames on the worker's response pipe while loading, to forge the grader's answer.
# The worker's argv no longer names its channels (a script's argv has no arguments), so the submission
# finds the pipe as any code can: the one descriptor open for writing on a pipe.
import fcntl
import os
import stat
import struct


def _response_pipe():
    for fd in range(3, 256):
        try:
            flags, mode = fcntl.fcntl(fd, fcntl.F_GETFL), os.fstat(fd).st_mode
        except OSError:
            continue
        if stat.S_ISFIFO(mode) and flags & os.O_ACCMODE == os.O_WRONLY:
            return fd
    raise SystemExit("no pipe open for writing")


response_fd = _response_pipe()
junk = b'{"ok": true, "cell_errors": [], "defined": ["softmax"]}'
os.write(response_fd, struct.pack("!II", len(junk), 0) + junk)
os.write(response_fd, b"\xff" * 64)
print("wrote forged frames")


def softmax(x, axis=-1):
    return x
