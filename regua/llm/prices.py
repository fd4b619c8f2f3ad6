"""The one price table (``REGUA_PRICE_TABLE``): USD per million tokens, by API then model.

The file is YAML::

    version: "2026-12-01"
    prices:
      openai:
        gpt-4o-mini: {input_per_million: 0.15, output_per_million: 0.6}
      anthropic:
        claude-sonnet-4: {input_per_million: 3, output_per_million: 15}

A cost is computed only from this table and the tokens the provider reported (a
:class:`~regua.llm.call.Usage`); without a table, a price for the api+model or a token count it
is ``None`` ("not available"), never estimated.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from regua.errors import ConfigurationError
from regua.llm.call import Usage
from regua.safe_yaml import load_yaml


class Price(BaseModel):
    """The price of one api+model."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    input_per_million: float = Field(ge=0)
    output_per_million: float = Field(ge=0)


class PriceTable(BaseModel):
    """A versioned table of prices by api, then model."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    version: str = Field(min_length=1, max_length=100)
    prices: dict[str, dict[str, Price]] = Field(default_factory=dict)

    @field_validator("version", mode="before")
    @classmethod
    def _as_text(cls, value: object) -> object:
        """YAML reads ``version: 2026-12-01`` as a date and ``version: 3`` as a number."""
        return str(value) if isinstance(value, int | float | date) else value


@dataclass(frozen=True)
class Cost:
    """A cost in USD (None: not available) and the table version it came from."""

    usd: float | None
    table_version: str | None


def load_prices(path: Path | None) -> PriceTable | None:
    """Read the price table (None without one); a bad file names itself and the problem."""
    if path is None:
        return None
    try:
        doc = load_yaml(path.read_text(encoding="utf-8"))
        return PriceTable.model_validate(doc)
    except OSError as exc:
        raise ConfigurationError(f"REGUA_PRICE_TABLE {path}: cannot read it ({exc})") from exc
    except (yaml.YAMLError, ValidationError) as exc:
        raise ConfigurationError(f"REGUA_PRICE_TABLE {path}: not a price table: {exc}") from exc


def cost_of(table: PriceTable | None, api: str, model: str, usage: Usage | None) -> Cost:
    """The cost of one call from the table (None when anything it needs is unknown)."""
    if table is None:
        return Cost(None, None)
    price = table.prices.get(api, {}).get(model)
    tokens_in = usage.input_tokens if usage else None
    tokens_out = usage.output_tokens if usage else None
    if price is None or tokens_in is None or tokens_out is None:
        return Cost(None, table.version)
    usd = (tokens_in * price.input_per_million + tokens_out * price.output_per_million) / 1e6
    return Cost(round(usd, 10), table.version)
