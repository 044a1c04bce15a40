"""``cartoqa review DATASET``: the review tool served by uvicorn on a socket of its own,
its address printed with the token (``annotations.app`` is the app)."""

from __future__ import annotations

import secrets
import socket
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from cartoqa.errors import ReviewError

from .app import check_export_dir, create_app, need_web
from .decisions import DecisionStore

__all__ = ["allowed_hosts", "listen", "loopback", "run_on", "serve"]


def loopback(host: str) -> bool:
    """Whether ``host`` is this machine only."""
    return host in ("127.0.0.1", "localhost", "::1") or host.startswith("127.")


def serve(
    dataset_path: Path,
    store_path: Path,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    required: int = 1,
    reviewer: str = "",
    export_dir: Path | None = None,
    echo: Callable[[str], None] = print,
    disputed: set[str] | None = None,
) -> None:
    """Serve the review tool until stopped; prints the address with its token."""
    from cartoqa.stores import load_dataset

    need_web()
    dataset = load_dataset(dataset_path)
    if export_dir is not None:
        check_export_dir(dataset, export_dir)
    with DecisionStore.open(store_path, dataset, required=required):
        pass  # a store that cannot open fails here, before the address is printed
    token = secrets.token_urlsafe(24)
    app = create_app(
        dataset,
        store_path,
        token=token,
        required=required,
        default_reviewer=reviewer,
        export_dir=export_dir,
        hosts=allowed_hosts(host),
        disputed=disputed,
    )
    sock, shown = listen(host, port)
    if not loopback(host):
        echo(
            f"warning: serving on {host}, not only this machine: anyone who can reach it and "
            "has the address below (its token) can change decisions, and plain HTTP is not "
            "encrypted; share it on a trusted network only"
        )
    echo(f"reviewing {dataset.manifest.name} ({len(dataset)} samples); decisions in {store_path}")
    echo(f"open http://{shown}/{token}/")
    sys.stdout.flush()
    run_on(app, sock, lifespan="on")


def allowed_hosts(host: str) -> tuple[str, ...]:
    """The Host names a server started on ``host`` answers to: that one (addresses always
    do), and this machine's own names when it is shared on a network."""
    hosts = [host]
    if not loopback(host):
        hosts += [socket.gethostname(), socket.getfqdn()]
    return tuple(hosts)


def listen(host: str, port: int) -> tuple[socket.socket, str]:
    """A socket listening on ``host``:``port`` (0: any free port), and the "host:port" to
    print; a port that cannot be had raises ``ReviewError`` naming it."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ReviewError(
            f"cannot listen on {host}:{port} ({exc.strerror}): give another --port "
            "(0 picks a free one)"
        ) from None
    sock.listen(64)
    bound = sock.getsockname()[1]
    return sock, f"[{host}]:{bound}" if ":" in host else f"{host}:{bound}"


def run_on(app: Any, sock: socket.socket, *, lifespan: Literal["on", "off"]) -> None:
    """Serve ``app`` with uvicorn on ``sock`` until stopped."""
    import uvicorn

    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan=lifespan)
    uvicorn.Server(config).run(sockets=[sock])
