"""Outbound lookups: the one HTTP core and the clients of the services built on it.

The core holds the SSRF guard, bounded reads, the JSON guard, retries, rate limits and the cache.
"""
