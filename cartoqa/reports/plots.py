"""The report's plots (matplotlib, drawn off screen), one PNG each; a plot whose data the
runs do not have is not drawn.

- ``headlines.png``: each map task's headline metric per model, with its 95 % interval;
- ``gps_tasks.png``: each GPS task's accuracy per model, with its interval;
- ``gps_tracks.png``: GPSBench's track scores (Pure, Applied, overall) per model;
- ``by_zoom.png``: each map task's headline metric by zoom, one line per model;
- ``<task>_by_steps.png``: a task that breaks down by route length in steps (SRN's
  SR2);
- ``<task>_predicted.png``: a task whose scores hold predicted quantities, predicted
  against true, one panel per unit asked (RLE's metres and feet), log axes where the
  truths span more than a factor of ten (RLE's lengths; counts stay linear);
- ``paired.png``: where the dataset has paired variants, each model's paired difference
  (variant minus base) of each task's headline metric with its 95 % interval, one panel
  per task, a line at zero (``paired``).

The plots above ``paired.png`` show the tasks' own samples only; a variant's scores are
in its own table and, against its base, in ``paired.png``.  File names are made of
letters, digits, "_", "-" and "." only (``plot_name``).
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Sequence

from .collect import ScoredRun
from .paired import PairedLine
from .tables import LOWER_IS_BETTER, TaskReport

__all__ = ["ATTRIBUTION", "draw_plots", "plot_name"]

ATTRIBUTION = "Map data © OpenStreetMap contributors"


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_name(key: str, suffix: str) -> str:
    """A plot's file name for a score key: what a file name may safely hold, every other
    run of characters made "-" ("srn@image+text" -> "srn-image-text")."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", key) + suffix


def _finite(x: float) -> bool:
    return isinstance(x, int | float) and math.isfinite(x)


def _save(fig, name: str, credit: bool) -> tuple[str, bytes]:
    """The figure as PNG bytes, under its file name (written with the report's other files,
    all at once)."""
    if credit:
        fig.text(0.99, -0.06, ATTRIBUTION, ha="right", va="top", fontsize=7, color="#555")
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    _plt().close(fig)
    return name, buf.getvalue()


def _bars(ax, reports: Sequence[TaskReport], labels: list[str]) -> None:
    width = 0.8 / max(1, len(labels))
    for j, label in enumerate(labels):
        xs, ys, lo, hi = [], [], [], []
        for i, rep in enumerate(reports):
            row = next((r for r in rep.rows if r.label == label), None)
            if row is None:
                continue
            key = f"{rep.heads[0][0]} · {rep.heads[0][1]}"
            v = row.values.get(key, float("nan"))
            a, b = row.intervals.get(key, (float("nan"), float("nan")))
            if not _finite(v):
                continue
            xs.append(i + (j - (len(labels) - 1) / 2) * width)
            ys.append(v)
            lo.append(v - a if _finite(a) else 0)
            hi.append(b - v if _finite(b) else 0)
        ax.bar(xs, ys, width, yerr=[lo, hi], capsize=2, label=label)
    ax.set_xticks(range(len(reports)))
    ax.set_xticklabels(
        [f"{r.task}\n{r.heads[0][1]}" for r in reports], rotation=45, ha="right", fontsize=8
    )


