"""The SSRF guard: a URL taken from an answer reaches public addresses only.

Only http(s); never loopback, private, link-local, multicast or reserved addresses, including
those that IPv6 prefixes carry inside them and IPv4 written in forms other than the dotted quad.
The host is resolved and every address checked before connecting; :class:`Outbound` then
connects to the address that was checked (pinned), so a second DNS answer cannot swap it, and
checks again after every redirect.

A per-client option of :class:`~citeverify_core.lookups.http.Outbound`: the client of URLs in
answers has one; the services' clients (configured base URLs, perhaps a mirror on the local
network) and the client of our own service (perhaps on loopback) have none.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from citeverify_core.lookups.failures import LookupFailure, clean_text

if TYPE_CHECKING:
    import httpx

__all__ = ["AddressGuard", "forbidden"]

_IPV4_PART = re.compile(r"0[xX][0-9a-fA-F]*|[0-9]+")
Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class AddressGuard:
    """Which addresses a client may connect to: public ones, and those allowed by name or net.

    Args:
        allow: Host names and networks (``127.0.0.1``, ``10.0.0.0/8``) allowed although not
            public (``extensions.lookups.url_allow_hosts``: tests, an intranet).
    """

    def __init__(self, allow: Iterable[str] = ()) -> None:
        self.names: set[str] = set()
        self.nets: list[Network] = []
        for entry in allow:
            try:
                self.nets.append(ipaddress.ip_network(entry, strict=False))
            except ValueError:
                self.names.add(entry.lower())

    def parse(self, text: str, *, base: httpx.URL | None = None, what: str = "URL") -> httpx.URL:
        """``text`` (resolved against ``base``) as a URL we can fetch, else a failure saying why.

        httpx raises ``InvalidURL`` (a bad port, ``[::1``, ``0177.0.0.1``) and ``UnicodeError``
        (a host that fails IDNA); urllib-style joining raises ``ValueError``. Parsing is where an
        answer or a ``Location`` header first touches the network code, so the reason names it.

        Raises:
            LookupFailure: not a URL, not http(s), no host, a port out of range.
        """
        import httpx  # noqa: PLC0415 - httpx costs ~280 ms at import; only a lookup needs it

        shown = clean_text(repr(text), 200)
        try:
            url = httpx.URL(text) if base is None else base.join(text)
            port = url.port
            raw_host = url.raw_host
        except (httpx.InvalidURL, ValueError) as exc:
            msg = f"invalid {what} {shown}: {exc}"
            raise LookupFailure(msg) from None
        if url.scheme not in {"http", "https"}:
            msg = f"blocked: scheme {url.scheme!r} is not http(s)"
            raise LookupFailure(msg)
        if not raw_host:
            msg = f"invalid {what} {shown}: no host"
            raise LookupFailure(msg)
        if port is not None and not 0 < port < 65536:
            msg = f"invalid {what} {shown}: port {port} out of range"
            raise LookupFailure(msg)
        return url

    async def vet(self, url: httpx.URL) -> str:
        """Resolve the host and return an address the client may connect to.

        Raises:
            LookupFailure: the host cannot be resolved, or resolves to an address not allowed.
        """
        import asyncio  # noqa: PLC0415 - loaded with the first lookup, not at import
        import socket  # noqa: PLC0415 - start-up time, as asyncio

        host = url.raw_host.decode("ascii")  # IDNA-encoded: what DNS sees
        port = url.port or (443 if url.scheme == "https" else 80)
        if host.lower() in self.names:
            return host
        if legacy_ipv4(host):
            # 0177.0.0.1, 0x7f.1, 127.1, 2130706433: inet_aton reads them as 127.0.0.1, browsers
            # too, but proxies and libraries differ; no reference cites a page that way.
            msg = f"blocked: {host} is an IPv4 address in a non-standard form"
            raise LookupFailure(msg)
        addresses: list[Address]
        try:
            addresses = [ipaddress.ip_address(host)]
        except ValueError:
            loop = asyncio.get_running_loop()
            try:
                infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            except (socket.gaierror, UnicodeError) as exc:  # UnicodeError: a label over 63
                msg = f"cannot resolve host {host!r} ({getattr(exc, 'strerror', None) or exc})"
                raise LookupFailure(msg) from None
            addresses = [ipaddress.ip_address(info[4][0]) for info in infos]
        if not addresses:
            msg = f"cannot resolve host {host!r} (no address)"
            raise LookupFailure(msg)
        for address in addresses:
            if any(address in net for net in self.nets):
                continue
            problem = forbidden(address)
            if problem:
                msg = f"blocked: {host} resolves to {address}, {problem}"
                raise LookupFailure(msg)
        return str(addresses[0])


def legacy_ipv4(host: str) -> bool:
    """Whether a host is an IPv4 address written other than as four decimal numbers.

    The WHATWG URL standard reads a host whose last label is a number as IPv4 (octal ``0177``,
    hex ``0x7f``, fewer than four parts, one 32-bit number, a trailing dot); ``inet_aton`` does
    too. Only the dotted-quad form is judged by address; the others are refused outright.
    """
    if ":" in host:  # IPv6, even with a dotted tail (::ffff:1.2.3.4)
        return False
    labels = host.split(".")
    if labels and labels[-1] == "":
        labels.pop()  # "127.0.0.1." resolves like "127.0.0.1"
    if not labels or not _IPV4_PART.fullmatch(labels[-1]):
        return False
    try:
        ipaddress.IPv4Address(host)
    except ValueError:
        return True
    return False


# Prefixes whose IPv6 addresses carry an IPv4 address a gateway may forward to:
# 6to4 (2002::/16, RFC 3056), Teredo (2001::/32, RFC 4380; the client is XOR-obfuscated),
# NAT64 (64:ff9b::/96, RFC 6052; 64:ff9b:1::/48 is local use), IPv4-compatible (::/96) and
# IPv4-translated (::ffff:0:0/96, RFC 2765).
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_COMPATIBLE = ipaddress.IPv6Network("::/96")
_TRANSLATED = ipaddress.IPv6Network("::ffff:0:0:0/96")


def _embedded_ipv4(address: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    embedded: list[ipaddress.IPv4Address] = []
    if address.sixtofour is not None:
        embedded.append(address.sixtofour)
    if address.teredo is not None:
        embedded.extend(address.teredo)
    compatible = address in _COMPATIBLE and int(address) > 1  # :: and ::1 are judged as such
    if compatible or address in _NAT64 or address in _TRANSLATED:
        embedded.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    return embedded


def forbidden(address: Address) -> str | None:
    """Why a guarded client may not connect to ``address``, or None when it may."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:  # the connection goes to the IPv4 address
            return forbidden(address.ipv4_mapped)
        for inner in _embedded_ipv4(address):
            problem = forbidden(inner)
            if problem:
                return f"which embeds {inner}, {problem}"
    for flag in ("loopback", "private", "link_local", "multicast", "reserved", "unspecified"):
        if getattr(address, f"is_{flag}"):
            return f"a {flag.replace('_', '-')} address"
    if not address.is_global:
        return "not a public address"
    return None
