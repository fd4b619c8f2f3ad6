"""regua: sandbox."""
