"""
The drawing half of C{--trace}: a recorded L{tinyscrapy.trace.Trace} becomes one
self-contained HTML page (inline CSS and SVG, no script, a C{viewBox} so it fits any
window): a lane per concurrent download in each slot; per request its phases, queued (a
thin line; dashed for a retry waiting out its backoff), downloading (the bar, coloured by
outcome) and scraping (a pale bar), each send's delay window shaded in its slot; the
in-flight and queued counts over time, each on its own scale (L{tinyscrapy.trace.charts});
and a summary. Runs once, at C{spider_closed}, when the last spider of a page closes.
"""

import os
import re
from collections import Counter
from html import escape

from tinyscrapy.trace.charts import LABEL_W, PLOT_W, WIDTH, closed_after, series_svg, time_axis

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
                 "detail", "lane", "continues", "delay")

    def __init__(self, rid, url, slot, scheduled, start, continues="", delay=None):
        self.rid, self.url, self.slot = rid, url, slot
        self.scheduled, self.start, self.continues = scheduled, start, continues
        self.delay = delay  # the slot's delay in force at the start, if recorded
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
            download = Download(rid, trace.urls[rid], event[3], at, t, continues,
                                event[5] if len(event) > 5 else None)
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


LANE_H = 10
SLOT_LABEL_CHARS = 24  # a longer slot name is cut, whole in its tooltip


def _timeline_svg(downloads, lanes, duration, end_time, limits=None, pid=""):
    """The bars: one group of lanes per slot (a lane per download its slot runs at once,
    a dotted line under lane C{parallelism}, each send's delay window shaded), one group
    of phases per download, on an axis of C{duration} seconds.

    @param end_time: when this spider closed (what is unfinished is drawn to there).
    @param limits: slot to C{(parallelism, delay)}, when known.
    @param pid: the prefix of the chart's id (unique per spider on the page)."""
    scale = PLOT_W / max(duration, 1e-6)
    limits = limits or {}
    rows, y, out, by_slot = {}, 20, [], {}
    for d in downloads:
        by_slot.setdefault(d.slot, []).append(d)
    for slot, count in lanes.items():
        rows[slot] = y
        parallelism, delay = limits.get(slot, (None, 0))
        label = str(slot)
        if len(label) > SLOT_LABEL_CHARS:
            label = label[:SLOT_LABEL_CHARS - 1] + "\u2026"
        if parallelism is not None:
            label += f" (max {parallelism})"
        out.append(f'<text class="slot" x="{LABEL_W - 6}" y="{y + LANE_H - 1}">'
                   f'<title>slot {escape(str(slot))}</title>{escape(label)}</text>')
        if parallelism is not None and count > parallelism:
            line_y = y + parallelism * (LANE_H + 2) - 1
            out.append(f'<line class="parallelism" x1="{LABEL_W}" y1="{line_y}" '
                       f'x2="{LABEL_W + PLOT_W}" y2="{line_y}"><title>{escape(str(slot))}: '
                       f'{parallelism} at once (the lanes below are requests outside the '
                       f'count)</title></line>')
        group_h = count * (LANE_H + 2)
        out.extend(_delay_windows(by_slot[slot], delay, y - 1, group_h, scale, end_time))
        y += group_h + 6
    height = y + 4
    bars = "".join(_request_marks(d, rows[d.slot], scale, end_time) for d in downloads)
    return (f'<svg id="{pid}timeline" class="timeline" xmlns="http://www.w3.org/2000/svg" '
            f'width="100%" viewBox="0 0 {WIDTH} {height}">'
            f'{time_axis(duration, scale, 14, height)}'
            f'{closed_after(end_time, duration, scale, 14, height)}{"".join(out)}{bars}</svg>')


