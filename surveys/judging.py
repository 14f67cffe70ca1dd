"""Moved to surveys.services.judging. This alias stays only for surveys/demo/simulate.py, which another
branch is editing at the same time; when it imports `..services.judging`, delete this module."""

from .services.judging import (  # noqa: F401
    CORRECT_ATTENTION_CHOICE,
    ProlificParams,
    current_step,
    enter_study,
    finish_participant,
    mark_shown,
    record_consent,
    record_demographics,
    record_page,
)
