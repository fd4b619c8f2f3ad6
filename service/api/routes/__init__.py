"""service/api/routes."""
