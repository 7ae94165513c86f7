"""JupyterHub for a class on one machine: its configuration and the launcher of `make class`."""
