"""Helpers shared by the test areas (launchers, fakes at the HTTP boundary, factories)."""