def _request_marks(d, row, scale, end_time):
    """
    One request's phases in its lane, as a group whose one C{<title>} is the tooltip of
    each of them: the queued (or backoff) line, the bar (downloading), the pale bar
    (scraping). Drawn in start order: a later download sharing the lane is drawn above.
    """
    end = d.end if d.end is not None else end_time
    done = d.done if d.done is not None else end
    x = LABEL_W + d.start * scale
    width = max(1.0, (end - d.start) * scale)
    top = row + d.lane * (LANE_H + 2)
    waited = "retry backoff (no slot held)" if d.continues == "retry" else "queued"
    marks = ['<g class="request"><title>' + escape(
        f"{d.url}\n{OUTCOMES[d.outcome][0]}: {d.detail}\n"
        f"{waited} {d.start - d.scheduled:.3f} s (from {d.scheduled:.3f} s)\n"
        f"downloading {end - d.start:.3f} s (from {d.start:.3f} s)\n"
        f"scraping {done - end:.3f} s (to {done:.3f} s)") + "</title>"]
    if d.start > d.scheduled:
        phase = "backoff" if d.continues == "retry" else "queued-phase"
        marks.append(f'<line class="{phase}" x1="{LABEL_W + d.scheduled * scale:.1f}" '
                     f'y1="{top + LANE_H / 2}" x2="{x:.1f}" y2="{top + LANE_H / 2}"/>')
    marks.append(f'<rect class="{d.outcome}" x="{x:.1f}" y="{top}" width="{width:.1f}" '
                 f'height="{LANE_H}"/>')
    if done > end:
        marks.append(f'<rect class="scraping" x="{x + width:.1f}" y="{top + LANE_H - 3}" '
                     f'width="{max(1.0, (done - end) * scale):.1f}" height="3"/>')
    marks.append("</g>")
    return "".join(marks)


def _delay_windows(downloads, delay, top, height, scale, end_time):
    """A shaded rectangle per send of one slot's C{downloads}, as long as the delay in
    force then (as recorded at its start, else C{delay}; cut at C{end_time}), with its
    tooltip."""
    for d in downloads:
        window = d.delay if d.delay is not None else delay
        if not window:
            continue
        width = max(0.5, min(window, end_time - d.start) * scale)
        yield (f'<rect class="delay" x="{LABEL_W + d.start * scale:.1f}" y="{top}" '
               f'width="{width:.1f}" height="{height}"><title>'
               f'{escape(str(d.slot))}: no other send before {d.start + window:.3f} s (delay '
               f'{window:.3f} s from {d.start:.3f} s)</title></rect>')


CSS = """
body { font: 13px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.3em; } .note { background: #fff3cd; padding: .5em 1em; }
table.summary td, table.summary th { padding: 2px 12px 2px 0; text-align: left; }
svg text { font: 10px sans-serif; fill: #444; } svg text.slot, svg text.ytick,
svg text.panel { text-anchor: end; } svg text.panel { font-weight: bold; }
svg line.grid, svg line.ygrid { stroke: #ececec; } svg line.yaxis { stroke: #888; }
svg rect:hover { stroke: #000; }
polyline { fill: none; stroke-width: 1.5; } .in-flight { stroke: #2b5fad; }
.queued { stroke: #777; stroke-dasharray: 4 3; }
.legend span { display: inline-block; margin-right: 1.2em; }
.legend i { display: inline-block; width: 12px; height: 10px; margin-right: 4px; }
.legend svg { margin-right: 4px; vertical-align: middle; }
rect.delay { fill: #f3e6b3; fill-opacity: .6; stroke: #e0c870; stroke-width: .5; }
line.parallelism { stroke: #d9822b; stroke-dasharray: 2 2; stroke-width: 1.2; }
line.queued-phase { stroke: #999; stroke-width: 1; } line.backoff { stroke: #4a7fd4;
stroke-width: 1.5; stroke-dasharray: 3 2; } rect.scraping { fill: #c9b8e8; }
line.limit { stroke: #d64545; stroke-dasharray: 6 3; stroke-width: 1.2; }
line.turn { stroke: #666; } svg text.ref.limit { fill: #b83232; }
svg text.ref.parallelism { fill: #b0661c; } rect.closed { fill: #f4f4f4; }
table.downloads td { padding: 0 8px 0 0; white-space: nowrap; }
@media (max-width: 900px) { svg text { font-size: 12px; } body { margin: .5em; } }
""" + "".join(f"rect.{k}, i.{k} {{ fill: {c}; background: {c}; }}\n"
              for k, (_, c) in OUTCOMES.items())


