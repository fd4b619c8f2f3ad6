"""service/evaluation."""
