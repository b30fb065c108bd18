"""The seam to the real machine: windows, apps, accessibility trees, input and capture."""