def _swatch(css, kind="line"):
    """A legend sample: a short line (or a box) drawn with the chart's own class."""
    shape = ('<rect class="{0}" x="0" y="1" width="24" height="8"/>' if kind == "box" else
             '<line class="{0}" x1="0" y1="5" x2="24" y2="5"/>').format(css)
    return f'<svg width="24" height="10" viewBox="0 0 24 10">{shape}</svg>'


SERIES_LEGEND = (
    f'<p class="legend"><span>{_swatch("in-flight")}in flight (downloading or scraping; '
    f'own scale)</span><span>{_swatch("queued")}queued (sampled at each turn; own scale)'
    f'</span><span>{_swatch("limit")}CONCURRENT_REQUESTS, the engine\'s max</span>'
    f'<span>{_swatch("parallelism")}a slot\'s parallelism</span>'
    f'<span>{_swatch("turn")}a turn of the loop (_next_request): hover for what asked '
    f'for it</span></p>\n')
PHASE_LEGEND = (
    f'<p class="legend"><span>{_swatch("queued-phase")}queued (scheduled, not yet taken)'
    f'</span><span>{_swatch("backoff")}a retry waiting out its backoff (no slot held)</span>'
    f'<span><i class="ok"></i>the bar: downloading (middlewares and transfer)</span>'
    f'<span>{_swatch("scraping", "box")}scraping (callback and pipelines)</span>'
    f'<span>{_swatch("delay", "box")}a send\'s delay window in its slot (DOWNLOAD_DELAY)'
    f'</span><span>{_swatch("parallelism")}a slot\'s parallelism (lanes below it: '
    f'requests outside the count)</span></p>\n')


def render_html(trace, name):
    """The page of one spider's trace, as a string."""
    return render_page([(trace, name)])


def element_ids(names):
    """
    The id of each spider's section, unique on the page (a name may repeat, or hold
    characters an id cannot): letters, digits, C{_} and single dashes. The ids inside a
    section are its id, C{--} and a fixed name (C{books--series}), so they cannot clash
    with another section's.
    """
    prefixes, taken = [], set()
    for name in names:
        base = re.sub(r"[^A-Za-z0-9_]+", "-", str(name)).strip("-") or "spider"
        prefix, n = base, 1
        while prefix in taken:
            n += 1
            prefix = f"{base}-{n}"
        taken.add(prefix)
        prefixes.append(prefix)
    return prefixes


