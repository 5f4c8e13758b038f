"""
The drawing half of C{--trace}: a recorded L{tinyscrapy.observe.trace.Trace} becomes one
self-contained HTML page (inline CSS and SVG, no script, a C{viewBox} so it fits any
window): a lane per concurrent download in each slot; per request its phases, queued (a
thin line; dashed for a retry waiting out its backoff), downloading (the bar, coloured by
outcome) and scraping (a pale bar); the in-flight and queued counts over time against a
line at C{CONCURRENT_REQUESTS}; a tick per turn of C{_next_request}, its tooltip the causes
that asked for it; and a summary. Runs once, at C{spider_closed}.
"""

import os
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
                 "detail", "lane", "continues")

    def __init__(self, rid, url, slot, scheduled, start, continues=""):
        self.rid, self.url, self.slot = rid, url, slot
        self.scheduled, self.start, self.continues = scheduled, start, continues
        self.end = self.done = None
        self.outcome, self.detail, self.lane = "unfinished", "", 0


def downloads_of(trace, offset=0.0):
    """The recorded downloads, in start order, the in-flight and queued series, the turns.

    @return: C{(downloads, in_flight, queued, turns)}; each series a list of C{(time,
        count)}, C{turns} a list of C{(time, causes)}."""
    scheduled, open_downloads, downloads, turns = {}, {}, [], []
    in_flight, queued, count = [(offset, 0)], [(offset, 0)], 0
    for event in trace.events:
        kind, t = event[0], event[1] + offset
        if kind == "scheduled":
            scheduled[event[2]] = (t, event[3] if len(event) > 3 else "")
        elif kind == "start":
            rid = event[2]
            at, continues = scheduled.get(rid, (t, ""))
            download = Download(rid, trace.urls[rid], event[3], at, t, continues)
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
            turns.append((t, event[4] if len(event) > 4 else ""))
    return downloads, in_flight, queued, turns


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


def _timeline_svg(downloads, lanes, duration, end_time, limits=None):
    """The bars: one group of lanes per slot (a lane per download its slot runs at once,
    a dashed line under lane C{parallelism}, each send's delay window shaded), one bar per
    download.

    @param limits: slot to C{(parallelism, delay)}, when known."""
    scale = PLOT_W / max(duration, 1e-6)
    limits = limits or {}
    rows, y, out = {}, 20, []
    for slot, count in lanes.items():
        rows[slot] = y
        parallelism, delay = limits.get(slot, (None, 0))
        label = str(slot) if parallelism is None else f"{slot} (max {parallelism})"
        out.append(f'<text class="slot" x="{LABEL_W - 6}" y="{y + LANE_H - 1}">'
                   f'{escape(label)}</text>')
        if parallelism is not None and count > parallelism:
            line_y = y + parallelism * (LANE_H + 2) - 1
            out.append(f'<line class="parallelism" x1="{LABEL_W}" y1="{line_y}" '
                       f'x2="{LABEL_W + PLOT_W}" y2="{line_y}"/>')
        group_h = count * (LANE_H + 2)
        if delay:
            out.extend(f'<rect class="delay" x="{LABEL_W + d.start * scale:.1f}" y="{y - 1}" '
                       f'width="{max(0.5, delay * scale):.1f}" height="{group_h}"/>'
                       for d in downloads if d.slot == slot)
        y += group_h + 6
    height = y + 4
    out.insert(0, _axis(duration, scale, height))
    for d in downloads:
        end = d.end if d.end is not None else end_time
        done = d.done if d.done is not None else end
        x = LABEL_W + d.start * scale
        width = max(1.0, (end - d.start) * scale)
        top = rows[d.slot] + d.lane * (LANE_H + 2)
        waited = "retry backoff (no slot held)" if d.continues == "retry" else "queued"
        tip = escape(f"{d.url}\n{OUTCOMES[d.outcome][0]}: {d.detail}\n"
                     f"{waited} {d.start - d.scheduled:.3f} s (from {d.scheduled:.3f} s)\n"
                     f"downloading {end - d.start:.3f} s (from {d.start:.3f} s)\n"
                     f"scraping {done - end:.3f} s (to {done:.3f} s)")
        if d.start > d.scheduled:
            qx = LABEL_W + d.scheduled * scale
            phase = "backoff" if d.continues == "retry" else "queued-phase"
            out.append(f'<line class="{phase}" x1="{qx:.1f}" y1="{top + LANE_H / 2}" '
                       f'x2="{x:.1f}" y2="{top + LANE_H / 2}"><title>{tip}</title></line>')
        out.append(f'<rect class="{d.outcome}" x="{x:.1f}" y="{top}" width="{width:.1f}" '
                   f'height="{LANE_H}"><title>{tip}</title></rect>')
        if done > end:  # drawn first: the slot is free, a later download may share the lane
            out.insert(1, f'<rect class="scraping" x="{x + width:.1f}" y="{top + LANE_H - 3}" '
                       f'width="{max(1.0, (done - end) * scale):.1f}" height="3">'
                       f'<title>{tip}</title></rect>')
    return (f'<svg id="timeline" xmlns="http://www.w3.org/2000/svg" width="100%" '
            f'viewBox="0 0 {LABEL_W + PLOT_W + 20} {height}">{"".join(out)}</svg>')


