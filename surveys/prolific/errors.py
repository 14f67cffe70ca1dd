"""What the Prolific webhook refuses, as domain errors; the webhook view (surveys/api.py) chooses the HTTP status.

Each message says why in words Prolific's delivery log can show.
"""


class WebhookNotConfigured(Exception):
    """PROLIFIC_WEBHOOK_SECRET is not set (the view answers 503)."""


class InvalidWebhook(Exception):
    """The request does not carry a valid, fresh Prolific signature (401)."""


class WebhookTooLarge(Exception):
    """The body is larger than any Prolific event (413); refused before it is read."""


class MalformedWebhook(Exception):
    """A signed request that is not a Prolific event: not JSON, too deeply nested, a field missing,
    of the wrong type or too long, or a header that is not what Prolific sends (400)."""


class WebhookRefused(Exception):
    """A signed event we will not apply, e.g. it names another participant than the one who entered (400)."""


class UnknownSubmissionStatus(WebhookRefused):
    """A signed submission.status.change with a status Prolific does not have (400); nothing is stored."""
