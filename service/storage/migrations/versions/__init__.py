"""Alembic revision scripts, one per schema change, applied in order on start-up."""
