"""``regua run`` (what ``make run`` calls): the embedded service with the demo samples loaded."""

from __future__ import annotations

import threading

from rich.console import Console

from regua.client import Client
from regua.settings import Settings
from service.api.client import read_token
from service.demo.mock_service import MOCK_BANNER, start_mock_service
from service.demo.pages import web_pages
from service.demo.samples import default_samples_dir, submit_samples

MARKER = ".demo-loaded"


def serve_with_demo(settings: Settings) -> None:
    """Serve in the foreground; on the first start in a data folder, submit the samples.

    The service's vision judge is the demo's MOCK judge (see :mod:`service.demo.mock_judge`).
    """
    console = Console()
    console.print(MOCK_BANNER, highlight=False)
    service = start_mock_service(settings, default_samples_dir())
    server = service.server
    token = read_token(settings.data_dir)
    marker = settings.data_dir / MARKER
    if not marker.exists() and token:
        client = Client(server.url, token)
        pairs = submit_samples(client, default_samples_dir())
        client.close()
        marker.write_text("\n".join(run_id for _, run_id in pairs) + "\n")
        console.print(f"loaded {len(pairs)} demo samples (runs listed in {marker})")
    loaded = marker.read_text().split() if marker.exists() else []
    console.print(f"regua is running at [bold]{server.url}[/bold]; web pages:")
    for what, address in web_pages(server.url, loaded[0] if loaded else None):
        console.print(f"  {what:<9} {address}", highlight=False, soft_wrap=True)
    console.print(
        f"admin token: [bold]{token}[/bold]  (also in {settings.data_dir / 'admin-token'})"
    )
    console.print("try: curl -H 'Authorization: Bearer <token>' " + f"{server.url}/v1/runs")
    console.print("press Ctrl-C to stop")
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        service.stop()
