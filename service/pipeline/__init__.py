"""service/pipeline."""
