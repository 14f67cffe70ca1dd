"""Warnings about a study's design before it goes live, from apps above surveys (a hook).

The readiness line warns when the planned study cannot answer its question: too few vignettes to test anything,
or too little power for the test the dashboard reports. Those checks need the analysis app, which surveys never
imports (docs/architecture.md): analysis registers the dotted path of its check with `provide_design_check` from
its AppConfig.ready, and the readiness line asks through `design_warnings`, which imports it when first asked
(after every app is loaded). With no check registered there is nothing to say.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.utils.module_loading import import_string

if TYPE_CHECKING:
    from ..models import Study

_checks: list[str] = []  # dotted paths of `check(study) -> warnings in words`


def provide_design_check(dotted_path: str) -> None:
    """Register a check by its dotted path (a second registration of the same path is ignored)."""
    if dotted_path not in _checks:
        _checks.append(dotted_path)


def design_warnings(study: Study) -> list[str]:
    return [warning for path in _checks for warning in import_string(path)(study)]
