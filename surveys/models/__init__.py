"""The study domain: what a study is made of, who takes part, and what they judged.

The database holds the invariants (see the named constraints); services in this app do the writes.
Modules: study (the study and its parts, answers), judging (cells, participants, assignments,
judgments), answering (invitations, respondents), prolific (webhook events), entry (entries per client address).
"""

from .answering import Invitation, Respondent, RespondentTask, new_invitation_token
from .entry import EntryAttempt
from .judging import Assignment, AssignmentQuerySet, Cell, Judgment, JudgmentQuerySet, Participant
from .prolific import ProlificEvent
from .study import (
    DEFAULT_ATTENTION_OPTIONS,
    DEFAULT_ATTENTION_PROMPT,
    MAX_FEATURES,
    METHOD_QUESTION_LABELS,
    METHOD_QUESTIONS,
    WEIGHT_TOTAL,
    Answer,
    AnswerQuerySet,
    Feature,
    Question,
    Study,
    System,
    Vignette,
    question_label,
)

__all__ = [
    "DEFAULT_ATTENTION_OPTIONS",
    "DEFAULT_ATTENTION_PROMPT",
    "MAX_FEATURES",
    "METHOD_QUESTIONS",
    "METHOD_QUESTION_LABELS",
    "WEIGHT_TOTAL",
    "Answer",
    "AnswerQuerySet",
    "Assignment",
    "AssignmentQuerySet",
    "Cell",
    "EntryAttempt",
    "Feature",
    "Invitation",
    "Judgment",
    "JudgmentQuerySet",
    "Participant",
    "ProlificEvent",
    "Question",
    "Respondent",
    "RespondentTask",
    "Study",
    "System",
    "Vignette",
    "new_invitation_token",
    "question_label",
]
