"""tokens: keyed hashes, expiry and revocation; web sessions; unblinded reviews.

Existing token rows keep their bare sha256 and are marked ``hash_scheme = 'sha256'``; the
service re-hashes each with the installation secret on its first use.

Revision ID: 0400_access_sessions
Revises: 0300_gate_profile_hash
"""

from __future__ import annotations

import sqlalchemy as sa

from service.storage.migrations.ddl import (
    add_columns,
    column,
    create_table,
    drop_columns,
    drop_tables,
)

revision = "0400_access_sessions"
down_revision = "0300_gate_profile_hash"


def upgrade() -> None:
    """Add the token columns, the ``web_sessions`` table and ``reviews.unblinded``."""
    add_columns(
        "api_tokens",
        column("hash_scheme str(16)", server_default="sha256"),
        "expires_at datetime null",
        "revoked_at datetime null",
    )
    create_table(
        "web_sessions",
        "id int",
        "session_hash str(64)",
        "token_id int",
        "created_at datetime",
        "expires_at datetime",
        "revoked_at datetime null",
        keys=("token_id -> api_tokens", "unique session_hash"),
        indexes=("token_id",),
    )
    add_columns("reviews", column("unblinded bool", server_default=sa.false()))


def downgrade() -> None:
    """Drop what :func:`upgrade` added."""
    drop_columns("reviews", "unblinded")
    drop_tables("web_sessions")
    drop_columns("api_tokens", "revoked_at", "expires_at", "hash_scheme")
