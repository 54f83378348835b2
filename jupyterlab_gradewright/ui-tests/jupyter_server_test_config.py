"""Server configuration for integration tests.

!! Never use this configuration in production because it
opens the server to the world and provide access to JupyterLab
JavaScript objects through the global window variable.

The extension is loaded as built in ../labextension (the committed bundle), whether or not it is
installed in this environment, with its server side configured as a student's server is (its own
server extension on, nbgrader's off: ../jupyter-config); the port is GRADEWRIGHT_UI_PORT's (8888 by
default).
"""

import json
import os
from pathlib import Path
from tempfile import mkdtemp

import jupyterlab.galata
from jupyterlab.galata import configure_jupyter_server

c = get_config()  # noqa: F821 (Jupyter's configuration files are run with get_config defined)
configure_jupyter_server(c)

EXTENSION = Path(__file__).resolve().parent.parent
c.ServerApp.port = int(os.environ.get("GRADEWRIGHT_UI_PORT", "8888"))
c.ServerApp.allow_root = True  # CI's containers run as root
extensions = Path(mkdtemp(prefix="gradewright-labextensions-"))
(extensions / "jupyterlab-gradewright").symlink_to(EXTENSION / "labextension")
for config in sorted((EXTENSION / "jupyter-config").glob("*.json")):
    c.ServerApp.jpserver_extensions.update(json.loads(config.read_text())["ServerApp"]["jpserver_extensions"])
# Galata's helpers (what configure_jupyter_server puts there), then the extension.
c.LabServerApp.extra_labextensions_path = [str(Path(jupyterlab.galata.__file__).parent), str(extensions)]

# Uncomment to set server log level to debug level
# c.ServerApp.log_level = "DEBUG"
