"""Ground-truth types, one per kind of answer, joined in the ``GroundTruth`` union.

A sample's ``ground_truth`` is one of these, told apart by its ``kind``
field.  Each task names the kinds it allows (``cartoqa.records.tasks``).
"""

from __future__ import annotations

import json
import math
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    TypeAdapter,
    model_serializer,
    model_validator,
)

__all__ = [
    "BooleanTruth",
    "ChoiceTruth",
    "CoordinateTruth",
    "CountTruth",
    "DrawnFeature",
    "FeatureCount",
    "FeatureTableTruth",
    "GroundTruth",
    "GroupingTruth",
    "IndicesTruth",
    "LabelBox",
    "NamesTruth",
    "NumberTruth",
    "RoadEdge",
    "RoadNetwork",
    "RoadPairTruth",
    "RouteLeg",
    "RouteTruth",
    "TextTruth",
    "Tolerance",
    "ValuesTruth",
]


def number_text(x: float) -> str:
    """A float written in full, without exponent or trailing zeros (how answers write
    numbers; exported by ``cartoqa.records``, while this module's ``__all__`` names the
    truth types only)."""
    if float(x).is_integer():
        return str(int(x))
    return f"{x:.9f}".rstrip("0").rstrip(".")


def _final(body: str) -> str:
    return f"FINAL ANSWER: {body}"


