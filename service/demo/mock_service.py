"""The embedded service of ``regua demo`` and ``regua run`` with the MOCK vision judge seated.

:func:`start_mock_service` starts the mock judge's HTTP server, points the service's vision
settings at it (``judge_base_url``; the panel ``pelican-bicycle-mock@1``), prepares the service,
stores the demo's declared gate decisions for the mock, lets the mock recognise the samples' frames
among those the service renders and stores (nothing is rendered twice), then starts the service.
Nothing of a live judge is configured or pooled.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from regua.settings import Settings
from service.demo.mock_judge import (
    MOCK_MODEL,
    MOCK_PANEL_ID,
    MOCK_PROFILE_ID,
    MockJudgeServer,
    declare_trust,
    register_mock,
)
from service.demo.mock_truth import teach
from service.demo.samples import load_samples
from service.server.run import BackgroundServer

MOCK_BANNER = (
    f"MOCK judge: {MOCK_PROFILE_ID} (model {MOCK_MODEL}, panel {MOCK_PANEL_ID}) is not a "
    "vision model: it answers from the samples' declared truth (manifest.json), keyed by the "
    "sha256 of their rendered frames; its votes are trusted by the demo's declaration, not by "
    "a calibration"
)


@dataclass
class MockService:
    """The running service and the mock judge it asks."""

    server: BackgroundServer
    mock: MockJudgeServer
    taught: int
    """How many sample drawings the mock recognises by their frames."""

    def stop(self) -> None:
        """Stop the service, then the mock."""
        self.server.stop()
        self.mock.stop()


def mock_settings(settings: Settings, mock_url: str) -> Settings:
    """``settings`` with the vision judge pointed at the mock and the mock's panel."""
    return settings.model_copy(
        update={
            "judge_base_url": mock_url + "/v1",
            "judge_api_key": None,
            "panel": MOCK_PANEL_ID,
        }
    )


def start_mock_service(settings: Settings, samples: Path) -> MockService:
    """Start the mock and the embedded service on it (see the module docstring)."""
    profile, _panel = register_mock()
    mock = MockJudgeServer().start()
    try:
        server = BackgroundServer(mock_settings(settings, mock.url))
        declare_trust(server.ctx.db, profile)
        server.ctx.gate.refresh()
        taught = teach(mock.model, server.ctx, samples, load_samples(samples))
        server.start()
    except BaseException:
        mock.stop()
        raise
    return MockService(server, mock, taught)
