"""Writing an assignment in one master notebook: reading it (master), writing the folder the grader
reads from it (assign), a notebook to start from (template), and math Jupyter renders (math)."""
