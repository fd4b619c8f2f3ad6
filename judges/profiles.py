"""Judge profiles and panels declared as data: the YAML schema and its validation.

A judge file holds ``profiles`` (kind, model, API, base URL, the *name* of the environment
variable holding the key, prompt template version, parameters, thresholds) and ``panels``
(profiles per criterion, for one task family)::

    profiles:
      - id: vision-strict-gpt@1
        kind: vision-llm
        api: openai                 # or anthropic
        model: gpt-4o
        base_url: https://api.openai.com/v1
        api_key_env: OPENAI_API_KEY # the key itself never goes in a file
        provider: openai            # kept off work of its own provider when the panel says so
        prompt_version: criterion-json-strict@1
        params: {temperature: 0}
    panels:
      - id: pelican-three-judges@1
        family: pelican-bicycle
        exclude_own_provider: true
        assignments:
          "*": [static@1, geometry@2, vision-strict-gpt@1]
          F1: [static@1]

Every error names the file and the field. Building a profile fills the kind's defaults (the
built-in vision parameters, the geometry thresholds), so a profile's content hash covers every
value its judge runs with. Registering and freezing files: :mod:`judges.judge_files`. Pure.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from judges.builtin import GEOMETRY_THRESHOLDS, VISION_PARAMS
from judges.default_registry import get_profile, registry
from judges.model import JudgeProfile
from judges.panel import ALL_CRITERIA, ANY_FAMILY, DEFAULT_MAX_LEVEL_SPREAD, JudgePanel
from judges.vision.templates import BALANCED, TEMPLATES, template_text
from regua.errors import ConfigurationError
from regua.records import field_dict
from regua.safe_yaml import load_yaml
from tasks import bundled_registry

ENV_NAME = r"^[A-Za-z_][A-Za-z0-9_]*$"
VISION_ONLY_FIELDS = ("api", "base_url", "api_key_env", "prompt_version", "prompt_template")


class ProfileDoc(BaseModel):
    """One judge profile as written in a judge file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._+-]*@[A-Za-z0-9._-]+$")
    kind: str
    model: str | None = None
    api: Literal["openai", "anthropic"] | None = None
    base_url: str | None = Field(default=None, pattern=r"^https?://\S+$")
    api_key_env: str | None = Field(default=None, pattern=ENV_NAME)
    provider: str | None = None
    prompt_version: str | None = None
    prompt_template: str | None = None
    params: dict[str, JsonValue] = Field(default_factory=dict)
    thresholds: dict[str, JsonValue] = Field(default_factory=dict)
    description: str = ""


class PanelDoc(BaseModel):
    """One panel as written in a judge file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._+-]*@[A-Za-z0-9._-]+$")
    family: str
    assignments: dict[str, list[str]] = Field(min_length=1)
    description: str = ""
    exclude_own_provider: bool = False
    adjudicator: str | None = None
    disagreement: Literal["split", "any_fail_vs_pass"] = "split"
    max_level_spread: float = Field(default=DEFAULT_MAX_LEVEL_SPREAD, ge=0)


class JudgeFileDoc(BaseModel):
    """A whole judge file: profiles and/or panels."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    profiles: list[ProfileDoc] = Field(default_factory=list)
    panels: list[PanelDoc] = Field(default_factory=list)


@dataclass(frozen=True)
class JudgeFile:
    """A parsed judge file: its profiles built, its panels as declared (checked on register)."""

    source: str
    profiles: tuple[JudgeProfile, ...]
    panels: tuple[PanelDoc, ...]


