"""Sign-in throttling with django-axes: the backend that counts and refuses, ahead of Django's ModelBackend.

Axes locks an account from one address (AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]): wrong passwords
from elsewhere never lock the rightful user out of their own address. This backend adds the burst limit axes'
single failure limit cannot express: LOGIN_ADDRESS_FAILURE_LIMIT wrong passwords from one address, over any
accounts, within the cool-off refuse every sign-in from that address until it passes.
"""

from axes.backends import AxesStandaloneBackend
from axes.exceptions import AxesBackendPermissionDenied
from axes.helpers import get_lockout_message
from axes.models import AccessAttempt
from django.conf import settings
from django.db.models import Sum
from django.utils import timezone

from .client_address import client_address


class LoginThrottleBackend(AxesStandaloneBackend):
    """Axes' check on every sign-in that arrives over HTTP, and the per-address burst limit.

    Every web sign-in passes its request (the admin's login form, DRF's authentication classes), and
    axes counts and locks by it. Code that signs in without a request (Django's test client
    `client.login()`, a shell script) reaches no form an attacker can post to, so it passes through to
    the next backend instead of failing with axes' "request required" error.
    """

    def authenticate(self, request, username=None, password=None, **kwargs):
        if request is None:
            return None
        if address_failures(client_address(request)) >= settings.LOGIN_ADDRESS_FAILURE_LIMIT:
            kwargs.get("response_context", {})["error"] = get_lockout_message()
            request.axes_locked_out = True  # AxesMiddleware answers with the lockout page
            raise AxesBackendPermissionDenied("Too many failed sign-ins from this address.")
        return super().authenticate(request, username=username, password=password, **kwargs)


def address_failures(address: str) -> int:
    """Wrong passwords from `address` over every account, within the cool-off."""
    since = timezone.now() - settings.AXES_COOLOFF_TIME
    attempts = AccessAttempt.objects.filter(ip_address=address, attempt_time__gte=since)
    return attempts.aggregate(n=Sum("failures_since_start"))["n"] or 0
