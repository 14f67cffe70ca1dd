"""What the Prolific webhook refuses, as domain errors; the webhook view (surveys/api.py) chooses the HTTP status.

Each message says why in words Prolific's delivery log can show.
"""


class WebhookNotConfigured(Exception):
    """PROLIFIC_WEBHOOK_SECRET is not set (the view answers 503)."""


class InvalidWebhook(Exception):
    """The request does not carry a valid, fresh Prolific signature (401)."""


class WebhookRefused(Exception):
    """A signed event we will not apply, e.g. it names another participant than the one who entered (400)."""
