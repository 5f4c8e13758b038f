"""
The drawing half of C{--trace}: a recorded L{tinyscrapy.observe.trace.Trace} becomes one
self-contained HTML page (inline CSS and SVG, no script): a lane per concurrent download
in each slot, a bar per download coloured by outcome, the in-flight and queued counts over
time, and a summary. Runs once, at C{spider_closed}.
"""

import os
import sys
from collections import Counter
from html import escape

# Outcomes of one download, with the label and colour the timeline draws them in.
OUTCOMES = {
    "ok": ("response < 400", "#3a9d5d"),
    "http-error": ("response >= 400", "#e8a33d"),
    "continued": ("redirect or retry", "#4a7fd4"),
    "failed": ("failure", "#d64545"),
    "ignored": ("ignored by a middleware", "#9b6bc4"),
    "unfinished": ("end not recorded", "#999999"),
}


class Download:
    """One download as drawn: a bar from C{start} to C{end} in its slot's lane."""

    __slots__ = ("rid", "url", "slot", "scheduled", "start", "end", "done", "outcome",
                 "detail", "lane")

    def __init__(self, rid, url, slot, scheduled, start):
        self.rid, self.url, self.slot = rid, url, slot
        self.scheduled, self.start = scheduled, start
        self.end = self.done = None
        self.outcome, self.detail, self.lane = "unfinished", "", 0


def downloads_of(trace):
    """The recorded downloads, in start order, and the in-flight and queued series.

    @return: C{(downloads, in_flight, queued)}; each series a list of C{(time, count)}."""
    scheduled, open_downloads, downloads = {}, {}, []
    in_flight, queued, count = [(0.0, 0)], [(0.0, 0)], 0
    for event in trace.events:
        kind, t = event[0], event[1]
        if kind == "scheduled":
            scheduled[event[2]] = t
        elif kind == "start":
            rid = event[2]
            download = Download(rid, trace.urls[rid], event[3], scheduled.get(rid, t), t)
            open_downloads[rid] = download
            downloads.append(download)
            if event[4]:  # in the engine's flight, until its "done"
                count += 1
                in_flight.append((t, count))
        elif kind == "end":
            download = open_downloads.get(event[2])
            if download is not None:
                download.end, download.outcome, download.detail = t, event[3], event[4]
        elif kind == "done":
            download = open_downloads.pop(event[2], None)
            if download is not None:
                download.done = t
                count -= 1
                in_flight.append((t, count))
        elif kind == "turn":
            queued.append((t, event[3]))
    return downloads, in_flight, queued


def assign_lanes(downloads):
    """Give each download the first lane of its slot free at its start.
    @return: a dict of slot to its number of lanes, in order of first use."""
    lanes = {}
    for download in downloads:
        ends = lanes.setdefault(download.slot, [])
        finish = download.end if download.end is not None else float("inf")
        for lane, busy_until in enumerate(ends):
            if busy_until <= download.start:
                download.lane, ends[lane] = lane, finish
                break
        else:
            download.lane = len(ends)
            ends.append(finish)
    return {slot: len(ends) for slot, ends in lanes.items()}


LABEL_W, PLOT_W, LANE_H, CHART_H = 200, 1000, 10, 120


def _nice_step(duration):
    """A round step for the time axis: about ten, at 1, 2 or 5 times a power of ten."""
    raw = max(duration, 1e-6) / 10
    power = 1.0
    while power * 10 <= raw:
        power *= 10
    while power > raw:
        power /= 10
    return next(power * m for m in (1, 2, 5, 10) if power * m >= raw)


def _timeline_svg(downloads, lanes, duration, end_time):
    """The bars: one group of lanes per slot, one bar per download."""
    scale = PLOT_W / max(duration, 1e-6)
    rows, y, out = {}, 20, []
    for slot, count in lanes.items():
        rows[slot] = y
        out.append(f'<text class="slot" x="{LABEL_W - 6}" y="{y + LANE_H - 1}">'
                   f'{escape(str(slot))}</text>')
        y += count * (LANE_H + 2) + 6
    height = y + 4
    out.insert(0, _axis(duration, scale, height))
    for d in downloads:
        end = d.end if d.end is not None else end_time
        x = LABEL_W + d.start * scale
        width = max(1.0, (end - d.start) * scale)
        top = rows[d.slot] + d.lane * (LANE_H + 2)
        tip = (f"{d.url}\n{OUTCOMES[d.outcome][0]}: {d.detail}\n"
               f"started {d.start:.3f} s, took {end - d.start:.3f} s")
        out.append(f'<rect class="{d.outcome}" x="{x:.1f}" y="{top}" width="{width:.1f}" '
                   f'height="{LANE_H}"><title>{escape(tip)}</title></rect>')
    return (f'<svg id="timeline" xmlns="http://www.w3.org/2000/svg" '
            f'width="{LABEL_W + PLOT_W + 20}" height="{height}">{"".join(out)}</svg>')


def _axis(duration, scale, height):
    step = _nice_step(duration)
    parts, t = [], 0.0
    while t <= duration + 1e-9:
        x = LABEL_W + t * scale
        parts.append(f'<line class="grid" x1="{x:.1f}" y1="14" x2="{x:.1f}" y2="{height}"/>'
                     f'<text class="tick" x="{x:.1f}" y="10">{t:g} s</text>')
        t += step
    return "".join(parts)