class _Truth(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class Tolerance(_Truth):
    """How far an answer may lie from the truth and still be right: within ``abs`` of it or
    within ``rel`` times its size, whichever is wider; with ``wrap`` (360 for bearings and
    longitudes) the difference is taken the short way round the circle."""

    abs: float = Field(default=0.0, ge=0, allow_inf_nan=False)
    """Absolute tolerance, in the truth's unit."""
    rel: float = Field(default=0.0, ge=0, allow_inf_nan=False)
    """Relative tolerance, a fraction of the truth's magnitude (0.05: 5 %)."""
    wrap: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    """The period of a circular quantity (360 degrees), or None."""

    def allows(self, got: float, want: float) -> bool:
        """Whether ``got`` is close enough to ``want`` (never for NaN or infinity)."""
        return within(got, want, self.abs, self.rel, self.wrap)


def within(
    got: float, want: float, abs_tol: float, rel_tol: float, wrap: float | None = None
) -> bool:
    """``Tolerance``'s rule: |got - want| (the short way round a circle of ``wrap``) at most
    max(abs_tol, rel_tol × |want|); never for a ``got`` that is NaN or infinite, nor, with a
    ``wrap``, for one outside the circle's usual forms [-wrap/2, wrap] (4827 or -208.5 is no
    bearing of 151.5: whole turns are never taken off; scorers narrow this to the quantity's
    own range, ``evaluators.gps.RANGES``)."""
    if not math.isfinite(got) or (wrap and not -wrap / 2 <= got <= wrap):
        return False
    d = math.fabs(got - want)
    if wrap:
        d %= wrap
        d = min(d, wrap - d)
    return d <= max(abs_tol, rel_tol * math.fabs(want))


def _without_no_tolerance(data: Any) -> Any:
    """A truth's fields less ``tolerance`` when it has none (so records made before
    tolerances lived on truths keep their bytes)."""
    if isinstance(data, dict) and data.get("tolerance", 0) is None:
        data.pop("tolerance")
    return data


def _omit(data: Any, defaults: dict[str, Any]) -> Any:
    """A truth's fields less those still at their defaults among ``defaults`` (fields added
    for the map-feature tasks: other records keep their bytes)."""
    if isinstance(data, dict):
        for key, default in defaults.items():
            if key in data and data[key] == default:
                data.pop(key)
    return data


class DrawnFeature(_Truth):
    """One OSM object of a map-feature type as the image shows it: the evidence behind a
    count or a name list (``cartoqa audit`` draws it; ``maps.feature_pixels`` finds it)."""

    osm: str
    """The OSM object: "node/1", "way/2" or "relation/3"."""
    type: str
    """Its map-feature type ("restaurant"; ``cartoqa.records.feature_types``)."""
    name: str = ""
    """Its name in OSM ("" when it has none)."""
    counted: Literal["yes", "optional"] = "yes"
    """"yes": shown and required in a count; "optional": partly shown (cut at the edge, a
    look-alike, drawn without its icon), neither required nor penalised."""
    label: str | None = None
    """Its label as the map writes it (the name; an ATM's operator), whole in the view or
    cut at its edge (``label_counted`` says which), or None when the map writes none."""
    label_counted: Literal["yes", "optional", "no"] = "no"
    """Whether ``label`` is a name an answer must list ("yes"), may list ("optional": cut,
    orphaned, or the object optional) or none is drawn ("no")."""
    icon: tuple[float, float, float, float] | None = None
    """Its icon's box in image pixels (x0, y0, x1, y1), where it has one in the view."""
    label_box: tuple[float, float, float, float] | None = None
    """Its whole label's box in image pixels."""
    flags: list[str] = Field(default_factory=list)
    """What a reviewer should know: "icon_cut", "icon_covered", "orphan_label",
    "label_cut", "label_dropped", "look_alike", "area_without_icon", "unnamed_line",
    "under_map_control", "icon_split", "area_cut", "drawn_as_building", "name_not_shown",
    "orphan_label_below"."""


class CountTruth(_Truth):
    """How many features of one type a map shows: ``value`` required, up to ``optional``
    more accepted (features only partly shown)."""

    kind: Literal["count"] = "count"
    """Names this type of ground truth (pydantic picks the type by it)."""
    value: int = Field(ge=0)
    """The features wholly shown."""
    optional: int = Field(default=0, ge=0)
    """Features partly shown: an answer from ``value`` to ``value + optional`` is exact."""
    feature_type: str
    """The map-feature type asked about."""
    features: list[DrawnFeature] = Field(default_factory=list)
    """The evidence: every feature of the type the view meets."""

    def answer_text(self) -> str:
        """This truth written as an answer in its kind's format (what the oracle writes)."""
        return str(self.value)

    def error(self, got: float) -> float:
        """How far a counted ``got`` lies from the accepted range (0 inside it)."""
        if got < self.value:
            return float(self.value - got)
        return float(max(0.0, got - (self.value + self.optional)))


class NumberTruth(_Truth):
    """One number with its unit: a distance, a count, a route length, a bearing."""

    kind: Literal["number"] = "number"
    """Names this type of ground truth (pydantic picks the type by it)."""
    value: float
    """The true value, in ``unit``."""
    unit: str | None = None
    """Unit of ``value`` ("km", "m", "ft", "deg"), or None for a plain count."""
    equivalents: dict[str, float] = Field(default_factory=dict)
    """The same quantity in other units, keyed by unit (for example {"mi": 213.5})."""
    tolerance: Tolerance | None = None
    """How close an answer must be (GPS distance: 5 km or 5 %); None for tasks scored
    otherwise (RLE's metrics, an exact count).  Written only when set."""

    @model_serializer(mode="wrap")
    def _serialize(self, handler: SerializerFunctionWrapHandler) -> Any:
        return _without_no_tolerance(handler(self))

    def answer_text(self) -> str:
        """This truth written as an answer in its kind's format (what the oracle writes)."""
        return _final(number_text(self.value) + (f" {self.unit}" if self.unit else ""))


class BooleanTruth(_Truth):
    """Yes or no: is a feature type present on the map."""

    kind: Literal["boolean"] = "boolean"
    """Names this type of ground truth (pydantic picks the type by it)."""
    value: bool
    """True for yes."""
    feature_type: str | None = None
    """STMF presence: the map-feature type asked about (written only when set)."""
    features: list[DrawnFeature] = Field(default_factory=list)
    """STMF presence: the evidence, every feature of the type the view meets (written only
    when there is some)."""

    @model_serializer(mode="wrap")
    def _serialize(self, handler: SerializerFunctionWrapHandler) -> Any:
        return _omit(handler(self), {"feature_type": None, "features": []})

    def answer_text(self) -> str:
        """This truth written as an answer in its kind's format (what the oracle writes)."""
        return _final("yes" if self.value else "no")


class ChoiceTruth(_Truth):
    """A multiple-choice answer: the correct option's letter among lettered options."""

    kind: Literal["choice"] = "choice"
    """Names this type of ground truth (pydantic picks the type by it)."""
    answer: str
    """The correct letter, such as "B"."""
    options: dict[str, str]
    """Letter -> option text, in the order shown to the model."""

    @model_validator(mode="after")
    def _answer_is_an_option(self) -> ChoiceTruth:
        if self.answer not in self.options:
            raise ValueError(
                f"answer {self.answer!r} is not one of the option letters {sorted(self.options)}"
            )
        return self

    def answer_text(self) -> str:
        """This truth written as an answer in its kind's format (what the oracle writes)."""
        return _final(self.answer)


class TextTruth(_Truth):
    """A free-text answer (a place name, a coordinate written as text)."""

    kind: Literal["text"] = "text"
    """Names this type of ground truth (pydantic picks the type by it)."""
    answer: str
    """The canonical answer."""
    accepted: list[str] = Field(default_factory=list)
    """Other answers scored as correct (alternate names, other spellings)."""

    def answer_text(self) -> str:
        """This truth written as an answer in its kind's format (what the oracle writes)."""
        return _final(self.answer)


class CoordinateTruth(_Truth):
    """A point on the Earth."""

    kind: Literal["coordinate"] = "coordinate"
    """Names this type of ground truth (pydantic picks the type by it)."""
    lat: float = Field(ge=-90, le=90)
    """Latitude in degrees."""
    lon: float = Field(ge=-180, le=180)
    """Longitude in degrees."""
    tolerance: Tolerance | None = None
    """How close each of latitude and longitude must be, in degrees (longitude the short
    way round); None for tasks scored otherwise.  Written only when set."""

    @model_serializer(mode="wrap")
    def _serialize(self, handler: SerializerFunctionWrapHandler) -> Any:
        return _without_no_tolerance(handler(self))

    def within(self, lat: float, lon: float, tolerance: Tolerance) -> bool:
        """Whether (lat, lon) is within ``tolerance`` of this point, component by component."""
        around = tolerance.model_copy(update={"wrap": 360.0})
        return tolerance.allows(lat, self.lat) and around.allows(lon, self.lon)

    def answer_text(self) -> str:
        """This truth written as an answer in its kind's format (what the oracle writes)."""
        return _final(f"{self.lat:.6f}, {self.lon:.6f}")


class ValuesTruth(_Truth):
    """Several named numbers scored each on its own (bounding box, UTM, Web Mercator)."""

    kind: Literal["values"] = "values"
    """Names this type of ground truth (pydantic picks the type by it)."""
    values: dict[str, float]
    """Name -> true value."""
    tolerances: dict[str, float] = Field(default_factory=dict)
    """Name -> absolute tolerance for scoring that value."""
    units: dict[str, str] = Field(default_factory=dict)
    """Name -> unit of that value."""

    def answer_text(self) -> str:
        """This truth written as an answer in its kind's format (what the oracle writes)."""
        return _final(json.dumps(self.values))


class NamesTruth(_Truth):
    """A list of names as the map shows them (an unnamed feature is an empty string)."""

    kind: Literal["names"] = "names"
    """Names this type of ground truth (pydantic picks the type by it)."""
    names: list[str]
    """Names in any order; repeats count."""
    optional: list[str] = Field(default_factory=list)
    """Names an answer may give or leave out (labels cut at the edge, of features partly
    shown): neither required nor penalised.  Written only when there are some."""
    feature_type: str | None = None
    """STMF name listing: the map-feature type asked about (written only when set)."""
    features: list[DrawnFeature] = Field(default_factory=list)
    """STMF name listing: the evidence (written only when there is some)."""

    @model_serializer(mode="wrap")
    def _serialize(self, handler: SerializerFunctionWrapHandler) -> Any:
        return _omit(handler(self), {"optional": [], "feature_type": None, "features": []})

    def answer_text(self) -> str:
        """This truth written as an answer in its kind's format (what the oracle writes)."""
        return json.dumps(self.names, ensure_ascii=False)


class FeatureCount(_Truth):
    """The count and names of one feature type on one map."""

    count: int = Field(ge=0)
    """How many features of the type the map shows."""
    names: list[str] = Field(default_factory=list)
    """Their names as the map shows them."""
    optional_count: int = Field(default=0, ge=0)
    """Features partly shown: a count up to ``count + optional_count`` is exact (written
    only when some)."""
    optional_names: list[str] = Field(default_factory=list)
    """Names an answer may give or leave out (written only when some)."""

    @model_serializer(mode="wrap")
    def _serialize(self, handler: SerializerFunctionWrapHandler) -> Any:
        return _omit(handler(self), {"optional_count": 0, "optional_names": []})


class FeatureTableTruth(_Truth):
    """Counts and names of many feature types at once (the multi-type map task)."""

    kind: Literal["feature_table"] = "feature_table"
    """Names this type of ground truth (pydantic picks the type by it)."""
    features: dict[str, FeatureCount]
    """Feature type -> its count and names."""
    evidence: list[DrawnFeature] = Field(default_factory=list)
    """MTMF: every feature of the 22 types the view meets (written only when some)."""

    @model_serializer(mode="wrap")
    def _serialize(self, handler: SerializerFunctionWrapHandler) -> Any:
        return _omit(handler(self), {"evidence": []})

    def answer_text(self) -> str:
        """This truth written as an answer in its kind's format (what the oracle writes)."""
        table = {k: {"count": v.count, "names": v.names} for k, v in self.features.items()}
        return json.dumps(table, ensure_ascii=False)


class LabelBox(_Truth):
    """Where the map draws a road's name whole: the label that made the name count."""

    road: str
    """The road's name as the answer must give it."""
    osm_id: int
    """The OSM way that carries the label (one of the road's ways on the route or at the
    junction)."""
    box: tuple[float, float, float, float]
    """The label's box in image pixels: x0, y0, x1, y1 (0,0 the top left)."""


class RoadPairTruth(_Truth):
    """The two roads that meet at a marked intersection; matched in either order."""

    kind: Literal["road_pair"] = "road_pair"
    """Names this type of ground truth (pydantic picks the type by it)."""
    road_1: str
    """One road's name."""
    road_2: str
    """The other road's name."""
    junction: int | None = None
    """The road-graph node under the marker (None in data made before it was kept)."""
    labels: list[LabelBox] = Field(default_factory=list)
    """For each road, the label that shows its name whole in the view (for audits)."""

    def answer_text(self) -> str:
        """This truth written as an answer in its kind's format (what the oracle writes)."""
        return json.dumps({"road_1": self.road_1, "road_2": self.road_2}, ensure_ascii=False)


class RoadEdge(_Truth):
    """One directed stretch of a named road (drivable from ``u`` to ``v``)."""

    u: int
    """Start node."""
    v: int
    """End node."""
    length_m: float = Field(ge=0)
    """Length along the road."""
    heading_start: float
    """Heading leaving ``u`` along the road, degrees clockwise from north."""
    heading_end: float
    """Heading arriving at ``v``."""


class RoadNetwork(_Truth):
    """The named roads a map shows, enough to check any answered route for connectivity:
    CartoMapQA's road dictionary and junction table."""

    origin: int
    """The graph node under the blue marker."""
    destination: int
    """The graph node under the red marker."""
    nodes: dict[str, tuple[float, float]]
    """Node id (as text) -> (lat, lon)."""
    roads: dict[str, list[RoadEdge]]
    """Road name -> its directed edges (a two-way street has one each way)."""
    junctions: dict[str, list[int]]
    """"road A|road B" (the two names sorted) -> the nodes where they meet."""


class RouteLeg(_Truth):
    """One step of a route: an action taken at a node, then a stretch of one road."""

    action: str
    """The action at the leg's first node ("turn left", ...)."""
    road: str
    """The road driven."""
    nodes: list[int]
    """Road-graph nodes along the leg, the first where the action is taken."""
    length_m: float = Field(ge=0)
    """Length along the road."""
    length_px: float = Field(ge=0)
    """Length on the image, in pixels, along the drawn road."""
    points_px: list[tuple[float, float]] = Field(default_factory=list)
    """The leg's shape on the image (pixels, 0,0 the top left)."""
    label: LabelBox | None = None
    """The label that shows the road's name whole in the view."""


class RouteTruth(_Truth):
    """Turn-by-turn steps: ["blue", action, road, action, road, ..., "red"]."""

    kind: Literal["route"] = "route"
    """Names this type of ground truth (pydantic picks the type by it)."""
    steps: list[str]
    """The route, starting with "blue" and ending with "red"."""
    network: RoadNetwork | None = None
    """The roads of the map, for scoring connectivity (None: connectivity cannot be scored)."""
    nodes: list[int] = Field(default_factory=list)
    """The route's road-graph node path, origin to destination (empty in older data)."""
    legs: list[RouteLeg] = Field(default_factory=list)
    """One per (action, road) pair of ``steps``, in order (empty in older data)."""

    @model_validator(mode="after")
    def _ends(self) -> RouteTruth:
        if len(self.steps) < 2 or self.steps[0] != "blue" or self.steps[-1] != "red":
            raise ValueError(
                f"a route must start with 'blue' and end with 'red', got {self.steps!r}"
            )
        return self

    def answer_text(self) -> str:
        """This truth written as an answer in its kind's format (what the oracle writes): the
        bare list the questions ask for, ``[blue, turn left, Rue X, red]``, which the published
        CartoMapQA parser reads too (a road name's comma splits it there, in the truth alike);
        a JSON list where a step holds a bracket or a quote, which the bare form cannot
        carry."""
        if any(c in step for step in self.steps for c in '[]"'):
            return json.dumps(self.steps, ensure_ascii=False)
        return "[" + ", ".join(self.steps) + "]"  # the network is for scoring only


class IndicesTruth(_Truth):
    """Indices of kept items (route simplification)."""

    kind: Literal["indices"] = "indices"
    """Names this type of ground truth (pydantic picks the type by it)."""
    indices: list[int]
    """Sorted 0-based indices."""

    def answer_text(self) -> str:
        """This truth written as an answer in its kind's format (what the oracle writes)."""
        return _final(json.dumps(self.indices))


class GroupingTruth(_Truth):
    """Items grouped under labels (cities by continent)."""

    kind: Literal["grouping"] = "grouping"
    """Names this type of ground truth (pydantic picks the type by it)."""
    groups: dict[str, list[str]]
    """Label -> the items in that group."""

    def answer_text(self) -> str:
        """This truth written as an answer in its kind's format (what the oracle writes)."""
        return _final(json.dumps(self.groups, ensure_ascii=False))


GroundTruth = Annotated[
    NumberTruth
    | BooleanTruth
    | ChoiceTruth
    | TextTruth
    | CoordinateTruth
    | ValuesTruth
    | NamesTruth
    | CountTruth
    | FeatureTableTruth
    | RoadPairTruth
    | RouteTruth
    | IndicesTruth
    | GroupingTruth,
    Field(discriminator="kind"),
]
"""Any ground truth; pydantic picks the type by ``kind``."""

TRUTHS: TypeAdapter[GroundTruth] = TypeAdapter(GroundTruth)
"""Reads any ground truth from its JSON form (``TRUTHS.validate_python(data)``): made once,
for everything that rebuilds truths (exported by ``cartoqa.records``)."""
