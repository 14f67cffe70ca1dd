"""Sign-in throttling with django-axes: the backend that counts and refuses, ahead of Django's ModelBackend."""

from axes.backends import AxesStandaloneBackend


class LoginThrottleBackend(AxesStandaloneBackend):
    """Axes' check on every sign-in that arrives over HTTP.

    Every web sign-in passes its request (the admin's login form, DRF's authentication classes), and
    axes counts and locks by it. Code that signs in without a request (Django's test client
    `client.login()`, a shell script) reaches no form an attacker can post to, so it passes through to
    the next backend instead of failing with axes' "request required" error.
    """

    def authenticate(self, request, username=None, password=None, **kwargs):
        if request is None:
            return None
        return super().authenticate(request, username=username, password=password, **kwargs)
