"""The study admin's Prolific actions: create or update the draft, publish it, add places.

Each shows an intermediate page first (what would be sent: places, reward, hourly rate, warnings) and
acts only when the researcher confirms it. The work is in surveys/prolific/drafts/.
"""

from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.core.exceptions import ValidationError
from django.template.response import TemplateResponse
from django.urls import reverse

from ..prolific import APPROVE, REJECT, REQUEST_RETURN, drafts, plan_review, review_submissions
from ..prolific.client import NotConfigured, ProlificError, check_configured

CONFIRMED = "confirmed"  # the intermediate page's button posts this back with the action


def study_url(request, study) -> str:
    return request.build_absolute_uri(reverse("surveys:judging-entry", args=[study.slug]))


@admin.action(description="Create or update Prolific draft", permissions=["change"])
def create_or_update_prolific_draft(modeladmin, request, queryset):
    def send(study) -> str:
        sent = drafts.send_draft(study=study, study_url=study_url(request, study), by=request.user)
        done = "created as a draft" if sent.created else "draft updated"
        return (
            f"Prolific study {sent.prolific_id} {done} ({sent.draft.places.total} places, "
            f"{sent.draft.reward_text} for {sent.draft.minutes} minutes)."
        )

    return _confirmed_then_each(
        modeladmin, request, queryset, "create_or_update_prolific_draft",
        rows=lambda study: _draft_row(study, study_url(request, study)), button="Send to Prolific", send=send,
    )  # fmt: skip


@admin.action(description="Publish on Prolific", permissions=["change"])
def publish_on_prolific(modeladmin, request, queryset):
    def send(study) -> str:
        status = drafts.publish(study=study, by=request.user)
        return f"Prolific study {study.prolific_study_id} published ({status})."

    return _confirmed_then_each(
        modeladmin, request, queryset, "publish_on_prolific",
        rows=lambda study: _publish_row(study, study_url(request, study)), button="Publish", send=send,
    )  # fmt: skip


@admin.action(
    description="Add places on Prolific (for cells left open by returns and exclusions)", permissions=["change"]
)
def add_places_on_prolific(modeladmin, request, queryset):
    def send(study) -> str:
        needed = drafts.add_places(study=study, by=request.user)
        return (
            f"{needed.to_add} places added on Prolific "
            f"({needed.prolific_total} → {needed.prolific_total + needed.to_add})."
        )

    return _confirmed_then_each(
        modeladmin, request, queryset, "add_places_on_prolific",
        rows=_places_row, button="Add the places", send=send,
    )  # fmt: skip


def _confirmed_then_each(modeladmin, request, queryset, action: str, *, rows, button: str, send):
    """The intermediate page until the researcher confirms; then `send` per study, each study's outcome said
    (and kept in its history) on its own, so one refusal does not hide the others' success."""
    if not _configured(modeladmin, request):
        return None
    if request.POST.get(CONFIRMED) != "yes":
        return _confirm(modeladmin, request, queryset, action, [rows(study) for study in queryset], button=button)
    for study in queryset:
        try:
            done = send(study)
        except (ValidationError, ProlificError) as exc:
            _refused(modeladmin, request, study, exc)
            continue
        text = f"Study '{study.slug}': {done}"
        modeladmin.log_change(request, study, text)
        modeladmin.message_user(request, text, messages.SUCCESS)
    return None


REVIEWED_FIELD = "reviewed"  # the participants the review page showed, posted back with the confirmation


