"""Alembic migrations of the service database: the environment and the revision scripts."""
