"""One idempotent collection step per Generation: claim, call, record (the claim is the call mechanism's,
llm_collect/calls/; what is asked and how the reply becomes an Answer are this module's).

A Generation row is created once per system × vignette × sample and every state change is a conditional UPDATE
(calls/states.py). A worker *claims* a row before it calls the provider, keeps the claim's short lease alive
while it works, and writes the result only while it still holds that claim. So a duplicate or redelivered
message for a finished row does nothing (no call, no cost), one for a row another worker holds waits for the
lease, a worker that was killed frees its row within one lease (the sweep queues it again), and a worker that
was presumed dead and comes back late cannot store a second Answer. The Answer table's own unique (system,
vignette, sample) is the last guard. See docs/architecture.md.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from surveys.models import Answer, Study, System
from surveys.services.answer_records import create_answer, select_answer

from .. import client
from ..calls import Called, Request, call_claimed, move, record_unusable, reply_fields, store_result
from ..models import Generation
from ..parsing import ParseError, parse_answer
from ..prompts import render_prompts

Status = Generation.Status


def collect(*, generation_id: int, retries: int = 0) -> str:
    """One step for one Generation. Returns the row's status afterwards ("skipped" when there was nothing to do).

    Raises TryAgain (with the delay to wait) when the task should run again later: no rate or concurrency slot
    free, a provider error worth retrying, unusable output with attempts left, or another worker's lease still
    running. ``retries`` is how often the task has been retried, for the backoff.
    """
    gen = Generation.objects.select_related("system", "vignette__study").filter(pk=generation_id).first()
    if gen is None:
        return "skipped"

    def request() -> Request:
        return Request(*render_prompts(study=gen.vignette.study, vignette=gen.vignette))

    called = call_claimed(gen, configured=gen.system, request=request, retries=retries)
    if not isinstance(called, Called):
        return called
    return record_reply(gen, called.token, called.reply, retries=retries)


def record_reply(gen: Generation, token: str, reply: client.Reply, *, retries: int = 0) -> str:
    """Store what came back, then either an Answer (DONE), another try, or INVALID for the researcher."""
    call_fields = reply_fields(reply, configured=gen.system)
    try:
        parsed = parse_answer(reply.text)
    except ParseError as exc:
        error = f"Unusable output: {exc}"
        return record_unusable(
            gen, token, reply, error=error, parse_error=str(exc), call_fields=call_fields, retries=retries
        )

    try:
        with transaction.atomic():
            stored = store_result(
                gen, token, reply, event="answer stored", call_fields=call_fields,
                normalised=parsed.normalised, original_weights=parsed.original_weights,
            )  # fmt: skip
            if not stored:
                return "skipped"  # our lease ran out and another worker took the row: its result counts
            answer = create_answer(
                system=gen.system,
                vignette=gen.vignette,
                features=parsed.features,
                action=parsed.action,
                additional_information=parsed.additional_information,
                sample=gen.sample,
                raw_text=reply.text,
                origin=Answer.Origin.LLM,
            )
            Generation.objects.filter(pk=gen.pk).update(answer=answer)
            select_first_valid(answer)
    except (IntegrityError, ValidationError) as exc:
        # Only if someone stored this sample by another route meanwhile: keep the reply, flag the row.
        error = f"The reply could not be stored as an answer: {exc}"
        move(gen, token=token, to=Status.FAILED, event="not stored", error=error, reply=reply, **call_fields)
        return Status.FAILED
    return Status.DONE


def select_first_valid(answer: Answer) -> None:
    """Select the lowest-numbered valid LLM sample, while the study is a draft and no person chose otherwise."""
    if answer.vignette.study.status != Study.Status.DRAFT:
        return
    System.objects.select_for_update().filter(pk=answer.system_id).first()  # one selection at a time per system
    current = Answer.objects.filter(system=answer.system_id, vignette=answer.vignette_id, selected=True).first()
    automatic = current is not None and current.origin == Answer.Origin.LLM and current.selected_by_id is None
    if current is None or (automatic and current.sample > answer.sample):
        select_answer(answer=answer)
