"""DRF endpoints of the surveys app.

The Prolific webhook is the only endpoint here without a session or token: it is authenticated by
Prolific's HMAC signature instead, so it has no authentication classes (hence no CSRF check).
"""

from django.conf import settings
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from .prolific import (
    WEBHOOK_MAX_BYTES,
    InvalidWebhook,
    MalformedWebhook,
    WebhookNotConfigured,
    WebhookRefused,
    WebhookTooLarge,
    receive_webhook,
)


class ProlificWebhookIn(serializers.Serializer):
    """The event as documented for the schema; the body is read and checked by surveys/prolific/webhooks.py."""

    event_type = serializers.CharField(max_length=64)
    resource_id = serializers.CharField(max_length=64)
    status = serializers.CharField(max_length=24, required=False, allow_blank=True, default="")
    participant_id = serializers.CharField(max_length=64, required=False, allow_blank=True, default="")
    event_id = serializers.CharField(max_length=128, required=False, allow_blank=True)


class ProlificWebhookOut(serializers.Serializer):
    detail = serializers.CharField(
        help_text="duplicate, unknown-submission, ignored, stale, unchanged, recorded or released"
    )
    released = serializers.IntegerField(help_text="Places in cells given back.")


class ProlificWebhook(APIView):
    """POST /prolific/webhook/: Prolific's submission.status.change events, signed with our secret."""

    authentication_classes: list = []
    permission_classes = [AllowAny]

    @extend_schema(
        request=ProlificWebhookIn,
        parameters=[
            OpenApiParameter("X-Prolific-Request-Signature", str, OpenApiParameter.HEADER, required=True),
            OpenApiParameter("X-Prolific-Request-Timestamp", str, OpenApiParameter.HEADER, required=True),
            OpenApiParameter(
                "X-Timestamp",
                str,
                OpenApiParameter.HEADER,
                description="When the status changed: the order of events, never later than the signed timestamp. "
                "X-Event-ID is not read: the signed body's content identifies the event.",
            ),
        ],
        responses={
            200: ProlificWebhookOut,
            400: OpenApiResponse(
                description="Not JSON, not a valid event, an unknown status, or an event for another participant."
            ),
            401: OpenApiResponse(description="Missing, wrong or stale signature."),
            413: OpenApiResponse(description="Larger than any Prolific event."),
            503: OpenApiResponse(description="PROLIFIC_WEBHOOK_SECRET is not set."),
        },
        auth=[],
    )
    def post(self, request):
        try:
            if _content_length(request) > WEBHOOK_MAX_BYTES:
                raise WebhookTooLarge(f"The body is larger than {WEBHOOK_MAX_BYTES} bytes: not a Prolific event.")
            applied = receive_webhook(
                body=request.body, headers=request.headers, secret=settings.PROLIFIC_WEBHOOK_SECRET
            )
        except WebhookNotConfigured as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_503_SERVICE_UNAVAILABLE)
        except InvalidWebhook as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_401_UNAUTHORIZED)
        except WebhookTooLarge as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE)
        except (MalformedWebhook, WebhookRefused) as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response({"detail": applied.outcome, "released": applied.released}, status=status.HTTP_200_OK)


def _content_length(request) -> int:
    """The declared body size; a header that is not a number counts as too large (nothing is read)."""
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return WEBHOOK_MAX_BYTES + 1