def render_page(traces):
    """
    One page for the spiders whose traces share a file, as a string: a section each, all
    on one time axis (0 is when the first of them opened), so a reader sees them share
    the reactor. Every id in a section starts with that spider's prefix
    (L{element_ids}), so the sections' ids never clash.

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
    names = [name for _, name, *_ in parts]
    prefixes = element_ids(names)
    sections = "".join(_section(*part[:-1], axis, prefix)
                       for part, prefix in zip(parts, prefixes, strict=True))
    shared = "" if len(parts) == 1 else (
        f'<p class="note">{len(parts)} spiders of one process, on one time axis: 0 is when '
        f'the first one opened; they share one reactor. '
        + ", ".join(f'<a href="#{prefix}">{escape(name)}</a>'
                    for name, prefix in zip(names, prefixes, strict=True)) + '</p>\n')
    return (f'<!DOCTYPE html>\n<html><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<title>trace: {escape(", ".join(names))}</title><style>{CSS}</style></head>'
            f'<body>\n<h1>Crawl timeline: {escape(", ".join(names))}</h1>\n{shared}'
            f'{sections}</body></html>\n')


def _section(trace, name, offset, downloads, in_flight, queued, turns, duration, prefix):
    """One spider's part of the page, drawn on an axis of C{duration} seconds, its ids
    C{prefix} and C{prefix--...}."""
    lanes = assign_lanes(downloads)
    limits = _limits(trace, lanes)
    outcomes = Counter(d.outcome for d in downloads)
    stats = trace.crawler.stats
    limit = trace.crawler.settings.getint("CONCURRENT_REQUESTS")
    closed = max([offset + trace.duration] + [d.end or 0 for d in downloads])
    own = closed - offset
    summary = [
        ("spider", name), ("finish reason", trace.reason or "-"),
        ("duration", f"{own:.3f} s" + (f" (opened at {offset:.3f} s)" if offset else "")),
        ("pages (responses)", stats.get_value("response_received_count", 0)),
        ("items", stats.get_value("item_scraped_count", 0)),
        ("failures", stats.get_value("ledger/failed", 0)),
        ("downloads drawn", len(downloads)),
        ("by outcome", ", ".join(f"{k} {n}" for k, n in sorted(outcomes.items())) or "-"),
        ("peak in flight", max(n for _, n in in_flight)),
        ("peak queued", max(n for _, n in queued)),
        ("slots (hosts)", len(lanes)), ("loop turns", trace.turns),
        ("events recorded", f"{len(trace.events)} (cap {trace.max_events})"),
    ]
    rows = "".join(f"<tr><th>{escape(k)}</th><td>{escape(str(v))}</td></tr>"
                   for k, v in summary)
    note = ""
    if trace.not_recorded:
        note = (f'<p class="note truncated" id="{prefix}--truncated">Truncated: '
                f'TRACE_MAX_EVENTS={trace.max_events} was reached; {trace.not_recorded} later '
                f'events were not recorded, so the timeline stops early (grey bars: their end '
                f'was not recorded).</p>')
    legend = "".join(f'<span><i class="{k}"></i>{escape(label)}</span>'
                     for k, (label, _) in OUTCOMES.items())
    table = "".join(
        f'<tr class="{d.outcome}"><td>{d.start:.3f}</td>'
        f'<td>{(d.end - d.start) if d.end is not None else float("nan"):.3f}</td>'
        f'<td>{escape(str(d.slot))}</td><td>{d.outcome}</td><td>{escape(d.detail)}</td>'
        f'<td>{escape(d.url)}</td></tr>' for d in downloads)
    pid = prefix + "--"
    return (
        f'<section class="spider" id="{prefix}">'
        f'<h2>{escape(name)}</h2>\n{note}\n'
        f'<table class="summary">{rows}</table>\n'
        f'<h3>Requests in flight and queued, each on its own scale</h3>\n{SERIES_LEGEND}'
        f'{series_svg(in_flight, queued, duration, closed, limit, turns, limits, pid)}\n'
        f'<h3>Downloads, one lane per concurrent download of each slot</h3>\n'
        f'<p class="legend">Bars by outcome: {legend}</p>\n{PHASE_LEGEND}'
        f'{_timeline_svg(downloads, lanes, duration, closed, limits, pid)}\n'
        f'<details><summary>Every download ({len(downloads)})</summary>'
        f'<table class="downloads"><tr><th>start s</th><th>took s</th><th>slot</th>'
        f'<th>outcome</th><th>detail</th><th>URL</th></tr>{table}</table></details>\n'
        f'</section>\n')


def _limits(trace, slots):
    """C{{slot: (parallelism, delay)}} from the crawl's slots, for the lanes' reference."""
    known = getattr(trace.crawler, "slots", None)
    if known is None:
        return {}
    from tinyscrapy.core.downloader.slots import match_rule
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