def draw_plots(
    reports: Sequence[TaskReport],
    runs: Sequence[ScoredRun],
    paired: Sequence[PairedLine] = (),
) -> dict[str, bytes]:
    """Draw every plot the data allows; returns file name -> PNG bytes (nothing is written
    here)."""
    plt = _plt()
    from matplotlib.ticker import MaxNLocator

    reports = [r for r in reports if "@" not in r.task]  # a task's own samples
    labels = list(dict.fromkeys(r.label for rep in reports for r in rep.rows))
    made: list[tuple[str, bytes]] = []
    maps = [r for r in reports if r.family == "map"]
    gps = [r for r in reports if r.family == "gps"]

    if maps:
        fig, axes = plt.subplots(1, len(maps), figsize=(2.4 * len(maps) + 1, 3.4), squeeze=False)
        for ax, rep in zip(axes[0], maps, strict=True):
            _bars(ax, [rep], labels)
            ax.set_title(rep.task, fontsize=9)
        axes[0][0].legend(fontsize=8)
        fig.suptitle("Headline metric per map task (95 % bootstrap intervals)", fontsize=10)
        made.append(_save(fig, "headlines.png", credit=True))
    if gps:
        fig, ax = plt.subplots(figsize=(max(6, 0.5 * len(gps) * max(1, len(labels))), 3.8))
        _bars(ax, gps, labels)
        ax.legend(fontsize=8)
        ax.set_ylabel("accuracy")
        ax.set_title("GPS tasks (95 % bootstrap intervals)", fontsize=10)
        made.append(_save(fig, "gps_tasks.png", credit=False))
        tracks = [(r.model, r.scores.get("gps", {})) for r in runs if r.scores.get("gps")]
        if tracks:
            names = [k for k in ("track=pure", "track=applied", "overall") if k in tracks[0][1]]
            fig, ax = plt.subplots(figsize=(6, 3.4))
            width = 0.8 / len(tracks)
            for j, (model, table) in enumerate(tracks):
                ax.bar(
                    [i + (j - (len(tracks) - 1) / 2) * width for i in range(len(names))],
                    [table[n]["accuracy"] for n in names],
                    width,
                    label=model,
                )
            ax.set_xticks(range(len(names)))
            ax.set_xticklabels([n.replace("track=", "") for n in names])
            ax.set_ylabel("accuracy")
            ax.set_title("GPSBench tracks", fontsize=10)
            ax.legend(fontsize=8)
            made.append(_save(fig, "gps_tracks.png", credit=False))

    zoomed = [r for r in maps if any("zoom" in m.breakdowns for m in r.rows)]
    if zoomed:
        fig, axes = plt.subplots(
            1, len(zoomed), figsize=(2.6 * len(zoomed) + 1, 3.2), squeeze=False
        )
        for ax, rep in zip(axes[0], zoomed, strict=True):
            for m in rep.rows:
                pts = sorted((int(z), v) for z, v in m.breakdowns.get("zoom", {}).items()
                             if z.isdigit() and _finite(v))  # fmt: skip
                if pts:
                    ax.plot(*zip(*pts, strict=True), marker="o", label=m.label)
            ax.set_title(f"{rep.task}: {rep.heads[0][1]}", fontsize=9)
            ax.set_xlabel("zoom")
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        axes[0][0].legend(fontsize=7)
        fig.suptitle("By zoom", fontsize=10)
        made.append(_save(fig, "by_zoom.png", credit=True))

    for rep in maps:  # a task that breaks down by route length in steps (SRN)
        if not any(m.breakdowns.get("steps") for m in rep.rows):
            continue
        fig, ax = plt.subplots(figsize=(5, 3.2))
        for m in rep.rows:
            pts = sorted((int(k), v) for k, v in m.breakdowns.get("steps", {}).items()
                         if k.isdigit() and _finite(v))  # fmt: skip
            if pts:
                ax.plot(*zip(*pts, strict=True), marker="o", label=m.label)
        metric = rep.heads[0][1]
        ax.set_xlabel("route length (steps)")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylabel(metric)
        ax.set_title(f"{rep.task}: {metric} by route length", fontsize=10)
        ax.legend(fontsize=8)
        made.append(_save(fig, plot_name(rep.task, "_by_steps.png"), credit=True))

    for rep in maps:  # tasks that predict a quantity: predicted against true
        plot = _predicted(plt, rep.task, [r for r in runs if rep.task in r.scored])
        if plot is not None:
            made.append(plot)
    plot = _paired(plt, paired)
    if plot is not None:
        made.append(plot)
    return dict(made)


