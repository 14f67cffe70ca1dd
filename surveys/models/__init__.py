"""The study domain: what a study is made of, who takes part, and what they judged.

The database holds the invariants (see the named constraints); services in this app do the writes.
Modules: study (the study and its settings), study_parts (questions, vignettes, systems), answers (the
systems' answers and their features), translations (what a valid `translations` object is), judging
(cells, participants, assignments, judgments), respondents (the answer-writing survey's invitations and
respondents), prolific (webhook events, bonus payments), entry (entries per client address), teams (study teams and the audit trail).
"""

from .answers import MAX_FEATURES, WEIGHT_TOTAL, Answer, AnswerQuerySet, Feature
from .entry import EntryAttempt
from .judging import Assignment, Cell, Judgment, JudgmentQuerySet, Participant
from .prolific import Bonus, BonusPayment, ProlificEvent
from .respondents import Invitation, Respondent, RespondentTask, new_invitation_token
from .snapshots import StudySnapshot
from .study import DEFAULT_ATTENTION_OPTIONS, DEFAULT_ATTENTION_PROMPT, METHOD_QUESTIONS, Study
from .study_parts import METHOD_QUESTION_LABELS, Question, System, Vignette, question_label
from .teams import AuditEvent, StudyMembership

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
    "AuditEvent",
    "Bonus",
    "BonusPayment",
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
    "StudyMembership",
    "StudySnapshot",
    "System",
    "Vignette",
    "new_invitation_token",
    "question_label",
]
