"""The map tests' fixtures (a private PostgreSQL cluster, a cache, carto's files) for the
legend tests, which draw with the real style."""

from tests.maps.conftest import cache, carto_files, cluster  # noqa: F401
