"""The names that count for a city besides its own, shared by the Applied tasks whose
answer is a city."""

from __future__ import annotations

from .._sampling import Sampler

__all__ = ["accepted_names"]


def accepted_names(s: Sampler, i: int) -> list[str]:
    """The GeoNames alternate names that also count for city i: not its own name, not codes
    of three letters or fewer ("GUA"), and not another city's own name (an alternate of Lomé
    reads "Rome", one of Dallas "Talas")."""
    return [
        a
        for a in s.c.alternates[i]
        if a and a != s.c.name[i] and len(a) > 3 and not s.labels.is_other_city(i, a)
    ]
