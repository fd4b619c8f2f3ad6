"""Copying a record's fields by name, once, where a read model or a stored row takes them over.

A view built from a stored row, or a row built from a domain record, often repeats
``name=source.name`` for field after field. :func:`field_dict` gathers those fields in one call
(:func:`fields_of`: all of a dataclass's, as a ``to_dict`` of plain fields returns them, which
:class:`PlainRecord` gives a dataclass) and :class:`FromRecord` builds a pydantic model from a
source's attributes of the same names, so that only the fields that differ are written out.
"""

from __future__ import annotations

from dataclasses import fields
from typing import TYPE_CHECKING, Any, Self, cast

from pydantic import BaseModel

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

__all__ = ["FromRecord", "PlainRecord", "field_dict", "fields_of"]


def field_dict(source: object, *names: str) -> dict[str, Any]:
    """``{name: source.name}`` for each of ``names``, in order; a missing attribute raises."""
    return {name: getattr(source, name) for name in names}


def fields_of(record: DataclassInstance) -> dict[str, Any]:
    """Every field of a dataclass instance by name, in declaration order, values as they are.

    Unlike :func:`dataclasses.asdict`, nested values are neither converted nor copied.
    """
    return field_dict(record, *(f.name for f in fields(record)))


class PlainRecord:
    """A base of dataclasses of plain values: ``to_dict`` is every field by name (slots kept)."""

    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able form: :func:`fields_of` the record."""
        return fields_of(cast("DataclassInstance", self))


class FromRecord(BaseModel):
    """A pydantic model that can be built from any object carrying its fields as attributes."""

    @classmethod
    def of(cls, source: object, **values: Any) -> Self:
        """This model of ``source``: each field not given in ``values`` is read from ``source``.

        Every declared field that ``values`` leaves out must be an attribute of ``source``
        (an ``AttributeError`` otherwise: no field falls back to its default unseen).
        """
        names = [name for name in cls.model_fields if name not in values]
        return cls(**field_dict(source, *names), **values)
