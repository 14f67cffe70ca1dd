"""Celery tasks of the surveys app: thin, idempotent."""

from celery import shared_task

from .services import allocation


@shared_task
def release_expired_reservations() -> int:
    """The periodic sweep: reopen the cells of participants whose reservations ran out."""
    return allocation.release_expired()