def _series_svg(in_flight, queued, duration, end_time):
    """The in-flight count (and the queue) over time, as step lines."""
    scale = PLOT_W / max(duration, 1e-6)
    most_in_flight, most_queued = max(n for _, n in in_flight), max(n for _, n in queued)
    top = max(most_in_flight, most_queued, 1)

    def points(series):
        pts, last = [], 0
        for t, n in series + [(end_time, series[-1][1])]:
            x = LABEL_W + t * scale
            pts.append(f"{x:.1f},{CHART_H - last * (CHART_H - 10) / top + 5:.1f}")
            pts.append(f"{x:.1f},{CHART_H - n * (CHART_H - 10) / top + 5:.1f}")
            last = n
        return " ".join(pts)

    def data(series):
        return " ".join(f"{t:.3f}:{n}" for t, n in series)

    return (f'<svg id="series" xmlns="http://www.w3.org/2000/svg" '
            f'width="{LABEL_W + PLOT_W + 20}" height="{CHART_H + 20}">'
            f'{_axis(duration, scale, CHART_H + 5)}'
            f'<text class="slot" x="{LABEL_W - 6}" y="20">in flight: max {most_in_flight}</text>'
            f'<text class="slot" x="{LABEL_W - 6}" y="34">queued: max {most_queued}</text>'
            f'<polyline id="queued" class="queued" points="{points(queued)}" '
            f'data-series="{data(queued)}"/>'
            f'<polyline id="in-flight" class="in-flight" points="{points(in_flight)}" '
            f'data-series="{data(in_flight)}"/></svg>')


CSS = """
body { font: 13px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.3em; } .note { background: #fff3cd; padding: .5em 1em; }
table.summary td, table.summary th { padding: 2px 12px 2px 0; text-align: left; }
svg text { font: 10px sans-serif; fill: #444; } svg text.slot { text-anchor: end; }
svg line.grid { stroke: #e4e4e4; } svg rect:hover { stroke: #000; }
polyline { fill: none; stroke-width: 1.5; } .in-flight { stroke: #2b5fad; }
.queued { stroke: #aaa; stroke-dasharray: 4 3; }
.legend span { display: inline-block; margin-right: 1.2em; }
.legend i { display: inline-block; width: 12px; height: 10px; margin-right: 4px; }
table.downloads td { padding: 0 8px 0 0; white-space: nowrap; }
""" + "".join(f"rect.{k}, i.{k} {{ fill: {c}; background: {c}; }}\n"
              for k, (_, c) in OUTCOMES.items())


def render_html(trace, name):
    """The whole page, as a string."""
    downloads, in_flight, queued = downloads_of(trace)
    lanes = assign_lanes(downloads)
    duration = max([trace.duration] + [d.end or 0 for d in downloads])
    outcomes = Counter(d.outcome for d in downloads)
    stats = trace.crawler.stats
    summary = [
        ("spider", name), ("finish reason", trace.reason or "-"),
        ("duration", f"{duration:.3f} s"),
        ("pages (responses)", stats.get_value("response_received_count", 0)),
        ("items", stats.get_value("item_scraped_count", 0)),
        ("failures", stats.get_value("ledger/failed", 0)),
        ("downloads drawn", len(downloads)),
        ("by outcome", ", ".join(f"{k} {n}" for k, n in sorted(outcomes.items())) or "-"),
        ("peak in flight", max(n for _, n in in_flight)),
        ("slots (hosts)", len(lanes)), ("loop turns", trace.turns),
        ("events recorded", f"{len(trace.events)} (cap {trace.max_events})"),
    ]
    rows = "".join(f"<tr><th>{escape(k)}</th><td>{escape(str(v))}</td></tr>"
                   for k, v in summary)
    note = ""
    if trace.not_recorded:
        note = (f'<p class="note" id="truncated">Truncated: TRACE_MAX_EVENTS={trace.max_events}'
                f' was reached; {trace.not_recorded} later events were not recorded, so the '
                f'timeline stops early (grey bars: their end was not recorded).</p>')
    legend = "".join(f'<span><i class="{k}"></i>{escape(label)}</span>'
                     for k, (label, _) in OUTCOMES.items())
    table = "".join(
        f'<tr class="{d.outcome}"><td>{d.start:.3f}</td>'
        f'<td>{(d.end - d.start) if d.end is not None else float("nan"):.3f}</td>'
        f'<td>{escape(str(d.slot))}</td><td>{d.outcome}</td><td>{escape(d.detail)}</td>'
        f'<td>{escape(d.url)}</td></tr>' for d in downloads)
    return (
        f'<!DOCTYPE html>\n<html><head><meta charset="utf-8">'
        f'<title>trace: {escape(name)}</title><style>{CSS}</style></head><body>\n'
        f'<h1>Crawl timeline: {escape(name)}</h1>\n{note}\n'
        f'<table class="summary">{rows}</table>\n'
        f'<h2>Requests in flight (solid) and queued (dashed)</h2>\n'
        f'{_series_svg(in_flight, queued, duration, duration)}\n'
        f'<h2>Downloads, one lane per concurrent download of each slot</h2>\n'
        f'<p class="legend">{legend}</p>\n'
        f'{_timeline_svg(downloads, lanes, duration, duration)}\n'
        f'<details><summary>Every download ({len(downloads)})</summary>'
        f'<table class="downloads"><tr><th>start s</th><th>took s</th><th>slot</th>'
        f'<th>outcome</th><th>detail</th><th>URL</th></tr>{table}</table></details>\n'
        f'</body></html>\n')


def write_html(trace, name):
    """Write the page to C{trace.path} (folders made), or to stdout when it is C{-}."""
    if trace.path == "-":
        sys.stdout.write(render_html(trace, name))
        sys.stdout.flush()
        return
    folder = os.path.dirname(trace.path)
    if folder:
        os.makedirs(folder, exist_ok=True)
    html = render_html(trace, name)
    with open(trace.path, "w", encoding="utf-8") as f:
        f.write(html)
