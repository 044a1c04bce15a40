"""The report's files: ``report.md``, ``report.html`` (self-contained: its images inline,
it opens offline), ``tables.csv`` (one value a row) and ``tables.json`` (strict JSON: a
value that is not a number is null).  Rendered to bytes here; ``build_report`` writes them
with the plots, all at once.  A dataset with paired variants adds a "Paired variants"
section (``paired``): its table, the note on how to read it and one sentence a line, in
report.md and report.html, its lines in tables.csv (task: the variant's score key) and
tables.json ("paired"); a dataset without variants gives none of it.  Human runs (model
"human:NAME", ``people``) add a "People" section the same way: the pooled people score and
the agreement among people per task, and the items people dispute; tables.json "people".
A report without human runs is byte for byte what it was without this section."""

from __future__ import annotations

import base64
import csv
import html
import io
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cartoqa.stores._files import json_text
from cartoqa.tasks.variants import UNANSWERABLE

from .paired import PairedLine
from .people import PeopleSummary
from .tables import LOWER_IS_BETTER, TaskReport

__all__ = ["OUTPUTS", "PAIRED_HEADING", "PEOPLE_HEADING", "render_outputs"]

OUTPUTS = {
    "markdown": "report.md",
    "html": "report.html",
    "csv": "tables.csv",
    "json": "tables.json",
}
"""The report's files by kind."""

PAIRED_HEADING = "Paired variants"
PAIRED_ANCHOR = "paired-variants"
PEOPLE_HEADING = "People"
PEOPLE_ANCHOR = "people"


def _f(v: Any) -> str:
    if isinstance(v, float):
        return "–" if math.isnan(v) else f"{v:.3f}"
    return "–" if v is None else str(v)


def _ci(ci: tuple[float, float] | None) -> str:
    if not ci or any(math.isnan(x) for x in ci):
        return ""
    return f" [{ci[0]:.3f}, {ci[1]:.3f}]"


