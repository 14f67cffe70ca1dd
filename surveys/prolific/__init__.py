"""Prolific: submission statuses in (webhook and reconciliation) and review decisions out.

- `apply_submission_status` records what Prolific says about a submission; RETURNED and TIMED-OUT
  give the participant's cells back at once (services/participation.py: PROLIFIC_EVENTS).
- `reconcile_study` walks a study's submissions list and applies the same, for missed webhooks.
- `review_submissions` approves valid submissions in one bulk call and handles invalid ones by the
  study's policy, within Prolific's rules (see `decide_review`); `plan_review` says what it would do, for the
  confirmation page, without telling Prolific anything.
- reconciliation also verifies: participants with no submission of the study after a grace period are
  excluded ("no Prolific submission"; verification.py), and `verification_counts` shows where a study stands.
- `verify_webhook` checks Prolific's webhook signature: base64(HMAC-SHA256(secret, timestamp + body)),
  sent as X-Prolific-Request-Signature with X-Prolific-Request-Timestamp (UNIX seconds), on the raw bytes before
  anything is parsed; `receive_webhook` then reads the event, deduplicates it on a digest of the signed content
  (never a header) and applies it in the order of X-Timestamp capped at the signed timestamp (an older event than
  the status applied is "stale").

Modules: statuses (statuses in, reconciliation), verification (only real submissions count), webhooks (signature and
events), errors (what the webhook refuses; the view picks the HTTP status), review (decisions out and POLICY_HELP), drafts (the study on Prolific, from the admin: create or update the draft, publish, add places).
"""

from .client import ProlificError
from .errors import (
    InvalidWebhook,
    MalformedWebhook,
    UnknownSubmissionStatus,
    WebhookNotConfigured,
    WebhookRefused,
    WebhookTooLarge,
)
from .review import (
    APPROVE,
    NEVER_REJECTED,
    POLICY_HELP,
    REASONS,
    REJECT,
    REQUEST_RETURN,
    REVIEWABLE,
    SINGLE_ATTENTION_FAILURE_REJECTABLE_UNDER_MINUTES,
    Decision,
    Reviewed,
    ReviewPlan,
    ReviewStatus,
    decide_review,
    plan_review,
    rejection_allowed,
    review_submissions,
)
from .statuses import (
    SUBMISSION_STATUS_CHANGE,
    Applied,
    ParticipantMismatch,
    Reconciled,
    SubmissionStatus,
    apply_submission_status,
    reconcile_live_studies,
    reconcile_study,
)
from .verification import VerificationCounts, exclude_unverified, verification_counts
from .webhooks import (
    WEBHOOK_MAX_BYTES,
    WEBHOOK_TOLERANCE_SECONDS,
    WebhookEvent,
    json_depth,
    read_event,
    receive_webhook,
    receive_webhook_event,
    sign_webhook,
    verify_webhook,
    webhook_event_id,
)

__all__ = [
    "APPROVE",
    "NEVER_REJECTED",
    "POLICY_HELP",
    "REASONS",
    "REJECT",
    "REQUEST_RETURN",
    "REVIEWABLE",
    "SINGLE_ATTENTION_FAILURE_REJECTABLE_UNDER_MINUTES",
    "SUBMISSION_STATUS_CHANGE",
    "WEBHOOK_MAX_BYTES",
    "WEBHOOK_TOLERANCE_SECONDS",
    "Applied",
    "Decision",
    "InvalidWebhook",
    "MalformedWebhook",
    "ParticipantMismatch",
    "ProlificError",
    "Reconciled",
    "ReviewPlan",
    "ReviewStatus",
    "Reviewed",
    "SubmissionStatus",
    "UnknownSubmissionStatus",
    "VerificationCounts",
    "WebhookEvent",
    "WebhookNotConfigured",
    "WebhookRefused",
    "WebhookTooLarge",
    "apply_submission_status",
    "decide_review",
    "exclude_unverified",
    "json_depth",
    "plan_review",
    "read_event",
    "receive_webhook",
    "receive_webhook_event",
    "reconcile_live_studies",
    "reconcile_study",
    "rejection_allowed",
    "review_submissions",
    "sign_webhook",
    "verification_counts",
    "verify_webhook",
    "webhook_event_id",
]
