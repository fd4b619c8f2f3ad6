"""service/calibration."""
