"""Step 4: a pipeline that pushes back: a request stays in flight until its item is stored."""
import heapq
import sys
from urllib.parse import urljoin, urlsplit

import treq
from parsel import Selector
from twisted.internet import reactor
from twisted.internet.defer import Deferred
from twisted.internet.task import deferLater
from twisted.web.resource import Resource
from twisted.web.server import Site

from tinyscrapy.demo.site import build_site

TRACE = "--trace" in sys.argv
T0 = 0.0  # the reactor time the crawl started at


def trace(event, url, engine):
    if TRACE:
        print(f"{reactor.seconds() - T0:7.3f} {event:9} in flight {len(engine.in_flight)}"
              f"  {url}", file=sys.stderr)


class Slot:
    """One host: its queue, how many may run at once, and the delay between two sends."""

    def __init__(self, parallelism, delay):
        self.queue, self.active, self.peak = [], 0, 0
        self.parallelism, self.delay, self.next_send, self.sends = parallelism, delay, 0.0, []

    def can_start(self, now):
        return self.queue and self.active < self.parallelism and now >= self.next_send

    def take(self, now):
        self.active += 1
        self.peak = max(self.peak, self.active)
        self.next_send = now + self.delay       # the next one waits, holding nothing
        self.sends.append(now)
        return self.queue.pop(0)


class Pipeline:
    """Stores an item in 2 ms (a database write, say): process_item returns a Deferred."""

    def __init__(self):
        self.stored, self.waiting, self.peak = [], 0, 0
        self._closed = None

    def process_item(self, item):
        self.waiting += 1
        self.peak = max(self.peak, self.waiting)
        return deferLater(reactor, 0.002, self._store, item)

    def _store(self, item):
        self.waiting -= 1
        self.stored.append(item)
        if not self.waiting and self._closed is not None and not self._closed.called:
            self._closed.callback(None)

    def close(self, _):
        """@return: a Deferred that fires once no item waits in the pipeline."""
        self._closed = Deferred()
        if not self.waiting:
            self._closed.callback(None)
        return self._closed


