"""The study admin's "Pay bonuses on Prolific" pages: the bonuses (typed, or a CSV), then Prolific's own figures
with the total including fees and a Pay button that pays once (surveys/prolific/bonuses.py); the payments list."""

from typing import TYPE_CHECKING

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.http import urlencode

from ..models import Bonus, BonusPayment, Participant
from ..prolific import bonuses
from ..prolific.client import NotConfigured, ProlificError, check_configured
from ..prolific.drafts import money
from .answer_import import MAX_UPLOAD_BYTES
from .teams import TeamScoped

if TYPE_CHECKING:  # mixed into StudyAdmin: the ModelAdmin methods it calls are StudyAdmin's
    _Base = admin.ModelAdmin
else:
    _Base = object


class BonusForm(forms.Form):
    lines = forms.CharField(
        required=False,
        label="Bonuses",
        widget=forms.Textarea(attrs={"rows": 8, "cols": 50}),
        help_text="One line per participant: Prolific PID, amount in the study's currency (1.50 is £1.50 or $1.50).",
    )
    file = forms.FileField(required=False, label="Or a CSV file", help_text="The same two columns; a header is fine.")
    amount_each = forms.DecimalField(
        required=False,
        min_value=0.01,
        decimal_places=2,
        label="Amount for lines without one",
        help_text="For a PID given alone, as the participants' page fills in.",
    )
    reason = forms.CharField(required=False, max_length=200, help_text="Why, for the record (not sent to Prolific).")

    def clean(self):
        data = super().clean() or {}
        upload = data.get("file")
        if upload is not None:
            if upload.size > MAX_UPLOAD_BYTES:
                raise forms.ValidationError(f"The file is {upload.size:,} bytes; at most {MAX_UPLOAD_BYTES:,}.")
            try:
                data["lines"] = upload.read().decode("utf-8-sig")
            except UnicodeDecodeError:
                raise forms.ValidationError("The file is not UTF-8 text: save the sheet as CSV UTF-8.") from None
        if not (data.get("lines") or "").strip():
            raise forms.ValidationError("Give the bonuses: type them, or choose a CSV file.")
        return data


class StudyBonusPages(_Base):
    """Mixed into StudyAdmin: admin:surveys_study_bonuses (set up, then confirm) and its pay button."""

    def get_urls(self):
        own = [
            path(
                "<int:study_id>/bonuses/", self.admin_site.admin_view(self.bonuses_view), name="surveys_study_bonuses"
            ),
            path(
                "<int:study_id>/bonuses/<int:payment_id>/pay/",
                self.admin_site.admin_view(self.pay_bonuses_view),
                name="surveys_study_pay_bonuses",
            ),
        ]
        return own + super().get_urls()

    def _study_to_pay_from(self, request, study_id: int):
        study = get_object_or_404(self.get_queryset(request), pk=study_id)  # another team's study: 404
        if not self.has_change_permission(request, study):
            raise PermissionDenied  # a viewer pays nobody
        return study

    def bonuses_view(self, request, study_id: int):
        """The bonuses to pay; on submit Prolific sets them up (nothing paid) and the confirmation page follows."""
        study = self._study_to_pay_from(request, study_id)
        ids = [pk for pk in request.GET.get("participants", "").split(",")[:1000] if pk.isdigit()]
        chosen = Participant.objects.filter(study=study, pk__in=ids).order_by("prolific_pid")
        form = BonusForm(
            request.POST or None,
            request.FILES or None,
            initial={"lines": "".join(f"{p.prolific_pid}\n" for p in chosen if p.prolific_pid)},
        )
        if request.method == "POST" and form.is_valid():
            try:
                check_configured()
                lines = bonuses.parse_bonuses(
                    study=study, text=form.cleaned_data["lines"], amount_each=form.cleaned_data["amount_each"]
                )
                payment = bonuses.set_up_bonus_payment(
                    study=study, lines=lines, by=request.user, reason=form.cleaned_data["reason"]
                )
            except NotConfigured as exc:
                form.add_error(None, str(exc))
            except ValidationError as exc:
                for message in exc.messages:
                    form.add_error(None, message)
            except ProlificError as exc:
                form.add_error(None, f"Prolific refused the bonuses, so nothing was set up or paid: {exc}")
            else:
                return self._confirm_bonuses(
                    request, study, payment, bonuses.large_bonuses(lines, study.prolific_currency)
                )
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "study": study,
            "form": form,
            "title": f"Pay bonuses on Prolific: {study.name}",
            "payments": study.bonus_payments.all()[:20],
        }
        return TemplateResponse(request, "admin/surveys/bonuses.html", context)

    def _confirm_bonuses(self, request, study, payment: BonusPayment, warnings: list[str]):
        currency = payment.currency
        mismatch = payment.amount != sum(b.amount for b in payment.bonuses.all())
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "study": study,
            "payment": payment,
            "bonuses": [(b.prolific_pid, money(b.amount, currency)) for b in payment.bonuses.all()],
            "facts": [
                ("Participants", str(payment.bonuses.count())),
                ("To participants", money(payment.amount, currency)),
                ("Prolific's fee", money(payment.fees, currency)),
                ("VAT on the fee", money(payment.vat, currency)),
                ("Total, taken from your Prolific balance", money(payment.total, currency)),
            ],
            "total": money(payment.total, currency),
            "warnings": warnings
            + (["Prolific's amount differs from the sum of the lines: check the lines"] if mismatch else []),
            "title": f"Confirm bonuses on Prolific: {study.name}",
        }
        return TemplateResponse(request, "admin/surveys/bonuses_confirm.html", context)

    def pay_bonuses_view(self, request, study_id: int, payment_id: int):
        study = self._study_to_pay_from(request, study_id)
        payment = get_object_or_404(BonusPayment, pk=payment_id, study=study)
        if request.method != "POST":
            return redirect("admin:surveys_study_bonuses", study.pk)
        try:
            paid = bonuses.pay_bonus_payment(payment=payment, by=request.user)
        except ValidationError as exc:
            self.message_user(request, " ".join(exc.messages), messages.ERROR)
        except ProlificError as exc:
            payment.refresh_from_db()
            if payment.status == BonusPayment.Status.UNCERTAIN:
                said = "Prolific's answer came too late to know whether it paid: check the payments on Prolific."
            else:
                said = "Nothing was paid; you may try again from the bonuses page."
            self.message_user(request, f"{payment}: {exc} {said}", messages.ERROR)
        else:
            text = (
                f"Bonuses paid on Prolific: {paid.bonuses.count()} participants, {money(paid.amount, paid.currency)} "
                f"to them, {money(paid.total, paid.currency)} with Prolific's fee and VAT (payment {paid.prolific_id})."
            )
            self.log_change(request, study, text)
            self.message_user(request, text, messages.SUCCESS)
        return redirect("admin:surveys_study_bonuses", study.pk)


