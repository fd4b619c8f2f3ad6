"""The ``sandbox`` block of every result is measured inside the sandbox (issue 14, item 15).

What a submitter reads in the render log (``render.json`` → ``sandbox``) and what is stored with
the render record is what the worker saw from inside: its uid, capabilities, namespaces compared
with the host's, interfaces and routes — not a fixed description of what the backend means to do.
"""

from __future__ import annotations

import pytest

from sandbox import WorkerPool
from sandbox.inside import NAMESPACES, measure, sandbox_block
from tests.sandbox.conftest import require_backend

pytestmark = pytest.mark.sandbox


def test_the_block_is_what_the_worker_measured_inside() -> None:
    require_backend("bubblewrap")
    with WorkerPool("bubblewrap", handler="sandbox.probe:create_handler", size=1) as pool:
        outcome = pool.run({"op": "echo", "value": 1})
    assert outcome.ok, outcome.detail
    block = outcome.sandbox
    assert block["measured"] is True and block["backend"] == "bubblewrap"
    assert (block["uid"], block["gid"], block["groups"]) == (65534, 65534, [])
    assert block["cap_eff"] == "0000000000000000" and block["no_new_privs"] is True
    assert block["hostname"] == "sandbox"
    assert block["own_namespaces"] == sorted(NAMESPACES) and block["shared_namespaces"] == []
    assert (block["interfaces"], block["routes"]) == (["lo"], [])
    assert block["network"] == "loopback-only"


def test_the_same_measurement_on_the_host_says_otherwise() -> None:
    """Measured, not declared: the host process itself shares every namespace with the host and
    is not uid 65534, and the block says so."""
    host = sandbox_block("none", measure())
    assert host["own_namespaces"] == [] and host["shared_namespaces"] == sorted(NAMESPACES)
    assert host["uid"] != 65534 or host["hostname"] != "sandbox"


def test_a_job_no_worker_ran_says_nothing_was_measured() -> None:
    assert sandbox_block("bubblewrap", None) == {"backend": "bubblewrap", "measured": False}
