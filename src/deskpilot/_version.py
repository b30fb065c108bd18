"""deskpilot's version, as ``pyproject.toml`` declares it (a unit test keeps the two equal).

A constant rather than ``importlib.metadata.version("deskpilot")``: importing
``importlib.metadata`` costs ``deskpilot --version`` about 15 ms of its 150 ms budget.
"""

VERSION = "0.1.0"
