"""Human-to-human agreement on the same items (simple agreement and Cohen's kappa).

Reported beside the judge's numbers so a reader sees whether the rubric itself is ambiguous:
a judge cannot be expected to agree with humans better than humans agree with each other.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from judges.calibration.metrics import Estimate, bootstrap_rate, kappa_estimate


@dataclass(frozen=True)
class HumanAgreement:
    """Agreement between annotators on items labelled by at least two of them.

    ``agreement``/``kappa`` pool every annotator pair on every shared item (for kappa the pair's
    two names are ordered alphabetically as rater A and rater B); ``pairs`` lists each annotator
    pair separately.
    """

    n_items: int
    agreement: Estimate
    kappa: Estimate
    pairs: tuple[Mapping[str, Any], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return {
            "n_items": self.n_items,
            "agreement": self.agreement.to_dict(),
            "kappa": self.kappa.to_dict(),
            "pairs": [dict(p) for p in self.pairs],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> HumanAgreement:
        """Inverse of :meth:`to_dict`."""
        return cls(
            n_items=int(data["n_items"]),
            agreement=Estimate.from_dict(data["agreement"]),
            kappa=Estimate.from_dict(data["kappa"]),
            pairs=tuple(dict(p) for p in data.get("pairs") or ()),
        )


def human_agreement(
    per_item: Sequence[Mapping[str, str]], *, seed: int = 0, n_boot: int = 1000
) -> HumanAgreement:
    """Agreement from ``[{annotator: status}, ...]`` (one mapping per item)."""
    a_all: list[str] = []
    b_all: list[str] = []
    by_pair: dict[tuple[str, str], tuple[list[str], list[str]]] = {}
    n_items = 0
    for labels in per_item:
        if len(labels) < 2:
            continue
        n_items += 1
        for x, y in combinations(sorted(labels), 2):
            a_all.append(labels[x])
            b_all.append(labels[y])
            left, right = by_pair.setdefault((x, y), ([], []))
            left.append(labels[x])
            right.append(labels[y])
    pairs = []
    for (x, y), (left, right) in sorted(by_pair.items()):
        agree = bootstrap_rate(
            [float(p == q) for p, q in zip(left, right, strict=True)],
            [1.0] * len(left),
            seed=seed,
            n_boot=n_boot,
        )
        kappa = kappa_estimate(left, right, seed=seed + 1, n_boot=n_boot)
        pairs.append(
            {
                "annotators": [x, y],
                "n": len(left),
                "agreement": agree.to_dict(),
                "kappa": kappa.to_dict(),
            }
        )
    return HumanAgreement(
        n_items=n_items,
        agreement=bootstrap_rate(
            [float(p == q) for p, q in zip(a_all, b_all, strict=True)],
            [1.0] * len(a_all),
            seed=seed,
            n_boot=n_boot,
        ),
        kappa=kappa_estimate(a_all, b_all, seed=seed + 1, n_boot=n_boot),
        pairs=tuple(pairs),
    )
