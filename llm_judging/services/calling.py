"""One idempotent judging step per JudgeCall: claim, call, record, through the one call mechanism
(llm_collect/calls/); what is asked and how the picks are read are this module's.

call_claimed claims the row before the provider is called, keeps its lease alive while the call runs, and every
change is written by ``move`` on the row still held with the claim token: a redelivered message for a finished
row does nothing, a killed worker's row is free again within one lease, and a worker presumed dead cannot store
a second set of picks. Rate and concurrency limits are the provider's, shared with answer collection
(llm_collect/limits.py), so judging and collecting never overrun a key together. See docs/architecture.md.
"""

from __future__ import annotations

from llm_collect import client
from llm_collect.calls import Called, Request, call_claimed, record_unusable, reply_fields, store_result

from ..models import JudgeCall
from .prompts import SYSTEM_PROMPT, ParseError, judgment_schema, parse_picks, render_judging_prompt

Status = JudgeCall.Status


def judge_item(*, call_id: int, retries: int = 0) -> str:
    """One step for one JudgeCall; its status afterwards ("skipped" when there was nothing to do).

    Raises TryAgain (with the delay) when the task should run again later: no rate or concurrency slot, a
    retryable provider error (429, 5xx, timeout), a malformed reply with attempts left, or another worker's lease.
    A refusal, a safety block or a length cut is settled by call_claimed with the provider's reason.
    """
    related = ("judge", "cell__study", "cell__vignette", "first_answer", "second_answer")
    call = JudgeCall.objects.select_related(*related).filter(pk=call_id).first()
    if call is None:
        return "skipped"
    questions = []

    def request() -> Request:
        questions.extend(call.cell.study.questions.order_by("position", "id"))
        user_prompt = render_judging_prompt(
            vignette=call.cell.vignette, first=call.first_answer, second=call.second_answer, questions=questions
        )
        return Request(SYSTEM_PROMPT, user_prompt, judgment_schema([q.key for q in questions]))

    called = call_claimed(call, configured=call.judge, request=request, retries=retries)
    if not isinstance(called, Called):
        return called
    return record_reply(call, called.token, called.reply, [q.key for q in questions], retries=retries)


def record_reply(call: JudgeCall, token: str, reply: client.Reply, keys: list[str], *, retries: int = 0) -> str:
    """Store the call; then the picks (DONE), another try, or INVALID for the researcher after too many."""
    call_fields = reply_fields(reply, configured=call.judge)
    try:
        parsed = parse_picks(reply.text, keys)
    except ParseError as exc:
        error = f"Unusable judgment: {exc}"
        return record_unusable(
            call, token, reply, error=error, parse_error=str(exc), call_fields=call_fields, retries=retries
        )
    stored = store_result(
        call, token, reply, event="judged", call_fields=call_fields, picks=parsed.picks, reasons=parsed.reasons
    )
    return Status.DONE if stored else "skipped"  # not stored: our lease ran out and another worker took it
