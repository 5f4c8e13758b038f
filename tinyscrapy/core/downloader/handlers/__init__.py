"""Download handlers: how a request is fetched, by URL scheme."""
