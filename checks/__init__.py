"""regua: checks."""
