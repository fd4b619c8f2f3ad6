"""regua: render."""
