"""regua: sandboxed, evidence-first evaluation of visual artifacts produced by language models.

This small base package holds what every stage shares and nothing else: the version, the one
exception hierarchy (:mod:`regua.errors`) and the typed settings (:mod:`regua.settings`).
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("regua")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
