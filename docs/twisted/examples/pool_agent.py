"""An Agent on a persistent HTTPConnectionPool: two requests, one TCP connection."""
import treq
from twisted.internet import reactor
from twisted.internet.defer import inlineCallbacks
from twisted.internet.endpoints import TCP4ServerEndpoint
from twisted.web.client import Agent, HTTPConnectionPool
from twisted.web.resource import Resource
from twisted.web.server import Site


class Hello(Resource):
    isLeaf = True

    def render_GET(self, request):
        return b"hello from port %d" % request.getHost().port


@inlineCallbacks
def main():
    site = Site(Hello())
    port = yield TCP4ServerEndpoint(reactor, 0, interface="127.0.0.1").listen(site)
    pool = HTTPConnectionPool(reactor)        # persistent=True: keep connections open
    pool.retryAutomatically = False           # never replay a request on its own
    agent = Agent(reactor, pool=pool)         # an endpoint per (scheme, host, port)
    url = b"http://127.0.0.1:%d/" % port.getHost().port
    for n in (1, 2):
        response = yield agent.request(b"GET", url)
        body = yield treq.content(response)      # the body, read to its end
        print(n, response.code, body.startswith(b"hello"), "idle connections:",
              sum(len(c) for c in pool._connections.values()))
    yield pool.closeCachedConnections()
    yield port.stopListening()
    reactor.stop()


reactor.callWhenRunning(main)
reactor.run()
