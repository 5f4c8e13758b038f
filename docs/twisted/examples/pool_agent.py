"""treq's HTTPClient over an Agent on a persistent pool: two requests, one TCP connection,
and the Accept-Encoding that treq adds to every request by itself."""
import treq
from treq.client import HTTPClient
from twisted.internet import reactor
from twisted.internet.defer import inlineCallbacks
from twisted.internet.endpoints import TCP4ServerEndpoint
from twisted.web.client import Agent, HTTPConnectionPool
from twisted.web.resource import Resource
from twisted.web.server import Site


class Echo(Resource):
    isLeaf = True

    def render_GET(self, request):
        return b"Accept-Encoding: " + (request.getHeader("accept-encoding") or "-").encode()


@inlineCallbacks
def main():
    site = Site(Echo())
    port = yield TCP4ServerEndpoint(reactor, 0, interface="127.0.0.1").listen(site)
    pool = HTTPConnectionPool(reactor)         # persistent=True: keep connections open
    pool.retryAutomatically = False            # a documented switch of the pool instance
    client = HTTPClient(Agent(reactor, pool=pool))  # treq's front door on any IAgent
    url = "http://127.0.0.1:%d/" % port.getHost().port
    for n in (1, 2):
        response = yield client.get(url, unbuffered=True, allow_redirects=False)
        body = yield treq.content(response)    # the body, read to its end
        print(n, response.code, body.decode(), "| idle connections:",
              sum(len(c) for c in pool._connections.values()))
    yield pool.closeCachedConnections()
    yield port.stopListening()
    reactor.stop()


reactor.callWhenRunning(main)
reactor.run()
