"""
The counts half of the C{--trace} page: requests in flight and queued over time, each in a
panel of its own with its own scale and labelled ticks (the queue can hold ten thousand
while sixteen are in flight), reference lines at C{CONCURRENT_REQUESTS} and at each slot's
parallelism in the in-flight panel, and a tick per turn of C{_next_request} under both.

Both this chart and the lanes of L{tinyscrapy.trace.timeline} are drawn in a C{viewBox}
of the same width, with the same time scale, so their time axes line up on the page.
"""

from html import escape

# the width of the label column, of the plot and of the reference lines' labels (right)
LABEL_W, PLOT_W, RIGHT_W = 200, 1000, 210
WIDTH = LABEL_W + PLOT_W + RIGHT_W
FLIGHT_TOP, FLIGHT_H = 24, 100
QUEUED_TOP, QUEUED_H = FLIGHT_TOP + FLIGHT_H + 18, 70
TURNS_Y = QUEUED_TOP + QUEUED_H + 8
HEIGHT = TURNS_Y + 16


def nice_step(duration):
    """A round step for the time axis: about ten, at 1, 2 or 5 times a power of ten."""
    raw = max(duration, 1e-6) / 10
    power = 1.0
    while power * 10 <= raw:
        power *= 10
    while power > raw:
        power /= 10
    return next(power * m for m in (1, 2, 5, 10) if power * m >= raw)


def count_step(most):
    """A round step for a count axis reaching C{most}: 1, 2 or 5 times a power of ten,
    at most four steps (their labels stay apart in a short panel)."""
    power = 1
    while True:  # bounded: the step grows tenfold per round
        for m in (1, 2, 5):
            if power * m * 4 >= most:
                return power * m
        power *= 10


def closed_after(end_time, duration, scale, top, bottom):
    """A grey veil from C{end_time} (the spider closed) to the axis' end, when another
    spider of the page went on longer: nothing of this one is drawn there."""
    if end_time >= duration - 1e-9:
        return ""
    x = LABEL_W + end_time * scale
    return (f'<rect class="closed" x="{x:.1f}" y="{top}" width="{LABEL_W + PLOT_W - x:.1f}" '
            f'height="{bottom - top}"><title>closed at {end_time:.3f} s</title></rect>')


def time_axis(duration, scale, top, bottom):
    """The time ticks, labelled at the top, and their grid lines from C{top} to
    C{bottom}."""
    step = nice_step(duration)
    parts, n = [], 0
    while n * step <= duration + 1e-9:
        t = n * step
        x = LABEL_W + t * scale
        parts.append(f'<line class="grid" x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{bottom}"/>'
                     f'<text class="tick" x="{x:.1f}" y="10">{t:g} s</text>')
        n += 1
    return "".join(parts)


