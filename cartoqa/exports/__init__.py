"""Exports of a dataset to other tools' formats, one module per format (``hf``: the Hugging
Face datasets layout, parquet shards and a dataset card); ``cartoqa export`` runs them."""
