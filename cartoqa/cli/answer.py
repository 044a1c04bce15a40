"""``cartoqa answer DATASET --as NAME``: a person answers the questions blind in a browser,
each answer stored as a run record of model ``human:NAME`` (``annotations.answer``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from cartoqa.errors import CartoqaError


def answer(
    dataset: Annotated[Path, typer.Argument(help="The dataset whose questions to answer.")],
    name: Annotated[
        str,
        typer.Option(
            "--as",
            help="Who answers: 1 to 40 letters, digits, '.', '_' or '-'. The answers are the "
            "run of model human:NAME.",
        ),
    ],
    n: Annotated[
        int | None,
        typer.Option("--n", help="Answer N questions, stratified by task (default: every one)."),
    ] = None,
    seed: Annotated[int, typer.Option(help="The seed that picks the --n questions.")] = 0,
    variants: Annotated[
        bool,
        typer.Option(help="Include variant copies (ids with '@'): seeing both gives answers away."),
    ] = False,
    runs_dir: Annotated[
        Path, typer.Option(help="Where the run stores are (as for cartoqa run).")
    ] = Path("runs"),
    host: Annotated[str, typer.Option(help="The address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="The port (0: any free one).")] = 8766,
) -> None:
    """Answer DATASET's questions in a browser, as a model would: each question's map and
    prompt, nothing else.  Every answer is stored at once in the run store of human:NAME,
    which 'cartoqa score' and 'report' read like a model's; start again to resume."""
    from annotations.answer import serve_answers

    try:
        serve_answers(
            dataset,
            runs_dir,
            name,
            n=n,
            seed=seed,
            variants=variants,
            host=host,
            port=port,
            echo=typer.echo,
        )
    except CartoqaError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
