"""Paired variants: the same questions asked under controlled changes, so that a report can
say why a model fails (it cannot see, cannot read, or cannot reason).

``cartoqa build ... --variants text,image+text,coords,nolabels,greyscale`` adds, beside
each base sample of a map task made from an extract's views, a copy asked under each
variant ("srn-0004@text"; ``names``), made by ``apply.add_variants``.
"""

from .names import (
    ANSWERABLE_KEY,
    BASE_KEY,
    UNANSWERABLE,
    VARIANT_KEY,
    VARIANT_NAMES,
    base_id,
    is_unanswerable,
    parse_variants,
    score_key,
    split_key,
    variant_of,
    variant_tag,
)

__all__ = [
    "ANSWERABLE_KEY",
    "BASE_KEY",
    "UNANSWERABLE",
    "VARIANT_KEY",
    "VARIANT_NAMES",
    "base_id",
    "is_unanswerable",
    "parse_variants",
    "score_key",
    "split_key",
    "variant_of",
    "variant_tag",
]
