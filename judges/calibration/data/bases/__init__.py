"""Package data: base drawings of the bundled calibration set."""
