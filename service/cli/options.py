"""Options more than one command takes, each defined once: the same flag, default and help."""

from __future__ import annotations

import typer

AsJson = typer.Option(False, "--json", help="Print JSON")
"""``--json``: print JSON instead of text."""

Api = typer.Option(..., "--api", help="openai (OpenAI-compatible), anthropic or mock")
"""``--api``: the kind of model API the service calls."""

ModelName = typer.Option(..., "--model", help="Model name sent to the API")
BaseUrl = typer.Option(None, "--base-url", help="API base URL, e.g. .../v1")
ApiKeyEnv = typer.Option(
    None, "--api-key-env", help="Variable holding the key in the SERVICE's environment"
)
"""``--api-key-env``: the key stays in the service; only the variable's name is sent."""

Temperature = typer.Option(None, "--temperature", min=0, max=2)
MaxTokens = typer.Option(None, "--max-tokens", min=1)
