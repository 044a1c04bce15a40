"""The review tool (a local web app) and the store of human decisions on ground
truth: accept, correct or reject a sample.

- ``annotations.app``: the web app ``cartoqa review DATASET`` serves (FastAPI;
  the ``review`` extra), its pages in ``templates/``, its keyboard script in ``static/``;
- ``annotations.queue``: the samples listed, filtered, and the progress;
- ``annotations.fields``: the answer fields a reviewer edits, per kind of truth;
- ``annotations.decisions``: the store of decisions (SQLite, append-only);
- ``annotations.export``: the reviewed dataset; ``annotations.label_studio``: the
  Label Studio round trip;
- ``annotations.checks``: what a correction can break that the store does not refuse (a
  corrected route the map's roads do not connect);
- ``annotations.drawing``: ``draw_sample``, a sample's map with its ground truth drawn
  over it (the drawing ``cartoqa audit`` writes and the review tool shows), and
  ``describe_sample``, the same truth as lines of text.
"""

from .drawing import HEADER_PX, LEG_COLOURS, PANEL_PX, describe_sample, draw_sample

__all__: list[str] = ["HEADER_PX", "LEG_COLOURS", "PANEL_PX", "describe_sample", "draw_sample"]
