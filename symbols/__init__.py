"""The catalogue of OSM map features, their legend images, CLIP embeddings and
distractor selection (the map-feature semantics task, issue 16).  In place: the
catalogue (``symbols.catalogue``) and the legend images (``symbols.legend``); the
look-alike classes, embeddings and questions are to come."""

__all__: list[str] = []