@admin.action(description="Pay bonuses on Prolific (per participant or from a CSV)", permissions=["change"])
def pay_bonuses_on_prolific(modeladmin, request, queryset):
    """To the study's bonuses page (one study at a time)."""
    if queryset.count() != 1:
        modeladmin.message_user(request, "Choose one study to pay bonuses in.", messages.ERROR)
        return None
    return redirect("admin:surveys_study_bonuses", queryset.get().pk)


@admin.action(description="Pay a bonus on Prolific to the chosen participants", permissions=["change"])
def pay_bonus_to_participants(modeladmin, request, queryset):
    """Per participant: to the study's bonus page with their PIDs filled in (one study at a time)."""
    studies = set(queryset.values_list("study_id", flat=True))
    if len(studies) != 1:
        modeladmin.message_user(request, "Choose participants of one study at a time.", messages.ERROR)
        return None
    ids = ",".join(str(pk) for pk in queryset.values_list("pk", flat=True))
    url = reverse("admin:surveys_study_bonuses", args=[studies.pop()])
    return redirect(f"{url}?{urlencode({'participants': ids})}")


class BonusInline(admin.TabularInline):
    model = Bonus
    extra = 0
    fields = ["prolific_pid", "amount_shown"]
    readonly_fields = ["prolific_pid", "amount_shown"]
    can_delete = False

    @admin.display(description="Amount")
    def amount_shown(self, bonus: Bonus) -> str:
        return money(bonus.amount, bonus.payment.currency)

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(BonusPayment)
class BonusPaymentAdmin(TeamScoped, admin.ModelAdmin):
    """The bonuses set up and paid on Prolific: read only (they are paid from the study's bonuses page)."""

    list_display = ["prolific_id", "study", "status", "to_participants", "total_shown", "created_by", "paid_at"]
    list_filter = ["study", "status"]
    inlines = [BonusInline]
    readonly_fields = [
        "study", "prolific_id", "status", "currency", "to_participants", "fees", "vat", "total_shown", "reason",
        "error", "created_by", "created_at", "paid_by", "paid_at",
    ]  # fmt: skip
    fields = list(readonly_fields)

    @admin.display(description="To participants")
    def to_participants(self, payment: BonusPayment) -> str:
        return money(payment.amount, payment.currency)

    @admin.display(description="Total with fee and VAT")
    def total_shown(self, payment: BonusPayment) -> str:
        return money(payment.total, payment.currency)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
