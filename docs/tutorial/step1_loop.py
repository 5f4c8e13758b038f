"""Step 1: the faithful loop. A frontier, at most MAX requests in flight, callLater(0)."""
import sys
from urllib.parse import urljoin

import treq
from parsel import Selector
from twisted.internet import reactor
from twisted.internet.defer import Deferred

from tinyscrapy.demo import listen

TRACE = "--trace" in sys.argv
T0 = 0.0  # the reactor time the crawl started at


def trace(event, url, engine):
    if TRACE:
        print(f"{reactor.seconds() - T0:7.3f} {event:9} in flight {len(engine.in_flight)}"
              f"  {url}", file=sys.stderr)


class Engine:
    def __init__(self, start_url, max_in_flight):
        self.frontier, self.seen, self.in_flight = [start_url], {start_url}, set()
        self.max, self.peak, self.pages, self.items = max_in_flight, 0, 0, []
        self.closed = Deferred()

    def start(self):
        reactor.callLater(0, self._next_request)
        return self.closed

    def _next_request(self):
        while self.frontier and len(self.in_flight) < self.max:
            self._download(self.frontier.pop(0))
        if not self.frontier and not self.in_flight and not self.closed.called:
            self.closed.callback(self.pages)    # several turns may find it over: once

    def _download(self, url):
        self.in_flight.add(url)
        self.peak = max(self.peak, len(self.in_flight))
        trace("start", url, self)
        d = treq.get(url)
        d.addCallback(treq.content)
        d.addCallback(self._cb_parse, url)
        d.addErrback(self._eb_failed, url)
        d.addBoth(self._cb_done, url)

    def _cb_parse(self, body, url):
        self.pages += 1
        page = Selector(text=body.decode("utf-8"))
        if page.css("article.product_page"):
            self.items.append({"title": page.css("h1::text").get(), "url": url})
        links = page.css("article.product_pod h3 a::attr(href), li.next a::attr(href)")
        for href in links.getall():
            self._enqueue(urljoin(url, href))

    def _enqueue(self, url):
        if url not in self.seen:
            self.seen.add(url)
            self.frontier.append(url)

    def _eb_failed(self, failure, url):
        print("failed:", url, failure.getErrorMessage())

    def _cb_done(self, _, url):
        self.in_flight.discard(url)
        trace("done", url, self)
        reactor.callLater(0, self._next_request)    # the faithful wake-up


def report(pages, engine):
    print(f"pages {pages}, items {len(engine.items)}, peak in flight {engine.peak}")
    reactor.stop()


def main():
    global T0
    port = listen(0, reactor=reactor)
    engine = Engine(f"http://127.0.0.1:{port.getHost().port}/books/", max_in_flight=4)
    T0 = reactor.seconds()
    engine.start().addCallback(report, engine)
    reactor.run()


if __name__ == "__main__":
    main()
