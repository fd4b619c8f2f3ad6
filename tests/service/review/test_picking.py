"""The next item found by walking the index is the first of the reviewer's shuffle.

``/next`` no longer orders every open item in Python; its pick must still be exactly what
:func:`service.review.queue.order_for_reviewer` puts first (disputed items before open ones,
skipped ones last), on a real migrated database.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import event

from service.review import store
from service.review.intake import queue_run
from service.review.picking import next_for_reviewer
from service.review.queue import QueuePolicy
from tests.helpers.review_runs import add_run, add_token, open_db

pytestmark = pytest.mark.heavy  # handed out first (tests/helpers/xdist.py)

POLICY = QueuePolicy(seed=20261201, audit_rate=0.5)


def test_the_walk_picks_the_first_item_of_each_reviewers_shuffle(
    tmp_path: Path, database_url: str
) -> None:

    db, blobs = open_db(tmp_path, database_url)
    reviewers = [
        store.Reviewer(add_token(db, f"rev{i}", "reviewer"), f"rev{i}", "reviewer")
        for i in range(4)
    ]
    for i in range(30):
        add_run(db, blobs, f"run{i:03d}", {"R1": "uncertain", "B1": "uncertain"}, outcome="pending")
        with db.write() as s:
            queue_run(s, f"run{i:03d}", POLICY)
    a, b, c, _ = reviewers
    with db.write() as s:  # two labels that disagree make an audit item disputed
        audit = next(i for i in store.available_items(s, a, POLICY.seed) if i.kind == "audit")
        store.submit_review(s, blobs, audit.id, a, "pass")
        assert store.submit_review(s, blobs, audit.id, b, "fail").state == "disputed"
    statements: list[str] = []
    event.listen(db.engine, "before_cursor_execute", lambda *a: statements.append(a[2]))
    for reviewer in reviewers:
        with db.read() as s:
            expected = [i.id for i in store.available_items(s, reviewer, POLICY.seed)]
            pick = next_for_reviewer(s, reviewer.id, POLICY.seed)
            skipped = next_for_reviewer(s, reviewer.id, POLICY.seed, skip=expected[:3])
            wanted = next_for_reviewer(s, reviewer.id, POLICY.seed, want=expected[-1])
            only_skipped = next_for_reviewer(s, reviewer.id, POLICY.seed, skip=expected)
        assert pick.item is not None and pick.item.id == expected[0], reviewer
        assert pick.left == len(expected) >= 30
        assert skipped.item is not None and skipped.item.id == expected[3]
        assert wanted.item is not None and wanted.item.id == expected[-1]
        assert only_skipped.item is not None and only_skipped.item.id == expected[0]
    with db.read() as s:  # the dispute comes first for those who took no part in it
        for_c = next_for_reviewer(s, c.id, POLICY.seed).item
        for_a = next_for_reviewer(s, a.id, POLICY.seed).item
        assert for_c is not None and for_c.id == audit.id
        assert for_a is not None and for_a.id != audit.id
    assert not [q for q in statements if q.lstrip().upper().startswith(("INSERT", "UPDATE"))]
    firsts = set()
    for reviewer in reviewers:
        with db.read() as s:
            chosen = next_for_reviewer(s, reviewer.id, POLICY.seed).item
            assert chosen is not None
            firsts.add(chosen.id)
    assert len(firsts) > 1, "every reviewer was handed the same item (lockstep)"