def _predicted(plt, task: str, runs: Sequence[ScoredRun]) -> tuple[str, bytes] | None:
    """Predicted against true, per unit where the samples ask in several (RLE's metres and
    feet), on log axes where the truths span more than a factor of ten; None where the
    task's scores hold no predicted quantities (or only yes/no ones)."""
    from matplotlib.ticker import NullFormatter, ScalarFormatter

    def unit(s) -> str:
        return s.metadata.unit or getattr(s.ground_truth, "unit", None) or ""

    pts: dict[str, dict[str, list[tuple[float, float]]]] = {}
    for run in runs:
        for s, sc in run.scored[task]:
            t, p = sc.values.get("truth"), sc.values.get("predicted")
            if t is not None and p is not None and _finite(t) and _finite(p):
                pts.setdefault(unit(s), {}).setdefault(run.model, []).append((t, p))
    truths = {t for by in pts.values() for xs in by.values() for t, _ in xs}
    if len(truths) <= 2 and truths <= {0.0, 1.0}:
        return None  # yes/no answers: nothing to plot
    if not truths:
        return None
    units = sorted(pts)
    fig, axes = plt.subplots(1, len(units), figsize=(4.2 * len(units), 3.8), squeeze=False)
    for ax, u in zip(axes[0], units, strict=True):
        every = [x for xs in pts[u].values() for x in xs]
        positive = [x for x in every if x[0] > 0 and x[1] > 0]
        ts = [t for t, _ in positive]
        log = bool(ts) and max(ts) > 10 * min(ts)
        for model, xs in pts[u].items():
            shown = [x for x in xs if x[0] > 0 and x[1] > 0] if log else xs
            if shown:
                ax.scatter(*zip(*shown, strict=True), s=14, alpha=0.7, label=model)
        lo = min(min(t, p) for t, p in (positive if log else every))
        hi = max(max(t, p) for t, p in (positive if log else every))
        ax.plot([lo, hi], [lo, hi], color="#999", lw=0.8)
        if log:
            ax.set_xscale("log")
            ax.set_yscale("log")
            for axis in (ax.xaxis, ax.yaxis):
                axis.set_major_formatter(ScalarFormatter())
                axis.set_minor_formatter(NullFormatter())
        suffix = f" ({u})" if u else ""
        ax.set_xlabel(f"true{suffix}")
        ax.set_ylabel(f"predicted{suffix}")
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7)
    fig.suptitle(f"{task}: predicted against true", fontsize=10)
    return _save(fig, plot_name(task, "_predicted.png"), credit=True)


def _paired(plt, lines: Sequence[PairedLine]) -> tuple[str, bytes] | None:
    """``paired.png``: one panel per task (and headline row), a row per variant, each
    model's difference (variant minus base) with its 95 % interval, a line at zero; None
    where no line has a difference (no variants, or only unanswerable items)."""
    shown = [x for x in lines if not x.unanswerable and _finite(x.difference)]
    if not shown:
        return None
    panels = list(dict.fromkeys((x.task, x.row, x.metric) for x in shown))
    models = list(dict.fromkeys(x.model for x in shown))
    variants = {p: list(dict.fromkeys(x.variant for x in shown if (x.task, x.row, x.metric) == p))
                for p in panels}  # fmt: skip
    heights = [0.35 * len(variants[p]) * max(1, len(models)) + 0.9 for p in panels]
    fig, axes = plt.subplots(
        len(panels), 1, figsize=(6.4, sum(heights)), squeeze=False,
        gridspec_kw={"height_ratios": heights},
    )  # fmt: skip
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    step = 0.8 / max(1, len(models))
    for ax, panel in zip(axes[:, 0], panels, strict=True):
        task, row, metric = panel
        names = variants[panel]
        for j, model in enumerate(models):
            for i, variant in enumerate(names):
                line = next((x for x in shown if (x.task, x.row, x.metric) == panel
                             and x.variant == variant and x.model == model), None)  # fmt: skip
                if line is None:
                    continue
                y = i + (j - (len(models) - 1) / 2) * step
                lo, hi = line.interval
                err = [[line.difference - lo], [hi - line.difference]] if _finite(lo) else None
                colour = colours[j % len(colours)]
                ax.errorbar(line.difference, y, xerr=err, fmt="o", capsize=3, ms=4,
                            color=colour, label=model if i == 0 else None)  # fmt: skip
        ax.axvline(0, color="#555", lw=0.8)
        ax.set_yticks(range(len(names)))
        ax.set_yticklabels(names, fontsize=8)
        ax.set_ylim(len(names) - 0.5, -0.5)
        where = "" if row == "all" else f" ({row})"
        better = "lower" if metric in LOWER_IS_BETTER else "higher"
        ax.set_title(f"{task}: {metric}{where}, variant − base ({better} is better)", fontsize=9)
        ax.tick_params(axis="x", labelsize=8)
    axes[0, 0].legend(fontsize=7, loc="best")
    axes[-1, 0].set_xlabel("paired difference, variant − base (95 % bootstrap interval)")
    fig.tight_layout()
    return _save(fig, "paired.png", credit=True)