def review_then_say(modeladmin, request, queryset):
    """'Review submissions on Prolific': the page of who would be approved, rejected or asked to return and
    what it pays, then, once confirmed, only those submissions are reviewed (study_actions.py lists it)."""
    if not _configured(modeladmin, request):
        return None
    if request.POST.get(CONFIRMED) != "yes":
        rows = [_review_row(study) for study in queryset]
        shown = [(REVIEWED_FIELD, p.pk) for row in rows for p in row.pop("participants", [])]
        return _confirm(modeladmin, request, queryset, "review_on_prolific", rows, button="Review now", hidden=shown)
    confirmed = {int(pk) for pk in request.POST.getlist(REVIEWED_FIELD) if pk.isdigit()}
    for study in queryset:
        report = review_submissions(study=study, user=request.user, only=confirmed)
        acted = report.calls or report.failed
        for line in report.messages:
            modeladmin.message_user(request, line, messages.WARNING if report.failed or not acted else messages.INFO)
        if not acted:
            continue  # refused before any call (no study id, nothing to review): no "0 approved"
        summary = (
            f"Study '{study.slug}': {report.approved} approved, {report.rejected} rejected, "
            f"{report.returns_requested} asked to return, {report.failed} failed."
        )
        modeladmin.log_change(request, study, summary)
        modeladmin.message_user(request, summary, messages.ERROR if report.failed else messages.SUCCESS)
    return None


def _review_row(study) -> dict:
    try:
        plan = plan_review(study=study)
    except ValidationError as exc:
        return _row(study, problems=exc.messages)
    except ProlificError as exc:
        return _row(study, error=str(exc))
    approve, reject, ask = plan.of(APPROVE), plan.of(REJECT), plan.of(REQUEST_RETURN)
    currency = plan.currency

    def paid(n: int) -> str:
        if plan.reward is None:
            return "the reward could not be read from Prolific"
        return f"{drafts.money(plan.reward, currency)} each, {drafts.money(plan.reward * n, currency)} in all"

    facts = [
        ("Statuses read from Prolific", plan.refreshed),
        ("To approve", f"{len(approve)}: each is paid the study's reward ({paid(len(approve))}), in one bulk call"),
        ("To reject", f"{len(reject)}: not paid, and the rejection counts against them on Prolific"),
        ("To ask to return", f"{len(ask)}: not paid once they return it; the place reopens"),
        (
            "Money",
            "The rewards were taken from your Prolific balance, with Prolific's fee, when the study was published: "
            "approving pays them out and takes nothing more; a rejected or returned submission's reward goes back "
            "to your balance.",
        ),
        ("Submissions arriving later", "wait for the next review: only those listed here are reviewed."),
    ]
    labels = {APPROVE: "approve", REJECT: "reject", REQUEST_RETURN: "ask to return"}
    lines = [
        (
            participant.prolific_pid,
            labels[decision.action],
            ", ".join(decision.reasons) or "valid",
            decision.rejection_category or "; ".join(decision.return_reasons) or "",
            decision.note,
        )
        for participant, decision in plan.decisions
    ]
    table = {
        "caption": "Each submission awaiting review, and what will be done with it",
        "head": ["Prolific PID", "Decision", "Reasons", "Category or return reason", "Note"],
        "rows": lines,
    }
    warnings = [f"{len(reject)} submissions will be rejected"] if reject else []
    participants = [participant for participant, _ in plan.decisions]
    return _row(study, facts=facts, tables=[table], warnings=warnings, participants=participants)


PROLIFIC_ACTIONS = [create_or_update_prolific_draft, publish_on_prolific, add_places_on_prolific]


def _configured(modeladmin, request) -> bool:
    try:
        check_configured()
    except NotConfigured as exc:
        modeladmin.message_user(request, str(exc), messages.ERROR)
        return False
    return True


def _refused(modeladmin, request, study, exc: Exception) -> None:
    reason = " ".join(exc.messages) if isinstance(exc, ValidationError) else str(exc)
    prefix = "" if reason.startswith(f"Study '{study.slug}'") else f"Study '{study.slug}': "
    modeladmin.message_user(request, f"{prefix}{reason} Nothing was changed.", messages.ERROR)


def _confirm(modeladmin, request, queryset, action: str, rows: list[dict], button: str, hidden=()):
    """The intermediate page; `hidden` ((name, value) pairs) is posted back with the confirmation, such as the
    submissions the page showed, so that what is done is what was shown."""
    context = {
        **modeladmin.admin_site.each_context(request),
        "opts": modeladmin.model._meta,
        "title": f"{queryset.model._meta.verbose_name_plural.capitalize()}: {_describe(action)}",
        "action": action,
        "button": button,
        "rows": rows,
        "queryset": queryset,
        "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
        "confirmed": CONFIRMED,
        "hidden": list(hidden),
        "blocked": all(row["problems"] or row["error"] for row in rows),
    }
    return TemplateResponse(request, "admin/surveys/prolific/confirm.html", context)


