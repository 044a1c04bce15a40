"""The review tool (a local web app) and the store of human decisions on ground
truth: accept, correct or reject a sample.  The tool itself is not implemented yet.

- ``annotations.drawing``: ``draw_sample``, a sample's map with its ground truth drawn
  over it (the drawing ``cartoqa audit`` writes and the review tool shows), and
  ``describe_sample``, the same truth as lines of text.
"""

from .drawing import HEADER_PX, LEG_COLOURS, PANEL_PX, describe_sample, draw_sample

__all__: list[str] = ["HEADER_PX", "LEG_COLOURS", "PANEL_PX", "describe_sample", "draw_sample"]
