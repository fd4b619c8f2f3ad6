"""pairwise preferences name their models: ``left_model`` and ``right_model``.

A preferences CSV may say which model made each drawing (columns ``left_model`` and
``right_model``); people's preferences then rank those models as a source of their own. Rows
without the columns map drawings to models through stored runs.

Revision ID: 1300_preference_models
Revises: 1400_graded_adjudication
"""

from __future__ import annotations

from service.storage.migrations.ddl import adding_columns

revision = "1300_preference_models"
down_revision = "1400_graded_adjudication"

upgrade, downgrade = adding_columns(
    "pairwise_preferences", "left_model str(200) null", "right_model str(200) null"
)
