# Leaves processes behind (a daemon that sleeps forever), and tries a fork bomb.
import os
import sys
import time

pid = os.fork()
if pid == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv(sys.executable, [sys.executable, "-c", "import time\nwhile True: time.sleep(1)", "hostile-daemon-marker"])
    os._exit(0)
os.waitpid(pid, 0)
children = 0
try:
    for _ in range(10000):
        if os.fork() == 0:
            os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(60)", "hostile-daemon-marker"])
        children += 1
    print("LEAK: forked", children)
except OSError as error:
    print("blocked: fork bomb stopped after", children, "children:", type(error).__name__)


def softmax(x, axis=-1):
    import numpy as np

    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)
