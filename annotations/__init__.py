"""The review tool (a local web app) and the store of human decisions on ground
truth: accept, correct or reject a sample.  Not implemented yet."""

__all__: list[str] = []
