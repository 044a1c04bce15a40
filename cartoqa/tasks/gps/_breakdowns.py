"""What the GPS tasks' scores are broken down by."""

from __future__ import annotations

__all__ = ["GPS_GROUPS"]

#: GPS breakdowns (metadata keys; a key no sample of a task carries gives no rows)
GPS_GROUPS = ("split", "difficulty", "region", "noise_m", "terrain")
