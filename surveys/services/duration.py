"""How long the judging survey takes a participant: from the design, then from the judges who finished.

The design's estimate: a fixed part (consent, the questions about the participant, the attention check)
plus, per pair, the time to read the scenario and both answers and a few seconds per question. Once
enough judges have finished (`judging.MEDIAN_NEEDS`), their median time on the pairs replaces the
design's per-pair part. The consent page shows the result, rounded up to whole minutes, and for a live
study reuses it for a minute (`shown_minutes`): a judge more or less hardly moves it, while computing it
cost each consent page more than the rest of the page's reads.
"""

import math
import threading
import time

from ..models import Study
from .freezing import is_frozen
from .judging import median_seconds
from .live_content import content_of
from .timing import REFRESH_SECONDS

FIXED_SECONDS = 90  # consent, demographics and the attention check
READING_SECONDS_PER_PAIR = 100  # a scenario and two answers of up to five features each
SECONDS_PER_QUESTION = 10  # one forced choice, after reading


def design_seconds(study: Study, questions: int) -> int:
    """The judging pages' time as the design predicts it, in seconds."""
    return study.vignettes_per_participant * (READING_SECONDS_PER_PAIR + questions * SECONDS_PER_QUESTION)


def estimated_minutes(study: Study) -> int:
    """Whole minutes a participant should expect: the judges' median once known, else the design's estimate."""
    pairs = median_seconds(study=study)
    if pairs is None:
        pairs = design_seconds(study, len(content_of(study).questions))
    return max(1, math.ceil((FIXED_SECONDS + pairs) / 60))


MAX_STUDIES = 64  # live studies whose shown minutes a process keeps; more evict the oldest
_lock = threading.Lock()
_shown: dict[tuple, tuple[int, float]] = {}  # (study, went live at) -> (minutes, until when on _clock)
_clock = time.monotonic


def shown_minutes(study: Study) -> int:
    """`estimated_minutes` as the consent page shows it: a live study's is kept REFRESH_SECONDS per process.

    For display only: the "too fast" flag reads the median itself (`median_seconds`).
    """
    if not is_frozen(study):
        return estimated_minutes(study)
    key, now = (study.pk, study.went_live_at), _clock()
    cached = _shown.get(key)
    if cached is not None and cached[1] > now:
        return cached[0]
    minutes = estimated_minutes(study)
    with _lock:
        if key not in _shown and len(_shown) >= MAX_STUDIES:
            _shown.pop(next(iter(_shown)), None)
        _shown[key] = (minutes, now + REFRESH_SECONDS)
    return minutes
