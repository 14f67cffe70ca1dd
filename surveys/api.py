"""DRF endpoints of the surveys app.

The Prolific webhook is the only endpoint here without a session or token: it is authenticated by
Prolific's HMAC signature instead, so it has no authentication classes (hence no CSRF check).
"""

import json

from django.conf import settings
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from .prolific import InvalidWebhook, WebhookNotConfigured, WebhookRefused, receive_webhook_event, verify_webhook


class ProlificWebhookIn(serializers.Serializer):
    event_type = serializers.CharField(max_length=64)
    resource_id = serializers.CharField(max_length=64)
    status = serializers.CharField(max_length=24, required=False, allow_blank=True, default="")
    participant_id = serializers.CharField(max_length=64, required=False, allow_blank=True, default="")
    event_id = serializers.CharField(max_length=128, required=False, allow_blank=True)

    def validate(self, data):
        if data["event_type"] == "submission.status.change" and not data["status"]:
            raise serializers.ValidationError({"status": "A submission status change needs a status."})
        return data


class ProlificWebhookOut(serializers.Serializer):
    detail = serializers.CharField(help_text="duplicate, unknown-submission, ignored, unchanged, recorded or released")
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
        ],
        responses={
            200: ProlificWebhookOut,
            400: OpenApiResponse(description="Not JSON, not a valid event, or an event for another participant."),
            401: OpenApiResponse(description="Missing, wrong or stale signature."),
            503: OpenApiResponse(description="PROLIFIC_WEBHOOK_SECRET is not set."),
        },
        auth=[],
    )
    def post(self, request):
        body = request.body
        try:
            verify_webhook(
                body=body,
                timestamp=request.headers.get("X-Prolific-Request-Timestamp", ""),
                signature=request.headers.get("X-Prolific-Request-Signature", ""),
                secret=settings.PROLIFIC_WEBHOOK_SECRET,
            )
        except WebhookNotConfigured as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_503_SERVICE_UNAVAILABLE)
        except InvalidWebhook as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_401_UNAUTHORIZED)
        try:
            payload = json.loads(body)
        except ValueError:
            return Response({"detail": "The body is not JSON."}, status=status.HTTP_400_BAD_REQUEST)
        if not isinstance(payload, dict):
            return Response({"detail": "The body must be a JSON object."}, status=status.HTTP_400_BAD_REQUEST)
        data = ProlificWebhookIn(data=payload)
        data.is_valid(raise_exception=True)
        try:
            applied = receive_webhook_event(payload={**payload, **data.validated_data})
        except WebhookRefused as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response({"detail": applied.outcome, "released": applied.released}, status=status.HTTP_200_OK)
