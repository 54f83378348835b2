# Exhausts memory, time and disk, one question at a time; the other questions are honest.
import numpy as np

try:
    with open("/tmp/fill", "wb") as handle:
        for _ in range(1000):
            handle.write(b"x" * (1 << 20))
    print("LEAK: wrote 1000 MiB")
except OSError as error:
    print("blocked: disk", type(error).__name__)
handles = []
try:
    for number in range(10000):
        handles.append(open(f"/tmp/handle-{number}", "w"))
    print("LEAK: opened 10000 files")
except OSError as error:
    print("blocked: open files", len(handles), type(error).__name__)
for handle in handles:
    handle.close()
for path in ["/usr/local/x", "/usr/x", "/x"]:
    try:
        open(path, "w").write("x")
        print("LEAK: wrote", path)
    except OSError as error:
        print("blocked: write", path, type(error).__name__)


def softmax(x, axis=-1):
    hog = np.ones((1 << 31,), dtype=np.float64)  # 16 GiB
    return hog[: x.size].reshape(x.shape)


def scaled_dot_product_attention(Q, K, V, mask=None):
    while True:
        pass


def saturation(d, n=16, trials=200, scaled=True, seed=0):
    blocks = []
    while True:
        blocks.append(bytearray(1 << 28))


def positional_encoding(n_positions, d_model):
    p = np.arange(n_positions)[:, None]
    angles = p / 10000 ** (np.arange(0, d_model, 2)[None, :] / d_model)
    pe = np.zeros((n_positions, d_model))
    pe[:, 0::2] = np.sin(angles)
    pe[:, 1::2] = np.cos(angles[:, : d_model // 2])
    return pe
