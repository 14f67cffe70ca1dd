"""Bonuses on Prolific, per participant or from a CSV (Prolific PID, amount), in Prolific's two steps.

1. `set_up_bonus_payment`: POST submissions/bonus-payments/ with the study id and the lines as "<pid>,<amount>"
   (the amount in the study's currency, such as 1.50). Nothing is paid: Prolific answers the payment's id with
   its own figures (amount, fees, VAT, in pence or cents), kept in a BonusPayment for the confirmation page.
2. `pay_bonus_payment`: POST bulk-bonus-payments/{id}/pay/, once. Prolific's docs: not idempotent, a second
   call pays again. The row is claimed first (SET_UP → PAYING, a conditional update), so a double click or two
   researchers at once pay once; an answer that may have come after the payment leaves it UNCERTAIN (check on
   Prolific), never payable again from here. Paying is audited.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from ..models import AuditEvent, Bonus, BonusPayment, Participant, Study
from ..services.audit import record_event
from . import client
from .client import Permanent, ProlificError
from .drafts.pay import money
from .ownership import owned_prolific_study

# An amount this large (in pounds or dollars) is probably pence typed as pounds: Prolific reads 30 as £30.00.
LARGE_BONUS = Decimal("10.00")
MAX_LINES = 1000


@dataclass(frozen=True)
class BonusLine:
    prolific_pid: str
    amount: int  # pence or cents
    participant: Participant


def parse_bonuses(*, study: Study, text: str, amount_each: Decimal | None = None) -> list[BonusLine]:
    """Lines of "Prolific PID, amount" (a CSV, with or without a header row; the amount in the study's currency,
    such as 1.50). A line with a PID only takes `amount_each`. Every PID must be a participant of the study who
    came from Prolific; each at most once. Raises ValidationError naming every wrong line."""
    rows = [row for row in csv.reader(io.StringIO(text)) if any(cell.strip() for cell in row)]
    if rows and rows[0] and not _is_amount((rows[0] + [""])[1]) and _looks_like_header(rows[0]):
        rows = rows[1:]
    if not rows:
        raise ValidationError("No bonuses given: one line per participant, 'Prolific PID, amount' (such as 1.50).")
    if len(rows) > MAX_LINES:
        raise ValidationError(f"At most {MAX_LINES} bonuses at once; split the file.")
    participants = {
        p.prolific_pid: p
        for p in Participant.objects.filter(study=study, is_preview=False).exclude(session_id="")
        if p.prolific_pid
    }
    lines, errors, seen = [], [], set()
    for number, row in enumerate(rows, start=1):
        pid = row[0].strip()
        raw = row[1].strip() if len(row) > 1 else ""
        amount = _amount(raw) if raw else amount_each
        where = f"line {number} ({pid or 'no PID'})"
        if pid not in participants:
            errors.append(f"{where}: not a Prolific participant of this study")
        elif pid in seen:
            errors.append(f"{where}: given twice (one line per participant)")
        elif amount is None or amount <= 0 or amount != amount.quantize(Decimal("0.01")):
            errors.append(f"{where}: the amount must be positive with at most two decimals, such as 1.50")
        else:
            seen.add(pid)
            lines.append(BonusLine(pid, int(amount * 100), participants[pid]))
    if errors:
        raise ValidationError([f"{error}." for error in errors])
    return lines


def _is_amount(text: str) -> bool:
    return _amount(text.strip()) is not None


def _amount(text: str) -> Decimal | None:
    try:
        value = Decimal(text)
    except InvalidOperation:
        return None
    return value if value.is_finite() else None


HEADER_NAMES = {"pid", "prolific_pid", "prolific pid", "prolific_id", "participant", "participant_id", "id"}


def _looks_like_header(row: list[str]) -> bool:
    return row[0].strip().lower() in HEADER_NAMES


def large_bonuses(lines: list[BonusLine], currency: str) -> list[str]:
    """Warnings for amounts that look like pence typed as pounds."""
    large = [line for line in lines if line.amount >= LARGE_BONUS * 100]
    return [
        f"{line.prolific_pid} gets {money(line.amount, currency)}: Prolific reads the amount in "
        f"{currency}, so 30 pays {money(3000, currency)}, not {money(30, currency)}"
        for line in large
    ]


def set_up_bonus_payment(*, study: Study, lines: list[BonusLine], by=None, reason: str = "") -> BonusPayment:
    """Set the bonuses up on Prolific (nothing paid) and keep Prolific's figures for the confirmation page."""
    prolific_id = owned_prolific_study(study)  # bonuses are paid to its submissions: this study's own
    if not lines:
        raise ValidationError("No bonuses given.")
    csv_bonuses = "".join(f"{line.prolific_pid},{Decimal(line.amount) / 100:.2f}\n" for line in lines)
    answer = client.set_up_bonuses(prolific_id, csv_bonuses)
    with transaction.atomic():
        payment = BonusPayment.objects.create(
            study=study,
            prolific_id=str(answer["id"]),
            currency=study.prolific_currency,
            amount=_minor(answer.get("amount"), default=sum(line.amount for line in lines)),
            fees=_minor(answer.get("fees")),
            vat=_minor(answer.get("vat")),
            reason=reason[:200],
            created_by=by if getattr(by, "pk", None) else None,
        )
        Bonus.objects.bulk_create(
            Bonus(payment=payment, participant=line.participant, prolific_pid=line.prolific_pid, amount=line.amount)
            for line in lines
        )
    return payment


def _minor(value, *, default: int = 0) -> int:
    """Prolific answers pence or cents as floats (151.0)."""
    return default if value is None else round(float(value))


def pay_bonus_payment(*, payment: BonusPayment, by=None) -> BonusPayment:
    """Pay a set-up payment, once (see the module's docstring); ValidationError when it is not payable."""
    person = by if getattr(by, "pk", None) else None
    owned_prolific_study(payment.study)  # still this study's Prolific study
    claimed = BonusPayment.objects.filter(pk=payment.pk, status=BonusPayment.Status.SET_UP).update(
        status=BonusPayment.Status.PAYING, paid_by=person, error=""
    )
    if not claimed:
        payment.refresh_from_db()
        raise ValidationError(f"{payment} cannot be paid from here: it is {payment.get_status_display().lower()}.")
    try:
        client.pay_bonuses(payment.prolific_id)
    except ProlificError as exc:
        # A 4xx (or a 429, answered before anything is done) means nothing was paid: it may be paid later.
        # A timeout or a 5xx may come after the payment: never offered again, the researcher checks on Prolific.
        unpaid = isinstance(exc, Permanent) or exc.status_code == 429
        status = BonusPayment.Status.SET_UP if unpaid else BonusPayment.Status.UNCERTAIN
        BonusPayment.objects.filter(pk=payment.pk).update(status=status, error=str(exc))
        raise
    BonusPayment.objects.filter(pk=payment.pk).update(status=BonusPayment.Status.PAID, paid_at=timezone.now())
    payment.refresh_from_db()
    record_event(
        action=AuditEvent.Action.PROLIFIC_BONUSES_PAID,
        user=person,
        study=payment.study,
        bulk_bonus_payment=payment.prolific_id,
        bonuses={bonus.prolific_pid: bonus.amount for bonus in payment.bonuses.all()},
        amount=payment.amount,
        fees=payment.fees,
        vat=payment.vat,
        total=payment.total,
        currency=payment.currency,
        reason=payment.reason,
    )
    return payment
