"""service/demo."""
