"""leak flags by overlap: the overlapping text and the share of the prompt's 8-grams.

A reply that shares a run of 8 consecutive (normalised) words with a reserved prompt is flagged
with kind ``overlap``; ``leak_flags.overlap`` keeps the reply's overlapping text and
``leak_flags.share`` the share of the prompt's 8-grams the reply contains (both NULL for the
``canary`` and ``prompt`` kinds).

Revision ID: 1310_leak_overlap
Revises: 1300_preference_models
"""

from __future__ import annotations

from service.storage.migrations.ddl import adding_columns

revision = "1310_leak_overlap"
down_revision = "1300_preference_models"

upgrade, downgrade = adding_columns("leak_flags", "overlap text null", "share float null")
