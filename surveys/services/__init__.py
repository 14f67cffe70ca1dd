"""Surveys' business logic: plain functions called by views, admin, commands and tasks.

- participation: the participant lifecycle as tables (statuses, from status × event → to status,
  Prolific statuses → events); every change of a participant's status, exclusion, flags,
  prolific_status or review_status goes through `apply_event` or its `record_*` functions.
- judging: the judging survey (entry, consent, demographics, pages, attention check, quality).
- respondent_survey: the answer-writing survey (lay respondents and invited experts).
- allocation: which cells a judge gets; the sweep of reservations that ran out.
- lifecycle: a study's way from draft to live to closed, and its comparison plan.
- answer_shape (the answer's shape, its provider schemas), answer_records (writing and selecting answers),
  shape_basics (what every typed shape shares: storable text, errors in words); study_files: import and export.
- prolific_link: the Prolific parameters of a study link, for both surveys.
- errors: what the services refuse (domain errors); views choose the HTTP status.
"""
