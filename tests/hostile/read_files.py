# Tries to read the grader's and other students' files from inside the sandbox.
import os

TARGETS = ["__HIDDEN_TEST__", "__REFERENCE__", "__OTHER_SUBMISSION__", "__OUTPUT_DIR__/gradebook.db",
           "__PROJECT__/README.md", "/etc/passwd", "/root/.bashrc", "__SERVER_SECRET_FILE__"]
for target in TARGETS:
    try:
        with open(target, "rb") as handle:
            print("LEAK:", target, handle.read(40))
    except OSError as error:
        print("blocked:", type(error).__name__)
for folder in ["__ASSIGNMENTS__", "__OUTPUT_DIR__", "/root", "/home", "/work"]:
    try:
        print("LEAK:", folder, os.listdir(folder)[:5])
    except OSError as error:
        print("blocked:", type(error).__name__)
print("root holds:", sorted(os.listdir("/")))
print("uid:", os.getuid(), "environment:", sorted(os.environ))


def positional_encoding(n_positions, d_model):
    with open("__HIDDEN_TEST__") as handle:
        return handle.read()