def _axis(duration, scale, height):
    step = _nice_step(duration)
    parts, t = [], 0.0
    while t <= duration + 1e-9:
        x = LABEL_W + t * scale
        parts.append(f'<line class="grid" x1="{x:.1f}" y1="14" x2="{x:.1f}" y2="{height}"/>'
                     f'<text class="tick" x="{x:.1f}" y="10">{t:g} s</text>')
        t += step
    return "".join(parts)


def _series_svg(in_flight, queued, duration, end_time, limit=None, turns=()):
    """The in-flight count (and the queue) over time, as step lines, against a line at
    C{limit} (C{CONCURRENT_REQUESTS}), with a tick per turn of the loop below."""
    scale = PLOT_W / max(duration, 1e-6)
    most_in_flight, most_queued = max(n for _, n in in_flight), max(n for _, n in queued)
    top = max(most_in_flight, most_queued, limit or 0, 1)

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

    reference = ""
    if limit:
        y = CHART_H - limit * (CHART_H - 10) / top + 5
        reference = (f'<line id="max-line" class="limit" x1="{LABEL_W}" y1="{y:.1f}" '
                     f'x2="{LABEL_W + PLOT_W}" y2="{y:.1f}"/><text class="slot" '
                     f'x="{LABEL_W + PLOT_W - 2}" y="{y - 3:.1f}">CONCURRENT_REQUESTS {limit}'
                     f'</text>')
    ticks = "".join(
        f'<line class="turn" x1="{LABEL_W + t * scale:.1f}" y1="{CHART_H + 8}" '
        f'x2="{LABEL_W + t * scale:.1f}" y2="{CHART_H + 18}"><title>turn at {t:.4f} s: '
        f'{escape(causes or "-")}</title></line>' for t, causes in turns)
    return (f'<svg id="series" xmlns="http://www.w3.org/2000/svg" width="100%" '
            f'viewBox="0 0 {LABEL_W + PLOT_W + 20} {CHART_H + 24}">'
            f'{_axis(duration, scale, CHART_H + 5)}{reference}'
            f'<text class="slot" x="{LABEL_W - 6}" y="{CHART_H + 17}">turns of the loop</text>'
            f'<g id="turns">{ticks}</g>'
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
rect.delay { fill: #f3ecd2; } line.parallelism { stroke: #d64545; stroke-dasharray: 3 3; }
line.queued-phase { stroke: #999; stroke-width: 1; } line.backoff { stroke: #4a7fd4;
stroke-width: 1.5; stroke-dasharray: 3 2; } rect.scraping { fill: #c9b8e8; }
line.limit { stroke: #d64545; stroke-dasharray: 6 3; } line.turn { stroke: #666; }
table.downloads td { padding: 0 8px 0 0; white-space: nowrap; }
""" + "".join(f"rect.{k}, i.{k} {{ fill: {c}; background: {c}; }}\n"
              for k, (_, c) in OUTCOMES.items())


def render_html(trace, name):
    """The page of one spider's trace, as a string."""
    return render_page([(trace, name)])


def render_page(traces):
    """
    One page for the spiders whose traces share a file, as a string: a section each, all
    on one time axis (0 is when the first of them opened), so a reader sees them share
    the reactor.

    @param traces: C{(trace, spider name)} pairs.
    """
    first = min(getattr(trace, "opened_at", 0.0) for trace, _ in traces)
    parts = []
    for trace, name in traces:
        offset = getattr(trace, "opened_at", 0.0) - first
        downloads, in_flight, queued, turns = downloads_of(trace, offset)
        end = max([offset + trace.duration] + [d.end or 0 for d in downloads])
        parts.append((trace, name, offset, downloads, in_flight, queued, turns, end))
    axis = max(part[-1] for part in parts)
    names = ", ".join(name for _, name, *_ in parts)
    sections = "".join(_section(*part[:-1], axis) for part in parts)
    shared = "" if len(parts) == 1 else (
        f'<p class="note">{len(parts)} spiders of one process, on one time axis: 0 is when '
        f'the first one opened; they share one reactor.</p>\n')
    return (f'<!DOCTYPE html>\n<html><head><meta charset="utf-8">'
            f'<title>trace: {escape(names)}</title><style>{CSS}</style></head><body>\n'
            f'<h1>Crawl timeline: {escape(names)}</h1>\n{shared}{sections}</body></html>\n')


def _section(trace, name, offset, downloads, in_flight, queued, turns, duration):
    """One spider's part of the page, drawn on an axis of C{duration} seconds."""
    lanes = assign_lanes(downloads)
    outcomes = Counter(d.outcome for d in downloads)
    stats = trace.crawler.stats
    limit = trace.crawler.settings.getint("CONCURRENT_REQUESTS")
    own = max([offset + trace.duration] + [d.end or 0 for d in downloads]) - offset
    summary = [
        ("spider", name), ("finish reason", trace.reason or "-"),
        ("duration", f"{own:.3f} s" + (f" (opened at {offset:.3f} s)" if offset else "")),
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
        f'<section class="spider" id="spider-{escape(name)}">'
        f'<h2>{escape(name)}</h2>\n{note}\n'
        f'<table class="summary">{rows}</table>\n'
        f'<h3>Requests in flight (solid: downloading or scraping) and queued (dashed)</h3>\n'
        f'<p class="legend">Red dashed line: CONCURRENT_REQUESTS, the engine\'s max. '
        f'Ticks below: each turn of the loop (_next_request); hover for what asked for it.'
        f'</p>\n'
        f'{_series_svg(in_flight, queued, duration, duration, limit, turns)}\n'
        f'<h3>Downloads, one lane per concurrent download of each slot</h3>\n'
        f'<p class="legend">{legend}</p>\n<p class="legend">Phases of a request: thin grey '
        f'line, queued (scheduled, not yet taken); dashed blue line, a retry waiting out its '
        f'backoff, holding no slot; the bar, downloading (middlewares and transfer); pale '
        f'violet, scraping (callback and pipelines) until it leaves the flight. Pale '
        f'yellow: each send\'s delay window in its slot (DOWNLOAD_DELAY); a red dashed line '
        f'under a slot\'s lanes: its parallelism.</p>\n'
        f'{_timeline_svg(downloads, lanes, duration, duration, _limits(trace, lanes))}\n'
        f'<details><summary>Every download ({len(downloads)})</summary>'
        f'<table class="downloads"><tr><th>start s</th><th>took s</th><th>slot</th>'
        f'<th>outcome</th><th>detail</th><th>URL</th></tr>{table}</table></details>\n'
        f'</section>\n')


def _limits(trace, slots):
    """C{{slot: (parallelism, delay)}} from the crawl's slots, for the lanes' reference."""
    known = getattr(trace.crawler, "slots", None)
    if known is None:
        return {}
    from tinyscrapy.download.limits import match_rule
    limits = {}
    for key in slots:
        slot = known._slots.get(key)
        if slot is not None:
            limits[key] = (slot.rule.parallelism, slot.delay)
        elif isinstance(key, str):  # forgotten since (idle): its rule says the same
            rule = match_rule(known.rules, key, known.default)
            limits[key] = (rule.parallelism, rule.delay)
    return limits


def write_html(path, traces):
    """Write the page of C{traces} (C{(trace, name)} pairs) to C{path} (folders made)."""
    folder = os.path.dirname(path)
    if folder:
        os.makedirs(folder, exist_ok=True)
    html = render_page(traces)
    with open(path, "w", encoding="utf-8") as f:
        f.write(html)
