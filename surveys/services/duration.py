"""How long the judging survey takes a participant: from the design, then from the judges who finished.

The design's estimate: a fixed part (consent, the questions about the participant, the attention check)
plus, per pair, the time to read the scenario and both answers and a few seconds per question. Once
enough judges have finished (`judging.MEDIAN_NEEDS`), their median time on the pairs replaces the
design's per-pair part. The consent page shows the result, rounded up to whole minutes.
"""

import math

from ..models import Study
from .judging import median_seconds
from .live_content import content_of

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
