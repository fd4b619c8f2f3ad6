"""Package data: the bundled calibration set (see README.md)."""
