"""
C{rediss://}: a shared crawl over TLS, the server's certificate verified (by default
against the system's CAs, or C{SCHEDULER_REDIS_TLS_CA}). The test's redis-server serves
TLS with a certificate made at test time (L{tests.servers.make_certificate}).
"""

import json
import os

from twisted.internet import defer
from twisted.trial import unittest

from .helpers import serve
from .redisserver import NO_REDIS, RedisServer
from .servers import make_certificate
from .test_redis_command import add_site, crawl


class RedisTLSTests(unittest.TestCase):
    """A redis-server that speaks TLS only."""

    skip = NO_REDIS
    timeout = 60

    def setUp(self):
        folder = os.path.abspath(self.mktemp())
        os.makedirs(folder)
        key_pem, cert_pem = make_certificate("127.0.0.1")
        self.cert = os.path.join(folder, "redis.crt")
        key = os.path.join(folder, "redis.key")
        with open(self.cert, "wb") as f:
            f.write(cert_pem)
        with open(key, "wb") as f:
            f.write(key_pem)
        self.redis = RedisServer(tls=(self.cert, key)).start()
        self.addCleanup(self.redis.stop)
        self.server = serve(self)
        self.start_url = add_site(self.server, 10)

    @defer.inlineCallbacks
    def test_crawl_over_tls_with_a_ca(self):
        """rediss:// with SCHEDULER_REDIS_TLS_CA naming the server's CA: the crawl runs
        and finishes (exit 0); the keys were written over TLS."""
        feed = os.path.abspath(self.mktemp() + ".jsonl")
        code, _out, err = yield crawl(self.start_url, self.redis.url, "-L", "WARNING",
                                      "-O", feed, "-s", f"SCHEDULER_REDIS_TLS_CA={self.cert}")
        self.assertEqual(code, 0, err)
        with open(feed) as f:
            self.assertEqual(len([json.loads(line) for line in f]), 10)
        [marker] = self.redis.call("KEYS", "*")
        self.assertTrue(marker.endswith(b":epoch"))

    @defer.inlineCallbacks
    def test_unverified_certificate_refused(self):
        """rediss:// to a server whose certificate no trusted CA signed: one line, exit
        2, saying the certificate did not verify; nothing fetched."""
        code, _out, err = yield crawl(self.start_url, self.redis.url, "-L", "WARNING",
                                      "-s", "SCHEDULER_REDIS_TIMEOUT=5")
        self.assertEqual(code, 2, err)
        lines = err.strip().splitlines()
        self.assertEqual(len(lines), 1, err)
        self.assertIn(f"cannot connect to {self.redis.url}: TLS failed", lines[0])
        self.assertIn("certificate verify failed", lines[0])
        self.assertEqual(len(self.server.hits), 0)

    @defer.inlineCallbacks
    def test_unreadable_ca_is_a_usage_error(self):
        """A SCHEDULER_REDIS_TLS_CA that is not a PEM certificate: one line, exit 2."""
        bad = os.path.abspath(self.mktemp())
        with open(bad, "w") as f:
            f.write("not a certificate\n")
        code, _out, err = yield crawl(self.start_url, self.redis.url, "-L", "WARNING",
                                      "-s", f"SCHEDULER_REDIS_TLS_CA={bad}")
        self.assertEqual(code, 2, err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn("SCHEDULER_REDIS_TLS_CA", err)
