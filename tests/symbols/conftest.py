"""The map tests' fixtures (a private PostgreSQL cluster, a cache, carto's files) for the
legend tests, which draw with the real style, and ``legend_dsn``: that cluster's address,
after checking that the style and the tagging schema the legend needs are installed."""

import pytest

from cartoqa.errors import RenderStackError
from symbols.catalogue import STYLE_XML, build_catalogue
from tests.maps.conftest import cache, carto_files, cluster  # noqa: F401


@pytest.fixture(scope="session")
def legend_dsn(cluster) -> str:  # noqa: F811
    """The test cluster's DSN; skips, saying why, where the style or the schema is missing."""
    if not STYLE_XML.is_file():
        pytest.skip(f"{STYLE_XML} is not installed (bash scripts/setup.sh main)")
    try:
        build_catalogue()
    except RenderStackError as exc:
        pytest.skip(str(exc))
    c = cluster.connection("postgres")
    return f"host={c.host} port={c.port} user={c.user} dbname=postgres"