def _describe(action: str) -> str:
    return {
        "create_or_update_prolific_draft": "create or update the Prolific draft",
        "publish_on_prolific": "publish on Prolific",
        "add_places_on_prolific": "add places on Prolific",
        "review_on_prolific": "review submissions on Prolific (approve, reject, ask to return)",
    }[action]


def _row(study, **parts) -> dict:
    return {
        "study": study, "facts": [], "codes": [], "warnings": [], "problems": [], "error": "", "tables": [], **parts
    }  # fmt: skip


def _draft_row(study, url: str) -> dict:
    try:
        draft = drafts.preview_draft(study=study, study_url=url)
    except ProlificError as exc:
        return _row(study, error=str(exc))
    target = f"update the draft {study.prolific_study_id}" if study.prolific_study_id else "create a new draft"
    facts = [
        ("On Prolific", target),
        ("Study link", draft.payload["external_study_url"]),
        ("Estimated minutes", f"{draft.minutes} (from {draft.minutes_from})"),
        ("Places", str(draft.places)),
        ("Reward", f"{draft.reward_text} per participant"),
        ("Hourly rate", f"{drafts.money(int(draft.hourly_rate * 100), draft.currency)} per hour"),
        ("Devices", ", ".join(draft.payload["device_compatibility"])),
        ("Who may take part", "; ".join(draft.eligibility)),
        ("Cost when every place is paid", str(draft.cost)),
        ("Money", "Nothing is spent by a draft: Prolific takes the cost from your balance when it is published."),
    ]
    return _row(
        study, facts=facts, codes=draft.payload["completion_codes"], warnings=draft.warnings, problems=draft.problems
    )


def _publish_row(study, url: str) -> dict:
    try:
        held = drafts.preview_publish(study=study, study_url=url)
    except ValidationError as exc:
        return _row(study, problems=exc.messages)
    except ProlificError as exc:
        return _row(study, error=str(exc))
    facts = [
        ("On Prolific", f"{held.prolific_id} ({held.status})"),
        ("Places", held.places),
        ("Reward", f"{drafts.money(held.reward, held.currency)} for {held.minutes} minutes"),
    ]
    if held.hourly_rate is not None:
        facts.append(("Hourly rate", f"{drafts.money(int(held.hourly_rate * 100), held.currency)} per hour"))
    facts.append(
        ("Cost, taken from your Prolific balance", str(drafts.cost_of(held.reward * held.places, held.currency)))
    )
    facts.append(("What happens", "Participants on Prolific who pass its filters see the study and may start at once."))
    return _row(study, facts=facts, codes=held.codes, warnings=held.warnings, problems=held.problems)


def _places_row(study) -> dict:
    try:
        needed = drafts.places_needed(study=study)
    except ValidationError as exc:
        return _row(study, problems=exc.messages)
    except ProlificError as exc:
        return _row(study, error=str(exc))
    facts = [
        ("Open places in the cells", f"{needed.open_places} on {needed.vignettes_open} vignettes"),
        (
            "Judges needed",
            f"{needed.judges} ({needed.open_places} ÷ {needed.per_judge} vignettes per judge, + {needed.margin_percent}% margin)",
        ),
        ("On Prolific", f"{needed.prolific_total} places, {needed.prolific_taken} taken, {needed.prolific_left} left"),
        ("Places to add", f"{needed.to_add} (total {needed.prolific_total + needed.to_add})"),
        ("Reward per place", drafts.money(needed.reward, study.prolific_currency)),
        (
            "Added cost, taken from your Prolific balance",
            str(drafts.cost_of(needed.reward * needed.to_add, study.prolific_currency)),
        ),
    ]
    problems = [] if needed.to_add else ["no places are needed"]
    return _row(study, facts=facts, warnings=needed.warnings, problems=problems)
