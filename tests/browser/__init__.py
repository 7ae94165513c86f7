"""Browser tests: JupyterLab driven by Playwright in Debian's Chromium."""
