"""Calibration sets: items (artifact + criterion), human labels, adjudication and the split.

A label records who said what, when and why. The reference label of an item is:

- the latest adjudicator label when one exists (``adjudicated``);
- otherwise the annotators' common status when they agree (``single`` or ``consensus``);
- otherwise none: the item is ``disputed`` and stays so — no gold label is invented.

A set is split by a seed into a *tuning* part (for writing prompts and thresholds) and a
*held-out* part (the only part the gate reads). The split is stored with the set; by default the
unit of the split is the item's ``group`` (for perturbation sets: the base drawing), so variants
of one drawing never sit on both sides.

Everything here is pure; the file helpers live in :mod:`judges.calibration.setio`.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from regua.errors import CalibrationError
from regua.records import field_dict

STATUSES: tuple[str, ...] = ("pass", "fail", "uncertain", "not_applicable")
Relation = Literal["base", "must_change", "must_not_change", "may_change"]
RELATIONS = ("base", "must_change", "must_not_change", "may_change")
LabelRole = Literal["annotator", "adjudicator"]
LabelProvenance = Literal["human", "project"]
ReferenceState = Literal["single", "consensus", "adjudicated", "disputed", "unlabelled"]
_RELATION_OF: dict[str, Relation] = {
    "base": "base",
    "must_change": "must_change",
    "must_not_change": "must_not_change",
    "may_change": "may_change",
}
_ROLE_OF: dict[str, LabelRole] = {"annotator": "annotator", "adjudicator": "adjudicator"}


def as_relation(value: str | None) -> Relation | None:
    """``value`` as an item relation (None stays None); anything else is a CalibrationError."""
    if value is None:
        return None
    if value not in _RELATION_OF:
        raise CalibrationError(f"item relation must be one of {RELATIONS}: {value!r}")
    return _RELATION_OF[value]


def as_role(value: str) -> LabelRole:
    """``value`` as a label role; anything else is a CalibrationError."""
    if value not in _ROLE_OF:
        raise CalibrationError(f"label role must be annotator|adjudicator: {value!r}")
    return _ROLE_OF[value]


def as_provenance(value: object) -> LabelProvenance:
    """``value`` as a label provenance (missing reads as ``human``, as sets were before)."""
    return "project" if value == "project" else "human"


def _status(value: str) -> str:
    if value not in STATUSES:
        raise CalibrationError(f"label status must be one of {STATUSES}, got {value!r}")
    return value


@dataclass(frozen=True)
class Label:
    """One person's (or one adjudicator's) status for one item, with time and evidence."""

    item_id: str
    annotator: str
    status: str
    time: str
    evidence: str = ""
    role: LabelRole = "annotator"
    level: int | None = None
    """The level on a graded criterion (its status: what the bounds make of it)."""

    def __post_init__(self) -> None:
        """Validate the status, the role and that an annotator is named."""
        _status(self.status)
        if self.role not in ("annotator", "adjudicator"):
            raise CalibrationError(f"label role must be annotator|adjudicator: {self.role!r}")
        if not self.annotator:
            raise CalibrationError("a label needs an annotator")

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return {
            **field_dict(self, "item_id", "annotator", "role", "status", "time", "evidence"),
            **({} if self.level is None else {"level": self.level}),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Label:
        """Inverse of :meth:`to_dict`."""
        role = str(data.get("role") or "annotator")
        level = data.get("level")
        return cls(
            item_id=str(data["item_id"]),
            annotator=str(data["annotator"]),
            status=str(data["status"]),
            time=str(data.get("time") or ""),
            evidence=str(data.get("evidence") or ""),
            role="adjudicator" if role == "adjudicator" else "annotator",
            level=None if level is None else int(level),
        )


@dataclass(frozen=True)
class CalibrationItem:
    """An artifact and the one criterion it is labelled on.

    ``base_item_id`` and ``relation`` tie a perturbed variant to the same criterion on its
    unperturbed base (``must_change`` / ``must_not_change`` pairs); ``group`` is the split unit.
    """

    item_id: str
    artifact_sha256: str
    criterion: str
    task_ref: str
    criterion_kind: str = "necessary"
    artifact_file: str | None = None
    style_tags: tuple[str, ...] = ()
    group: str | None = None
    base_item_id: str | None = None
    relation: Relation | None = None
    perturbation: str | None = None

    def __post_init__(self) -> None:
        """Validate the relation and store the style tags as a tuple."""
        if self.relation is not None and self.relation not in RELATIONS:
            raise CalibrationError(f"item relation must be one of {RELATIONS}: {self.relation!r}")
        object.__setattr__(self, "style_tags", tuple(self.style_tags))

    @property
    def necessary(self) -> bool:
        """True when the criterion is a necessary condition of the task."""
        return self.criterion_kind == "necessary"

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return {
            **field_dict(self, "item_id", "artifact_sha256", "artifact_file", "criterion"),
            **field_dict(self, "criterion_kind", "task_ref"),
            "style_tags": list(self.style_tags),
            **field_dict(self, "group", "base_item_id", "relation", "perturbation"),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CalibrationItem:
        """Inverse of :meth:`to_dict` (empty strings read as missing)."""

        def opt(key: str) -> str | None:
            value = data.get(key)
            return None if value in (None, "") else str(value)

        tags = data.get("style_tags") or ()
        if isinstance(tags, str):
            tags = [t for t in tags.split(";") if t]
        relation = opt("relation")
        return cls(
            item_id=str(data["item_id"]),
            artifact_sha256=str(data["artifact_sha256"]),
            criterion=str(data["criterion"]),
            task_ref=str(data["task_ref"]),
            criterion_kind=str(data.get("criterion_kind") or "necessary"),
            artifact_file=opt("artifact_file"),
            style_tags=tuple(str(t) for t in tags),
            group=opt("group"),
            base_item_id=opt("base_item_id"),
            relation=as_relation(relation),
            perturbation=opt("perturbation"),
        )


@dataclass(frozen=True)
class Reference:
    """The reference status of an item derived from its labels (None when disputed)."""

    status: str | None
    state: ReferenceState
    annotators: tuple[str, ...]


@dataclass(frozen=True)
class Split:
    """A stored, seeded split of a set into tuning and held-out item ids."""

    seed: int
    held_out_fraction: float
    unit: Literal["group", "item"]
    tuning: tuple[str, ...]
    held_out: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return {
            "seed": self.seed,
            "held_out_fraction": self.held_out_fraction,
            "unit": self.unit,
            "tuning": list(self.tuning),
            "held_out": list(self.held_out),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Split:
        """Inverse of :meth:`to_dict`."""
        return cls(
            seed=int(data["seed"]),
            held_out_fraction=float(data["held_out_fraction"]),
            unit="item" if data.get("unit") == "item" else "group",
            tuning=tuple(str(x) for x in data["tuning"]),
            held_out=tuple(str(x) for x in data["held_out"]),
        )


def make_split(
    items: Iterable[CalibrationItem],
    seed: int,
    held_out_fraction: float = 0.5,
    unit: Literal["group", "item"] = "group",
) -> Split:
    """Split items by a seed; with ``unit="group"`` whole groups go to one side."""
    if not 0 < held_out_fraction < 1:
        raise CalibrationError("held_out_fraction must be in (0, 1)")
    item_list = sorted(items, key=lambda i: i.item_id)
    units: dict[str, list[str]] = {}
    for item in item_list:
        key = (item.group or item.item_id) if unit == "group" else item.item_id
        units.setdefault(key, []).append(item.item_id)
    keys = sorted(units)
    random.Random(f"regua-split|{seed}").shuffle(keys)
    if len(keys) < 2:
        raise CalibrationError("a split needs at least two units (groups or items)")
    n_held = min(len(keys) - 1, max(1, math.ceil(len(keys) * held_out_fraction)))
    held = {i for k in keys[:n_held] for i in units[k]}
    return Split(
        seed=seed,
        held_out_fraction=held_out_fraction,
        unit=unit,
        tuning=tuple(i.item_id for i in item_list if i.item_id not in held),
        held_out=tuple(i.item_id for i in item_list if i.item_id in held),
    )


@dataclass(frozen=True)
class CalibrationSet:
    """Items, labels and the stored split of one calibration set."""

    set_id: str
    task_ref: str
    items: tuple[CalibrationItem, ...]
    labels: tuple[Label, ...] = ()
    split: Split | None = None
    description: str = ""
    label_provenance: LabelProvenance = "human"
    """``human`` (people labelled the items) or ``project`` (written by regua's authors)."""
    _index: Mapping[str, CalibrationItem] = field(init=False, repr=False, compare=False)
    _by_item: Mapping[str, tuple[Label, ...]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Validate ids, labels and the split, and index items and labels by item id."""
        object.__setattr__(self, "items", tuple(self.items))
        object.__setattr__(self, "labels", tuple(self.labels))
        index = {i.item_id: i for i in self.items}
        if len(index) != len(self.items):
            raise CalibrationError(f"set {self.set_id}: duplicate item ids")
        by_item: dict[str, list[Label]] = {}
        for label in self.labels:
            if label.item_id not in index:
                raise CalibrationError(f"set {self.set_id}: label for unknown item {label.item_id}")
            by_item.setdefault(label.item_id, []).append(label)
        if self.split is not None:
            known = set(self.split.tuning) | set(self.split.held_out)
            if known != set(index) or set(self.split.tuning) & set(self.split.held_out):
                raise CalibrationError(f"set {self.set_id}: the split does not partition the items")
        object.__setattr__(self, "_index", index)
        object.__setattr__(self, "_by_item", {k: tuple(v) for k, v in by_item.items()})

    def item(self, item_id: str) -> CalibrationItem:
        """The item with this id (CalibrationError when unknown)."""
        try:
            return self._index[item_id]
        except KeyError:
            raise CalibrationError(f"set {self.set_id} has no item {item_id!r}") from None

    def labels_for(self, item_id: str) -> tuple[Label, ...]:
        """Every label of one item, in stored order."""
        return self._by_item.get(item_id, ())

    def reference(self, item_id: str) -> Reference:
        """The reference label of an item (see the module docstring for the rule)."""
        labels = self.labels_for(item_id)
        adjudications = sorted(
            (lb for lb in labels if lb.role == "adjudicator"), key=lambda lb: lb.time
        )
        latest: dict[str, Label] = {}
        for lb in sorted((lb for lb in labels if lb.role == "annotator"), key=lambda lb: lb.time):
            latest[lb.annotator] = lb
        names = tuple(sorted(latest))
        if adjudications:
            return Reference(adjudications[-1].status, "adjudicated", names)
        statuses = {lb.status for lb in latest.values()}
        if not statuses:
            return Reference(None, "unlabelled", names)
        if len(statuses) > 1:
            return Reference(None, "disputed", names)
        return Reference(statuses.pop(), "single" if len(names) == 1 else "consensus", names)

    def reference_level(self, item_id: str) -> int | None:
        """A graded item's reference level: the latest adjudication's, else every annotator's."""
        labels = sorted(self.labels_for(item_id), key=lambda lb: lb.time)
        adjudicated = [lb.level for lb in labels if lb.role == "adjudicator"]
        if adjudicated:
            return adjudicated[-1]
        levels = set({lb.annotator: lb.level for lb in labels if lb.role == "annotator"}.values())
        return levels.pop() if len(levels) == 1 else None

    def annotator_labels(self, item_id: str) -> dict[str, str]:
        """Latest status per annotator (adjudicators excluded) for one item."""
        latest: dict[str, Label] = {}
        for lb in sorted(self.labels_for(item_id), key=lambda lb: lb.time):
            if lb.role == "annotator":
                latest[lb.annotator] = lb
        return {name: lb.status for name, lb in latest.items()}

    def with_split(self, split: Split) -> CalibrationSet:
        """A copy of the set with this split stored."""
        return replace(self, split=split)

    def part(self, name: Literal["tuning", "held_out", "all"]) -> tuple[CalibrationItem, ...]:
        """Items of one side of the stored split (``all`` ignores the split)."""
        if name == "all":
            return self.items
        if self.split is None:
            raise CalibrationError(f"set {self.set_id} has no stored split; make one first")
        wanted = set(self.split.held_out if name == "held_out" else self.split.tuning)
        return tuple(i for i in self.items if i.item_id in wanted)

    def content_hash(self) -> str:
        """sha256 over items, labels and split (what a calibration run was measured on)."""
        payload = {
            "set_id": self.set_id,
            "task_ref": self.task_ref,
            "items": [i.to_dict() for i in self.items],
            "labels": [lb.to_dict() for lb in self.labels],
            "split": None if self.split is None else self.split.to_dict(),
        }
        text = json.dumps(payload, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()

    def meta_dict(self) -> dict[str, Any]:
        """Set-level fields (id, task, description, split) as a JSON-able dict."""
        return {
            **field_dict(self, "set_id", "task_ref", "description", "label_provenance"),
            "split": None if self.split is None else self.split.to_dict(),
        }

    def to_dict(self) -> dict[str, Any]:
        """The whole set as one JSON-able dict."""
        return {
            **self.meta_dict(),
            "items": [i.to_dict() for i in self.items],
            "labels": [lb.to_dict() for lb in self.labels],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CalibrationSet:
        """Inverse of :meth:`to_dict`."""
        split = data.get("split")
        return cls(
            set_id=str(data["set_id"]),
            task_ref=str(data["task_ref"]),
            items=tuple(CalibrationItem.from_dict(i) for i in data.get("items", ())),
            labels=tuple(Label.from_dict(lb) for lb in data.get("labels", ())),
            split=None if split is None else Split.from_dict(split),
            description=str(data.get("description") or ""),
            label_provenance=as_provenance(data.get("label_provenance")),
        )
