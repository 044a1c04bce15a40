"""Renamed ``maps.feature_pixels`` (issue 29); this module goes in the lead's sweep."""

# issue 29: alias until the lead's sweep
from .feature_pixels import MIN_ICON_SHARE, DrawnObject, FeatureLabels, ObjectRow

__all__ = ["MIN_ICON_SHARE", "DrawnObject", "FeatureLabels", "ObjectRow"]
