"""Which environment variables may hold an LLM key (the rule is surveys/key_variables.py, beside the System it
guards), and which hosts may receive one.

A System or a judge model names the variable that holds its key (``api_key_env``). Left open, that would let
anyone who may edit one read any secret of the deployment: name ``SECRET_KEY`` and a ``base_url`` of one's own,
and the next call carries it in its Authorization header. So:

- the variable must be allowed by ``settings.LLM_KEY_VARIABLES``: names, or patterns such as ``*_API_KEY``
  (default: the providers' usual names and ``*_API_KEY``); a name that is one of the project's own settings
  (``SECRET_KEY``, ``PROLIFIC_API_TOKEN``, ``DATABASES`` …) is refused whatever the list says;
- every call, with a key or without one, goes only to a provider's own host (the wire formats' default hosts)
  or to a host in ``settings.LLM_ALLOWED_HOSTS`` (an entry starting with a dot allows the subdomains too): a
  keyless call carries no key but its reply is shown to researchers, so it must not reach what the server alone
  can reach (a cloud's metadata service on 169.254.169.254, the database, Redis);
- the addresses a host resolves to are checked too, when the connection is made (``address_allowed``, from
  client.py's network backend): no loopback, private, link-local or otherwise non-public address unless the
  deployment lists that address (``127.0.0.1``), a network (``10.1.2.0/24``) or that exact host name in
  LLM_ALLOWED_HOSTS. Tests list 127.0.0.1, where the fake providers run; a self-hosted server on the lab's
  network is listed by name or address. The environment's proxy variables (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY)
  are not used for these calls: httpx reads them only for a client without a transport of its own, and
  client.build_client gives it CheckedAddresses', so no proxy ever connects in its place (a test pins this).

The variable is checked in the study file and the System and judge model forms, the host in the judge model
form; both when a run starts, and again at every call.
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

from django.conf import settings

from surveys.key_variables import key_variable_problem


class NotAllowed(ValueError):
    """A key variable or a key host the deployment does not allow; the message names the setting."""


def check_key_variable(name: str, *, who: str = "") -> None:
    problem = key_variable_problem(name)
    if problem:
        raise NotAllowed(f"api_key_env {problem}" + (f" ({who})" if who else ""))


def provider_hosts() -> set[str]:
    from .providers import PROVIDERS  # the wire formats know their own hosts

    hosts = (urlsplit(fmt.default_base_url).hostname for fmt in PROVIDERS.values())
    return {host for host in hosts if host}


def _listed() -> list[str]:
    return [str(entry).strip().lower() for entry in getattr(settings, "LLM_ALLOWED_HOSTS", []) if str(entry).strip()]


def key_host_allowed(base_url: str) -> bool:
    """The URL's host is a provider's own or one LLM_ALLOWED_HOSTS lists (by name, ".domain", or address)."""
    host = (urlsplit(base_url).hostname or "").lower()
    if not host:
        return False
    listed = _listed()
    if host in provider_hosts() or host in listed:
        return True
    if any(entry.startswith(".") and (host.endswith(entry) or host == entry[1:]) for entry in listed):
        return True
    return _is_address(host) and _address_listed(ipaddress.ip_address(host), listed)


def address_allowed(address: str, host: str) -> bool:
    """May a connection for `host` go to `address`? A public address, or one the deployment listed (the address,
    its network, or the exact host name: never a ".domain" entry, whose subdomains' DNS may be anyone's)."""
    ip = ipaddress.ip_address(address.split("%")[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
    if ip.is_global and not ip.is_multicast:
        return True
    listed = _listed()
    return host.lower() in listed or _address_listed(ip, listed)


def check_destination(base_url: str, *, resolve: bool = True) -> None:
    """NotAllowed unless a call may go to `base_url`: its host allowed, and (`resolve`) each address it resolves
    to now allowed. A name that does not resolve is left to the call (it cannot connect); the call checks the
    address it connects to again, so a name that resolves elsewhere later is still refused."""
    host = (urlsplit(base_url).hostname or "").lower()
    if not key_host_allowed(base_url):
        raise NotAllowed(
            f"No call goes to {host or base_url!r}: it is not a provider's own host, and the deployment's setting "
            "LLM_ALLOWED_HOSTS does not list it."
        )
    if not resolve:
        return
    try:
        addresses = {str(info[4][0]) for info in socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)}
    except (OSError, UnicodeError):
        return
    refused = sorted(address for address in addresses if not address_allowed(address, host))
    if refused:
        raise NotAllowed(
            f"No call goes to {host}: it resolves to {', '.join(refused)}, a loopback, private or link-local "
            "address the deployment's setting LLM_ALLOWED_HOSTS does not list."
        )


def check_key_host(base_url: str, *, variable: str) -> None:
    if not key_host_allowed(base_url):
        host = urlsplit(base_url).hostname or base_url
        raise NotAllowed(
            f"The key in {variable} is not sent to {host}: it is not a provider's own host, and the "
            f"deployment's setting LLM_ALLOWED_HOSTS does not list it."
        )


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _address_listed(ip, listed: list[str]) -> bool:
    for entry in listed:
        try:
            if ip in ipaddress.ip_network(entry, strict=False):
                return True
        except ValueError:
            continue  # a host name
    return False