def _md_table(head: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
    return out


Section = tuple[str, list[str], list[list[str]], str, list[str]]


def _paired_section(lines: Sequence[PairedLine], extra: dict[str, Any]) -> Section:
    """The paired variants' table, its note, and one sentence a line."""
    boot = extra.get("bootstrap") or {}
    cols = ["task", "variant", "model", "metric", "pairs", "base", "variant score",
            "difference (variant − base) [95 % CI]"]  # fmt: skip
    rows = []
    for x in lines:
        metric = x.metric if x.row == "all" else f"{x.metric} ({x.row})"
        metric += " (lower is better)" if x.lower_is_better else " (higher is better)"
        if x.unanswerable:
            variant, diff = f"{x.variant} (unanswerable by design)", "– (not scored as misses)"
        else:
            variant, diff = x.variant, _f(x.difference) + _ci(x.interval)
        rows.append([x.task, variant, x.model, metric, str(x.n), _f(x.base), _f(x.score), diff])
    lower = ", ".join(sorted(LOWER_IS_BETTER - {"unanswered"}))
    note = (
        "Each variant's items are paired with their base items by base id (srn-0004 and "
        "srn-0004@text). Base and variant scores are the task's headline metric over the "
        "paired items only, so a base score here may differ from the task's own table. "
        "Difference = variant − base, with a 95 % paired bootstrap interval (the pairs "
        f"resampled {boot.get('resamples', '?')} times, seed {boot.get('seed', '?')}); an "
        "interval that excludes 0 shows a difference, one that includes 0 does not. "
        f"Lower is better for {lower}; higher for the rest. Rows marked unanswerable by "
        "design are the variant's items whose answer needs what the variant removes "
        "(labels): scored against the base's truth for information only, they are never "
        "part of the variant's score."
    )
    return (PAIRED_HEADING, cols, rows, note, [x.sentence for x in lines])


def _people_section(people: PeopleSummary, extra: dict[str, Any]) -> Section:
    """The people's pooled score and agreement per task, and one sentence a disputed item."""
    boot = extra.get("bootstrap") or {}
    cols = ["task", "people (items answered)", "metric", "pooled people score [95 % CI]",
            "answers", "agreement", "measure", "items shared"]  # fmt: skip
    rows = []
    for t in people.tasks:
        metric = t.metric if t.row == "all" else f"{t.metric} ({t.row})"
        who = ", ".join(f"{p} ({n})" for p, n in t.people.items())
        agreement = "–" if t.measure == "not enough overlap" else _f(t.agreement)
        rows.append([t.task, who, metric, _f(t.pooled) + _ci(t.interval), str(t.answers),
                     agreement, t.measure, str(t.overlap)])  # fmt: skip
    note = (
        "Each person's answers are a run of model human:NAME and have their row in each "
        "task's table above. The pooled people score is the headline metric over every "
        "human answer together, with a 95 % bootstrap interval over items (an item's "
        f"answers resampled together, {boot.get('resamples', '?')} times, seed "
        f"{boot.get('seed', '?')}). Agreement is over the items at least two people "
        "answered: Fleiss' kappa for categorical answers (every right answer one category, "
        "each distinct wrong answer another; 1 is full agreement, 0 what chance gives), "
        "the share of pairs of people within the task's tolerance of each other for "
        "numbers; 'not enough overlap' where no item has two people. Disputed items, "
        "listed below, are those most of their people (at least two) answered wrong: the "
        "likeliest defects in the truth; check them in the review tool: 'cartoqa review "
        "DATASET --runs-dir RUNS', filter 'disputed by people'."
    )
    sentences = [
        f"disputed: {d.task} {d.sample_id}: truth {d.truth!r}; {d.wrong} of "
        f"{len(d.answers)} people wrong; answered "
        + "; ".join(f"{p}: {a!r}" for p, a in d.answers.items())
        for d in people.disputed
    ] or ["no item is disputed by people"]
    return (PEOPLE_HEADING, cols, rows, note, sentences)


def _sections(
    reports: Sequence[TaskReport],
    usage: dict[str, dict],
    references: list[dict],
    gps: dict[str, dict],
    paired: Section | None = None,
    people: Section | None = None,
) -> list[Section]:
    """(heading, columns, rows, note, sentences) for every table of the report."""
    out: list[Section] = []
    for rep in reports:
        keys = [f"{row} · {m}" for row, _ in rep.heads for m in rep.metrics]
        heads = {f"{row} · {metric}" for row, metric in rep.heads}
        cols = ["model", *keys, "n", "right", "wrong", "unreadable", "unanswered"]
        rows = []
        for m in rep.rows:
            cells = [m.label]
            for k in keys:
                cells.append(_f(m.values.get(k)) + (_ci(m.intervals.get(k)) if k in heads else ""))
            o = m.outcomes
            cells += [str(o["n"]), str(o["right"]), str(o["wrong"]), str(o["unreadable"]),
                      str(o["unanswered"])]  # fmt: skip
            rows.append(cells)
        better = ", ".join(
            f"{metric}: {'lower' if metric in LOWER_IS_BETTER else 'higher'} is better"
            for _, metric in rep.heads[:1]
        )
        note = (
            f"Headline: {', '.join(' '.join(h) for h in rep.heads)} with its 95 % bootstrap "
            f"interval; {better}. Unreadable answers (the scorer could not read them) are "
            "counted apart from wrong ones."
        )
        if rep.task.endswith("/" + UNANSWERABLE):
            note += (
                " These items are unanswerable by design (the variant removes what their "
                "answer needs): scored against the base's truth for information, never part "
                "of the variant's score."
            )
        out.append((f"{rep.task} ({rep.family}, {rep.track})", cols, rows, note, []))
        for key in sorted({k for m in rep.rows for k in m.breakdowns}):
            values = sorted({v for m in rep.rows for v in m.breakdowns.get(key, {})}, key=_order)
            brows = [[m.label, *(_f(m.breakdowns.get(key, {}).get(v)) for v in values)]
                     for m in rep.rows]  # fmt: skip
            heading = f"{rep.task} by {key}: {rep.heads[0][1]}"
            out.append((heading, ["model", *values], brows, "", []))
    if paired is not None:
        out.append(paired)
    if people is not None:
        out.append(people)
    if gps:
        rows_ = list(next(iter(gps.values())))
        cols = ["model", *rows_]
        rows = [[m, *(_f(t.get(r, {}).get("accuracy")) for r in rows_)] for m, t in gps.items()]
        note = (
            "GPSBench's tracks: Pure the mean of its tasks' accuracies, Applied the mean of "
            "its tasks' and the missing-data probe's, overall the mean of the two."
        )
        out.append(("GPSBench tracks: accuracy", cols, rows, note, []))
    if usage:
        cols = ["model", "answers", "input tokens", "output tokens", "mean latency (s)", "cost"]
        rows = [
            [label, _f(u["answers"]), _f(u["input_tokens"]), _f(u["output_tokens"]),
             _f(u["mean_latency_s"]), "not recorded" if u["cost"] is None else _f(u["cost"])]
            for label, u in usage.items()
        ]  # fmt: skip
        out.append(("What the runs used", cols, rows, "", []))
    for ref in references:
        rows = [[r["model"], r["task"], r["metric"], _f(r["value"])] for r in ref["rows"]]
        out.append(
            (
                f"Published numbers: {ref['source']}",
                ["model", "task", "metric", "value"],
                rows,
                "Another dataset's numbers, for scale: not comparable sample by sample.",
                [],
            )
        )
    return out


def _order(v: str) -> tuple[int, float | str]:
    try:
        return (0, float(v.split()[0]))
    except ValueError:
        return (1, v)


def render_outputs(
    *,
    title: str,
    reports: Sequence[TaskReport],
    usage: dict[str, dict],
    references: list[dict],
    plots: dict[str, bytes],
    credits: list[str],
    extra: dict[str, Any],
    paired: Sequence[PairedLine] = (),
    people: PeopleSummary | None = None,
) -> dict[str, bytes]:
    """The four outputs, file name (``OUTPUTS``) -> bytes; ``plots`` (file name -> PNG) are
    linked from ``plots/`` in the Markdown and inlined in the HTML; ``paired``: the paired
    variants' lines (``paired.paired_lines``), their section only where there are some;
    ``people``: the human runs' summary (``people.people_summary``), None without any."""
    section = _paired_section(paired, extra) if paired else None
    ps = _people_section(people, extra) if people is not None else None
    sections = _sections(reports, usage, references, extra.get("gps") or {}, section, ps)
    credit = "; ".join(credits) or "Map data © OpenStreetMap contributors"
    # Markdown
    md = [f"# {title}", "", credit, ""]
    for name in plots:
        md += [f"![{Path(name).stem}](plots/{name})", ""]
    for heading, cols, rows, note, sentences in sections:
        md += [f"## {heading}", "", *_md_table(cols, rows), ""]
        if note:
            md += [note, ""]
        if sentences:
            md += [*(f"- {s}" for s in sentences), ""]
    files = {"report.md": "\n".join(md).encode("utf-8")}
    # HTML: one file, its images inline
    e = html.escape
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>{e(title)}</title><style>body{{font:14px/1.4 system-ui,sans-serif;"
        "margin:1.5em;max-width:1400px}}table{{border-collapse:collapse;margin:.4em 0 1.2em}}"
        "td,th{{border-bottom:1px solid #ddd;padding:.15em .6em;text-align:right}}"
        "td:first-child,th:first-child{{text-align:left}}img{{max-width:100%}}"
        ".note{{color:#555;font-size:13px}}</style></head><body>",
        f"<h1>{e(title)}</h1><p>{e(credit)}</p>",
    ]
    for name, png in plots.items():
        data = base64.b64encode(png).decode()
        parts.append(f"<p><img alt='{e(Path(name).stem)}' src='data:image/png;base64,{data}'></p>")
    for heading, cols, rows, note, sentences in sections:
        anchors = {PAIRED_HEADING: PAIRED_ANCHOR, PEOPLE_HEADING: PEOPLE_ANCHOR}
        anchor = f" id='{anchors[heading]}'" if heading in anchors else ""
        parts.append(f"<h2{anchor}>{e(heading)}</h2><table><tr>")
        parts += [f"<th>{e(c)}</th>" for c in cols]
        parts.append("</tr>")
        for r in rows:
            parts.append("<tr>" + "".join(f"<td>{e(c)}</td>" for c in r) + "</tr>")
        parts.append("</table>")
        if note:
            parts.append(f"<p class='note'>{e(note)}</p>")
        if sentences:
            parts.append("<ul>" + "".join(f"<li>{e(s)}</li>" for s in sentences) + "</ul>")
    parts.append("</body></html>")
    files["report.html"] = "".join(parts).encode("utf-8")
    # CSV: one value a row
    fh = io.StringIO(newline="")
    w = csv.writer(fh)
    w.writerow(["task", "model", "row", "metric", "value", "ci_low", "ci_high"])
    for rep in reports:
        for m in rep.rows:
            for key, v in m.values.items():
                row, _, metric = key.partition(" · ")
                lo, hi = m.intervals.get(key, (None, None))
                w.writerow([rep.task, m.label, row, metric, v, lo, hi])
            for k, v in m.outcomes.items():
                w.writerow([rep.task, m.label, "outcomes", k, v, None, None])
            for key, groups in m.breakdowns.items():
                for value, v in groups.items():
                    w.writerow([rep.task, m.label, f"{key}={value}", rep.heads[0][1], v,
                                None, None])  # fmt: skip
    for x in paired:  # the variant's score key; rows "paired: ..." ("unanswerable: ...")
        kind = "unanswerable" if x.unanswerable else "paired"
        at = "" if x.row == "all" else f" ({x.row})"
        w.writerow([x.key, x.model, f"{kind}: pairs{at}", x.metric, x.n, None, None])
        w.writerow([x.key, x.model, f"{kind}: base{at}", x.metric, x.base, None, None])
        w.writerow([x.key, x.model, f"{kind}: variant{at}", x.metric, x.score, None, None])
        if not x.unanswerable:
            lo, hi = x.interval
            w.writerow([x.key, x.model, f"{kind}: difference{at}", x.metric, x.difference,
                        lo, hi])  # fmt: skip
    if people is not None:  # rows "people: ..." under the score key; model "people"
        for t in people.tasks:
            at = "" if t.row == "all" else f" ({t.row})"
            lo, hi = t.interval
            w.writerow([t.task, "people", f"people: pooled{at}", t.metric, t.pooled, lo, hi])
            w.writerow([t.task, "people", "people: answers", "n", t.answers, None, None])
            w.writerow([t.task, "people", f"people: agreement ({t.measure})", "agreement",
                        t.agreement, None, None])  # fmt: skip
            w.writerow([t.task, "people", "people: items shared", "n", t.overlap, None, None])
        for d in people.disputed:
            w.writerow([d.task, "people", f"people: disputed {d.sample_id}", "wrong", d.wrong,
                        None, None])  # fmt: skip
    files["tables.csv"] = fh.getvalue().encode("utf-8")
    # JSON: everything
    doc = {
        "title": title,
        "attribution": credits,
        **extra,
        "tasks": [
            {
                "task": rep.task,
                "family": rep.family,
                "track": rep.track,
                "headline": [list(h) for h in rep.heads],
                "models": [
                    {
                        "model": m.label,
                        "values": m.values,
                        "intervals": {k: list(v) for k, v in m.intervals.items()},
                        "outcomes": m.outcomes,
                        "breakdowns": m.breakdowns,
                    }
                    for m in rep.rows
                ],
            }
            for rep in reports
        ],
        "usage": usage,
        "references": references,
        "plots": [f"plots/{name}" for name in plots],
    }
    if paired:
        doc["paired"] = [x.as_dict() for x in paired]
    if people is not None:
        doc["people"] = people.as_dict()
    files["tables.json"] = (json_text(doc, indent=1) + "\n").encode("utf-8")
    return files
