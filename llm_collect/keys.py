"""Which environment variables may hold an LLM key (the rule is surveys/key_variables.py, beside the System it
guards), and which hosts may receive one.

A System or a judge model names the variable that holds its key (``api_key_env``). Left open, that would let
anyone who may edit one read any secret of the deployment: name ``SECRET_KEY`` and a ``base_url`` of one's own,
and the next call carries it in its Authorization header. So:

- the variable must be allowed by ``settings.LLM_KEY_VARIABLES``: names, or patterns such as ``*_API_KEY``
  (default: the providers' usual names and ``*_API_KEY``); a name that is one of the project's own settings
  (``SECRET_KEY``, ``PROLIFIC_API_TOKEN``, ``DATABASES`` …) is refused whatever the list says;
- a key is sent only to a provider's own host (the wire formats' default hosts) or to a host in
  ``settings.LLM_ALLOWED_HOSTS`` (an entry starting with a dot allows the subdomains too). Empty means the
  providers' own hosts plus localhost and 127.0.0.1, where tests and self-hosted servers run. A call without
  a key (a self-hosted server with no ``api_key_env``) may go anywhere: it carries nothing.

The variable is checked in the study file and the System and judge model forms, the host in the judge model
form; both when a run starts, and again at every call.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from django.conf import settings

from surveys.key_variables import key_variable_problem

LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})


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


def key_host_allowed(base_url: str) -> bool:
    host = (urlsplit(base_url).hostname or "").lower()
    listed = [entry.lower() for entry in getattr(settings, "LLM_ALLOWED_HOSTS", [])]
    if host in provider_hosts() or host in listed or (not listed and host in LOCAL_HOSTS):
        return True
    return any(entry.startswith(".") and (host.endswith(entry) or host == entry[1:]) for entry in listed)


def check_key_host(base_url: str, *, variable: str) -> None:
    if not key_host_allowed(base_url):
        host = urlsplit(base_url).hostname or base_url
        raise NotAllowed(
            f"The key in {variable} is not sent to {host}: it is not a provider's own host, and the "
            f"deployment's setting LLM_ALLOWED_HOSTS does not list it."
        )
