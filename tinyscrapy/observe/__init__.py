"""Observability: the stats collector, the request ledger, progress and the trace."""
