"""service/access."""
