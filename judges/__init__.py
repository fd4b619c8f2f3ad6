"""regua: judges."""
