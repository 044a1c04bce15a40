"""The catalogue of OSM map features, their legend images, CLIP embeddings and
distractor selection (the map-feature semantics task).  Not implemented yet."""

__all__: list[str] = []
