"""tokens: keyed hashes, expiry and revocation; web sessions; unblinded reviews.

Existing token rows keep their bare sha256 and are marked ``hash_scheme = 'sha256'``; the
service re-hashes each with the installation secret on its first use.

Revision ID: 0400_access_sessions
Revises: 0300_gate_profile_hash
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0400_access_sessions"
down_revision = "0300_gate_profile_hash"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add the token columns, the ``web_sessions`` table and ``reviews.unblinded``."""
    with op.batch_alter_table("api_tokens") as batch:
        batch.add_column(
            sa.Column("hash_scheme", sa.String(length=16), nullable=False, server_default="sha256")
        )
        batch.add_column(sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True))
    op.create_table(
        "web_sessions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("session_hash", sa.String(length=64), nullable=False),
        sa.Column("token_id", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["token_id"], ["api_tokens.id"], name="fk_web_sessions_token_id_api_tokens"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_web_sessions"),
        sa.UniqueConstraint("session_hash", name="uq_web_sessions_session_hash"),
    )
    op.create_index("ix_web_sessions_token_id", "web_sessions", ["token_id"])
    with op.batch_alter_table("reviews") as batch:
        batch.add_column(
            sa.Column("unblinded", sa.Boolean(), nullable=False, server_default=sa.false())
        )


def downgrade() -> None:
    """Drop what :func:`upgrade` added."""
    with op.batch_alter_table("reviews") as batch:
        batch.drop_column("unblinded")
    op.drop_index("ix_web_sessions_token_id", table_name="web_sessions")
    op.drop_table("web_sessions")
    with op.batch_alter_table("api_tokens") as batch:
        batch.drop_column("revoked_at")
        batch.drop_column("expires_at")
        batch.drop_column("hash_scheme")
