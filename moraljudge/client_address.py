"""The client's address, one rule for every per-address limit (sign-in throttling, survey entry)."""

from django.conf import settings


def client_address(request) -> str:
    """The connection's address; behind `TRUSTED_PROXIES` proxies, the address they forwarded.

    `CLIENT_IP_HEADER` names the header the proxies set (X-Real-IP, X-Forwarded-For). Each trusted
    proxy appends the address it was reached from, so the client is the entry `TRUSTED_PROXIES` from
    the right; anything further left was written by the client itself and is never believed. Without
    a header or with no proxy trusted, the header is ignored: a client could otherwise invent it.
    """
    header, proxies = settings.CLIENT_IP_HEADER, settings.TRUSTED_PROXIES
    if header and proxies > 0:
        forwarded = request.META.get("HTTP_" + header.upper().replace("-", "_"), "")
        addresses = [part.strip() for part in forwarded.split(",") if part.strip()]
        if len(addresses) >= proxies:
            return addresses[-proxies]
    return request.META.get("REMOTE_ADDR", "")
