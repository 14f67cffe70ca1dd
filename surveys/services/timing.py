"""The study's median completion time, for the "too fast against the median" quality flag.

Asked each time a participant finishes, so it must cost the same at 10 judges and at 400,000: the
database computes it over the `participant_finished_secs_idx` index, and no row comes to Python
except the one or two middle ones (on SQLite; PostgreSQL returns the median itself); a large study's
median is reused for a minute rather than recomputed on every finish.
"""

from __future__ import annotations

from django.core.cache import cache
from django.db import connections, router
from django.db.models import Aggregate, Count, FloatField

from ..models import Participant, Study

MEDIAN_NEEDS = 5  # "too fast against the median" is judged once this many others have finished
CACHED_FROM = 2_000  # finished judges from which the median is recomputed at most every REFRESH_SECONDS
REFRESH_SECONDS = 60


class _PostgresMedian(Aggregate):
    function = "percentile_cont"
    template = "%(function)s(0.5) WITHIN GROUP (ORDER BY %(expressions)s)"
    output_field = FloatField()


def finished_participants(*, study: Study):
    """The participants whose time counts: finished (attention passed or failed), not previews.

    The filter matches the partial index's condition, so the database reads the index only.
    """
    return Participant.objects.filter(
        study=study,
        is_preview=False,
        status__in=[Participant.Status.COMPLETED, Participant.Status.FAILED_ATTENTION],
    ).order_by()


def median_seconds(*, study: Study) -> float | None:
    """The median `seconds_total` of the finished participants; None while fewer than MEDIAN_NEEDS have finished.

    From CACHED_FROM finished judges on, the value is kept for REFRESH_SECONDS (per web process): one
    more judge moves the median by a hair, while computing it walks the whole index (about 150 ms at
    400,000 judges on PostgreSQL), which the attention POST should not pay on every finish.
    """
    cached = kept_median(study=study)
    if cached is not None:
        return cached
    return counted_median(study=study, counted=_median_of_finished(study))


def _key(study: Study) -> str:
    return f"surveys:median-seconds:{study.pk}"


def kept_median(*, study: Study) -> float | None:
    """The median kept for a large study (None: compute it)."""
    return cache.get(_key(study))


def counted_median(*, study: Study, counted: tuple[int, float | None]) -> float | None:
    """The median from (finished judges, their median) as the database gave them, kept from CACHED_FROM on."""
    n, median = counted
    if n < MEDIAN_NEEDS:
        return None
    if n >= CACHED_FROM:
        cache.set(_key(study), median, REFRESH_SECONDS)
    return median


def _median_of_finished(study: Study) -> tuple[int, float | None]:
    finished = finished_participants(study=study)
    if connections[router.db_for_read(Participant)].vendor == "postgresql":
        counted = finished.aggregate(n=Count("pk"), median=_PostgresMedian("seconds_total"))
        return counted["n"], counted["median"]
    n = finished.count()
    if n < MEDIAN_NEEDS:
        return n, None
    # The middle row (odd count) or the two middle rows (even), walking the index in order.
    middle = list(finished.order_by("seconds_total").values_list("seconds_total", flat=True)[(n - 1) // 2 : n // 2 + 1])
    return n, sum(middle) / len(middle)