class Scale:
    """A count axis: C{0} at C{bottom}, C{top_value} (a round number) at C{top}."""

    def __init__(self, top, height, most):
        self.top, self.bottom = top, top + height
        self.step = count_step(max(most, 1))
        self.top_value = self.step * max(1, -(-max(most, 1) // self.step))

    def y(self, n):
        return self.bottom - n * (self.bottom - self.top) / self.top_value

    def svg(self, name, peak):
        """The axis line, a labelled tick and a faint grid line per step, and the panel's
        name and peak on the left."""
        parts = [f'<line class="yaxis" x1="{LABEL_W}" y1="{self.top}" x2="{LABEL_W}" '
                 f'y2="{self.bottom}"/>']
        for n in range(0, self.top_value + 1, self.step):
            y = self.y(n)
            parts.append(f'<line class="ygrid" x1="{LABEL_W}" y1="{y:.1f}" '
                         f'x2="{LABEL_W + PLOT_W}" y2="{y:.1f}"/>'
                         f'<line class="yaxis" x1="{LABEL_W - 4}" y1="{y:.1f}" x2="{LABEL_W}" '
                         f'y2="{y:.1f}"/><text class="ytick" x="{LABEL_W - 6}" '
                         f'y="{y + 3.5:.1f}">{n}</text>')
        middle = (self.top + self.bottom) / 2
        parts.append(f'<text class="panel" x="{LABEL_W - 48}" y="{middle - 2:.1f}">{name}'
                     f'</text><text class="slot" x="{LABEL_W - 48}" y="{middle + 11:.1f}">'
                     f'peak {peak}</text>')
        return "".join(parts)


def _points(series, end_time, scale, axis):
    """The C{points} of a step line through C{series} (C{(time, count)} pairs)."""
    pts, last = [], series[0][1]
    for t, n in series + [(end_time, series[-1][1])]:
        x = LABEL_W + t * scale
        pts.append(f"{x:.1f},{axis.y(last):.1f} {x:.1f},{axis.y(n):.1f}")
        last = n
    return " ".join(pts)


def _data(series):
    return " ".join(f"{t:.3f}:{n}" for t, n in series)


def _references(axis, limit, limits, pid):
    """The lines at C{limit} (C{CONCURRENT_REQUESTS}) and at each slot parallelism up to
    the axis' top, labelled on the right, the labels kept from overlapping."""
    lines = []
    if limit:
        lines.append((limit, "limit", f"CONCURRENT_REQUESTS {limit}",
                      "the engine's most requests in flight", f' id="{pid}max-line"'))
    by_parallelism = {}
    for slot in sorted(limits, key=str):
        parallelism = limits[slot][0]
        if parallelism is not None and parallelism <= axis.top_value:
            by_parallelism.setdefault(parallelism, []).append(str(slot))
    for parallelism, slots in sorted(by_parallelism.items()):
        who = slots[0] if len(slots) == 1 else f"{len(slots)} slots"
        if len(who) > 18:
            who = who[:17] + "\u2026"
        lines.append((parallelism, "parallelism", f"per slot {parallelism} ({who})",
                      "the most downloads at once in: " + ", ".join(slots), ""))
    parts, label_y = [], float("-inf")
    for value, css, label, tip, id_attr in sorted(lines, reverse=True):
        y = axis.y(value)
        label_y = max(y + 3.5, label_y + 11)  # from the top down, 11 apart at least
        parts.append(f'<line{id_attr} class="{css}" x1="{LABEL_W}" y1="{y:.1f}" '
                     f'x2="{LABEL_W + PLOT_W}" y2="{y:.1f}"><title>{escape(tip)}</title>'
                     f'</line><text class="ref {css}" x="{LABEL_W + PLOT_W + 6}" '
                     f'y="{label_y:.1f}">{escape(label)}</text>')
    return "".join(parts)


def series_svg(in_flight, queued, duration, end_time, limit=None, turns=(), limits=None,
               pid=""):
    """
    The in-flight and queued counts over time, each as a step line in its own panel and
    scale, with a tick per turn of the loop below, on an axis of C{duration} seconds; the
    lines stop at C{end_time}, when this spider closed.

    @param limit: C{CONCURRENT_REQUESTS}, drawn as a line in the in-flight panel.
    @param limits: slot to C{(parallelism, delay)}: a line per parallelism.
    @param pid: the prefix of every id in the chart (unique per spider on the page).
    """
    scale = PLOT_W / max(duration, 1e-6)
    most_in_flight, most_queued = max(n for _, n in in_flight), max(n for _, n in queued)
    flight = Scale(FLIGHT_TOP, FLIGHT_H, max(most_in_flight, limit or 0))
    queue = Scale(QUEUED_TOP, QUEUED_H, most_queued)
    ticks = "".join(
        f'<line class="turn" x1="{LABEL_W + t * scale:.1f}" y1="{TURNS_Y}" '
        f'x2="{LABEL_W + t * scale:.1f}" y2="{TURNS_Y + 10}"><title>turn at {t:.4f} s: '
        f'{escape(causes or "-")}</title></line>' for t, causes in turns)
    return (f'<svg id="{pid}series" class="series" xmlns="http://www.w3.org/2000/svg" '
            f'width="100%" viewBox="0 0 {WIDTH} {HEIGHT}">'
            f'{time_axis(duration, scale, 14, QUEUED_TOP + QUEUED_H)}'
            f'{closed_after(end_time, duration, scale, FLIGHT_TOP, TURNS_Y + 10)}'
            f'{flight.svg("in flight", most_in_flight)}{queue.svg("queued", most_queued)}'
            f'{_references(flight, limit, limits or {}, pid)}'
            f'<text class="slot" x="{LABEL_W - 6}" y="{TURNS_Y + 9}">turns of the loop</text>'
            f'<g id="{pid}turns" class="turns">{ticks}</g>'
            f'<polyline id="{pid}queued" class="queued" '
            f'points="{_points(queued, end_time, scale, queue)}" data-series="{_data(queued)}">'
            f'<title>queued: sampled at each turn of the loop</title></polyline>'
            f'<polyline id="{pid}in-flight" class="in-flight" '
            f'points="{_points(in_flight, end_time, scale, flight)}" '
            f'data-series="{_data(in_flight)}"><title>in flight: downloading or scraping'
            f'</title></polyline></svg>')