class Engine:
    def __init__(self, start_urls, max_in_flight, parallelism=2, delay=0.005):
        self.slots, self.seen, self.in_flight = {}, set(), set()
        self.max, self.peak, self.pages, self.items = max_in_flight, 0, 0, []
        self.parallelism, self.delay = parallelism, delay
        self.closed, self._wakeup, self._ready_call = Deferred(), None, None
        self.later, self.retried, self.started_while_a_retry_waits = [], set(), 0
        self.pipeline = Pipeline()
        for url in start_urls:
            self._enqueue(url)

    def start(self):
        self.wake()
        return self.closed

    def wake(self):
        """One pending turn at most, however many things ask for one."""
        if self._wakeup is None or not self._wakeup.active():
            self._wakeup = reactor.callLater(0, self._next_request)

    def _next_request(self):
        now = reactor.seconds()
        while self.later and self.later[0][0] <= now:    # a retry is due: back in its queue
            self._slot_for(self.later[0][1]).queue.insert(0, heapq.heappop(self.later)[1])
        while len(self.in_flight) < self.max:
            slot = next((s for s in self.slots.values() if s.can_start(now)), None)
            if slot is None:
                break
            self._download(slot.take(now), slot)
        if len(self.in_flight) < self.max:
            self._wake_when_a_slot_is_ready(now)
        if not any(s.queue for s in self.slots.values()) and not self.in_flight \
                and not self.later and not self.closed.called:
            self.closed.callback(self.pages)

    def _wake_when_a_slot_is_ready(self, now):
        """A host in its delay: one timer for the earliest, never one per turn."""
        times = [s.next_send for s in self.slots.values()
                 if s.queue and s.active < s.parallelism and s.next_send > now]
        times += [not_before for not_before, _ in self.later[:1]]
        call = self._ready_call
        if times and not (call and call.active() and call.getTime() <= min(times)):
            if call and call.active():
                call.cancel()
            self._ready_call = reactor.callLater(min(times) - now, self.wake)

    def _download(self, url, slot):
        self.in_flight.add(url)
        self.peak = max(self.peak, len(self.in_flight))
        trace("start", url, self)
        self.started_while_a_retry_waits += bool(self.later)
        d = treq.get(url)
        d.addCallback(self._cb_response, url)
        d.addErrback(self._eb_failed, url)
        d.addBoth(self._cb_done, url, slot)

    def _cb_response(self, response, url):
        if response.code == 503 and url not in self.retried:   # once, in 0.05 s
            self.retried.add(url)
            heapq.heappush(self.later, (reactor.seconds() + 0.05, url))
            trace("retry", url, self)
            return treq.content(response).addCallback(_discard)  # read it: free the socket
        d = treq.content(response)
        d.addCallback(self._cb_parse, url)
        return d

    def _cb_parse(self, body, url):
        self.pages += 1
        page = Selector(text=body.decode("utf-8"))
        links = page.css("article.product_pod h3 a::attr(href), li.next a::attr(href)")
        for href in links.getall():
            self._enqueue(urljoin(url, href))
        if page.css("article.product_page"):
            item = {"title": page.css("h1::text").get(), "url": url}
            self.items.append(item)
            return self.pipeline.process_item(item)   # the chain waits: url stays in flight
        return None

    def _enqueue(self, url):
        if url not in self.seen:
            self.seen.add(url)
            self._slot_for(url).queue.append(url)

    def _slot_for(self, url):
        host = urlsplit(url).hostname
        if host not in self.slots:
            self.slots[host] = Slot(self.parallelism, self.delay)
        return self.slots[host]

    def _eb_failed(self, failure, url):
        print("failed:", url, failure.getErrorMessage())

    def _cb_done(self, _, url, slot):
        slot.active -= 1
        self.in_flight.discard(url)
        trace("done", url, self)
        self.wake()


def _discard(_):
    return None


class Flaky(Resource):
    """The demo site, where every tenth book answers 503 the first time it is asked for."""

    isLeaf = True

    def __init__(self):
        super().__init__()
        self.site, self.refused = build_site(), set()

    def render_GET(self, request):
        if request.path.endswith(b"0.html") and request.path not in self.refused:
            self.refused.add(request.path)
            request.setResponseCode(503)
            return b"busy, try again"
        return self.site.render_GET(request)


def report(_, engine):
    print(f"pages {engine.pages}, items {len(engine.items)}, "
          f"never more than {engine.max} in flight: {engine.peak <= engine.max}")
    print(f"retried {len(engine.retried)}; downloads started while a retry waited: "
          f"{engine.started_while_a_retry_waits > 0}")
    print(f"stored {len(engine.pipeline.stored)}; items waiting in the pipeline never above "
          f"{engine.max}: {engine.pipeline.peak <= engine.max}")
    for host, slot in sorted(engine.slots.items()):
        gaps = [b - a for a, b in zip(slot.sends, slot.sends[1:], strict=False)]
        print(f"{host}: {len(slot.sends)} sent, never more than {slot.parallelism} at once: "
              f"{slot.peak <= slot.parallelism}, at least {slot.delay} s apart: "
              f"{min(gaps) >= slot.delay - 1e-6}")
    reactor.stop()


def main():
    global T0
    hosts = ("127.0.0.1", "127.0.0.2")     # two loopback addresses: two hosts, two slots
    ports = [reactor.listenTCP(0, Site(Flaky()), interface=host) for host in hosts]
    engine = Engine([f"http://{host}:{port.getHost().port}/books/"
                     for host, port in zip(hosts, ports, strict=True)], max_in_flight=4)
    T0 = reactor.seconds()
    d = engine.start()
    d.addCallback(engine.pipeline.close)    # the last items stored before the reactor stops
    d.addCallback(report, engine)
    reactor.run()


if __name__ == "__main__":
    main()
