"""The catalogue of OSM map features, their legend images, CLIP embeddings and
distractor selection (the map-feature semantics task, issue 16).  In place: the
catalogue (``symbols.catalogue``), the legend images (``symbols.legend``) and the
look-alike classes (``symbols.lookalike``) and the CLIP embeddings
(``symbols.embed``); the questions are to come."""

__all__: list[str] = []
