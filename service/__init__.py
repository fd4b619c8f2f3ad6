"""regua: service."""