def _where(loc: Sequence[int | str]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(file)"


def _validation_lines(exc: ValidationError) -> str:
    return "\n".join(f"  {_where(e['loc'])}: {e['msg']}" for e in exc.errors())


def _secretish(name: object) -> bool:
    low = str(name).lower()
    return low != "api_key_env" and ("key" in low or "secret" in low)


def _refuse_keys(data: object, source: str) -> None:
    """A key written into a file (a profile field or a parameter) is refused before anything."""
    if not isinstance(data, dict):
        return
    for i, prof in enumerate(data.get("profiles") or []):
        if not isinstance(prof, dict):
            continue
        params = prof.get("params")
        names = [*prof, *(params if isinstance(params, dict) else ())]
        if any(_secretish(k) for k in names):
            raise ConfigurationError(
                f"{source}: profiles[{i}]: an API key never goes in a judge file; name the "
                "environment variable that holds it with api_key_env"
            )


def parse_judge_text(text: str, source: str = "<text>") -> JudgeFile:
    """Parse and validate a judge file's text (profiles built, panels kept as declared).

    Raises :class:`ConfigurationError` naming ``source`` and each bad field.
    """
    try:
        data = load_yaml(text)
    except yaml.YAMLError as exc:
        raise ConfigurationError(f"{source}: not valid YAML: {exc}") from exc
    if data is None:
        raise ConfigurationError(f"{source}: empty judge file (give profiles and/or panels)")
    if not isinstance(data, dict):
        raise ConfigurationError(f"{source}: a judge file is a mapping with profiles and panels")
    _refuse_keys(data, source)
    try:
        doc = JudgeFileDoc.model_validate(data)
    except ValidationError as exc:
        raise ConfigurationError(
            f"{source}: invalid judge file:\n{_validation_lines(exc)}"
        ) from exc
    if not doc.profiles and not doc.panels:
        raise ConfigurationError(f"{source}: empty judge file (give profiles and/or panels)")
    profiles = tuple(build_profile(p, f"{source}: profile {p.id}") for p in doc.profiles)
    _no_duplicates([p.id for p in profiles], f"{source}: profile")
    _no_duplicates([p.id for p in doc.panels], f"{source}: panel")
    return JudgeFile(source, profiles, tuple(doc.panels))


def _no_duplicates(ids: Sequence[str], what: str) -> None:
    seen: set[str] = set()
    for i in ids:
        if i in seen:
            raise ConfigurationError(f"{what} {i} is declared twice")
        seen.add(i)


def _prompt(doc: ProfileDoc, where: str) -> tuple[str, str]:
    """(version, text) of a vision profile's prompt template."""
    version = doc.prompt_version or BALANCED
    if doc.prompt_template is None:
        try:
            return version, template_text(version)
        except ConfigurationError as exc:
            raise ConfigurationError(f"{where}: prompt_version: {exc}") from None
    if doc.prompt_version is None:
        raise ConfigurationError(f"{where}: prompt_template text needs its own prompt_version")
    if version in TEMPLATES and TEMPLATES[version] != doc.prompt_template:
        raise ConfigurationError(
            f"{where}: prompt_version {version} names a built-in template with other text; "
            "give your text its own version"
        )
    if "\n---\n" not in doc.prompt_template:
        raise ConfigurationError(
            f"{where}: prompt_template needs a system part, a line '---', and a user part"
        )
    return version, doc.prompt_template


def _vision(doc: ProfileDoc, where: str) -> JudgeProfile:
    version, text = _prompt(doc, where)
    params: dict[str, Any] = {"api": doc.api or "openai", **VISION_PARAMS, **doc.params}
    for name in ("base_url", "api_key_env", "provider"):
        value = getattr(doc, name)
        if value is not None:
            params[name] = value
    return JudgeProfile(
        **field_dict(doc, "id", "kind", "model", "thresholds", "description"),
        prompt_template=text,
        prompt_version=version,
        params=params,
    )


def _geometry(doc: ProfileDoc, where: str) -> JudgeProfile:
    unknown = sorted(set(doc.thresholds) - set(GEOMETRY_THRESHOLDS))
    if unknown:
        known = ", ".join(sorted(GEOMETRY_THRESHOLDS))
        raise ConfigurationError(
            f"{where}: unknown geometry threshold {unknown[0]!r}; known: {known}"
        )
    base = get_profile("geometry@2")  # recognition is never geometry's: B1 stays veto-only
    return JudgeProfile(
        id=doc.id,
        kind=doc.kind,
        model=doc.model,
        params={**dict(base.params), **doc.params},
        thresholds={**GEOMETRY_THRESHOLDS, **doc.thresholds},
        description=doc.description,
    )


def build_profile(doc: ProfileDoc, where: str) -> JudgeProfile:
    """The immutable profile a declaration describes, with its kind's defaults filled in."""
    kinds = registry().kinds()
    if doc.kind not in kinds:
        raise ConfigurationError(
            f"{where}: kind {doc.kind!r} is not a registered judge kind; known: {', '.join(kinds)}"
        )
    if doc.kind == "vision-llm":
        return _vision(doc, where)
    extra = [f for f in VISION_ONLY_FIELDS if getattr(doc, f) is not None]
    if extra:
        raise ConfigurationError(f"{where}: {extra[0]} is only for vision-llm profiles")
    if doc.kind == "geometry":
        return _geometry(doc, where)
    params = {**doc.params, **({"provider": doc.provider} if doc.provider else {})}
    return JudgeProfile(
        id=doc.id,
        kind=doc.kind,
        model=doc.model,
        params=params,
        thresholds=doc.thresholds,
        description=doc.description,
    )


Families = Mapping[str, Collection[str]]
"""Task family → every criterion id of its registered versions."""
FamilySource = Callable[[], Families]
"""Where the families beyond the bundled ones come from (the configured task store), asked only
when a panel names a family the bundled tasks do not have."""


def bundled_families() -> dict[str, set[str]]:
    """Task family → every criterion id of its bundled task versions."""
    out: dict[str, set[str]] = {}
    for spec in bundled_registry().all():
        out.setdefault(spec.family, set()).update(c.id for c in spec.criteria)
    return out


def _families_for(family: str, wanted: set[str], source: FamilySource | None) -> Families:
    """The bundled families, plus the source's when the panel needs one the bundle lacks."""
    families: Families = bundled_families()
    if family == ANY_FAMILY:
        needed = not wanted <= set().union(*families.values())
    else:
        needed = family not in families
    if needed and source is not None:
        families = {**families, **source()}
    return families


def build_panel(
    doc: PanelDoc,
    where: str,
    known_profiles: Iterable[str],
    families: FamilySource | None = None,
    *,
    lenient: bool = False,
) -> JudgePanel:
    """The panel a declaration describes, after checking its family, criteria and profiles.

    The family must have at least one registered task version: bundled, or in ``families``
    (the configured task store, asked only for a family the bundled tasks lack). ``lenient``
    takes a family none of them knows as declared (a folder loaded by a command that cannot know
    which task store the panel was added against); its profiles are still checked.
    """
    wanted = set(doc.assignments) - {ALL_CRITERIA}
    known_families = _families_for(doc.family, wanted, families)
    unknown = doc.family != ANY_FAMILY and doc.family not in known_families
    if unknown and lenient:
        known_families = {doc.family: wanted}
    elif unknown:
        raise ConfigurationError(
            f"{where}: family {doc.family!r} has no registered task version (bundled, or added "
            "to the configured task store with `regua tasks add`; give --data-dir or "
            "REGUA_DATA_DIR / REGUA_DATABASE_URL of that store); known families: "
            f"{', '.join(sorted(known_families))}"
        )
    criteria = set(known_families.get(doc.family, ())) or set().union(*known_families.values())
    known = set(known_profiles)
    for criterion, ids in doc.assignments.items():
        if criterion != ALL_CRITERIA and criterion not in criteria:
            raise ConfigurationError(
                f"{where}: assignments.{criterion}: no task of family {doc.family} has this "
                "criterion"
            )
        if not ids:
            raise ConfigurationError(f"{where}: assignments.{criterion}: names no judge profile")
        for pid in ids:
            if pid not in known:
                raise ConfigurationError(
                    f"{where}: assignments.{criterion}: unknown judge profile {pid!r} "
                    "(declare it in a judge file or use a built-in one)"
                )
    if doc.adjudicator is not None and doc.adjudicator not in known:
        raise ConfigurationError(
            f"{where}: adjudicator: unknown judge profile {doc.adjudicator!r} "
            "(declare it in a judge file or use a built-in one)"
        )
    return JudgePanel(
        id=doc.id,
        family=doc.family,
        assignments={k: tuple(v) for k, v in doc.assignments.items()},
        description=doc.description,
        exclude_own_provider=doc.exclude_own_provider,
        adjudicator=doc.adjudicator,
        disagreement=doc.disagreement,
        max_level_spread=doc.max_level_spread,
    )
