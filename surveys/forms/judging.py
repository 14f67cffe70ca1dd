"""The judging survey's forms: consent, demographics, one page of A/B questions, the attention check."""

import copy
import unicodedata
from functools import cache, partial
from typing import TYPE_CHECKING

from django import forms
from django.utils import translation
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from .. import constants
from ..models import Judgment, Question
from ..services.languages import question_text

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise, StrPromise


def _yes_no(
    label: "StrOrPromise", yes: "StrOrPromise", no: "StrOrPromise", required_message: "StrOrPromise"
) -> forms.TypedChoiceField:
    return forms.TypedChoiceField(
        choices=[("yes", yes), ("no", no)],
        coerce=lambda value: value == "yes",
        widget=forms.RadioSelect,
        label=label,
        error_messages={"required": required_message},
    )


def _choices(values: list[str]) -> list[tuple[str, "StrPromise"]]:
    # Stored in English, shown in the study's language (constants marks them for translation).
    return [("", _("— choose —"))] + [(value, _(value)) for value in values]


def _sort_key(text: str) -> str:
    # "Ägypten" beside "Afghanistan", "Österreich" beside "Oman": letters without their accents first.
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().casefold()


class SharedChoiceField(forms.ChoiceField):
    """A select of `values`, labelled in the language shown: the list is worked out once per language, and shared.

    Django copies and checks (`normalize_choices`) a field's list of choices for every form built, again for
    its widget, and walks it to validate a choice: for the 200 countries that took most of the demographics
    form's time. Choices given as a callable are neither copied nor checked; the lists it returns are cached
    and never changed in place, and a choice is checked against the values (the same in every language).
    """

    def __init__(self, *, values: list[str], sort: bool = False, **kwargs):
        in_language = cache(partial(_in_language, _choices(values), sort))
        super().__init__(choices=lambda: in_language(translation.get_language()), **kwargs)
        self.values = frozenset(values)

    def valid_value(self, value) -> bool:
        return str(value) in self.values

    def __deepcopy__(self, memo):
        # Every form built copies its fields: this field's choices (and its widget's) are the shared lists
        # above, never changed in place, so the copy shares them; the rest is copied as Field copies it.
        result = copy.copy(self)
        memo[id(self)] = result
        result.widget = memo[id(self.widget)] = copy.copy(self.widget)
        result.widget.attrs = self.widget.attrs.copy()
        result.error_messages = self.error_messages.copy()
        result.validators = self.validators[:]
        return result


def _in_language(choices: list, sort: bool, language: str | None) -> list[tuple[str, str]]:
    """`choices` with their labels in `language`; sorted in its alphabetical order when `sort` ("Deutschland"
    under D in German), "— choose —" still first and the last two ("Other", "Prefer not to say") still last."""
    with translation.override(language):
        shown = [(value, str(label)) for value, label in choices]
    if sort:
        shown = [shown[0], *sorted(shown[1:-2], key=lambda choice: _sort_key(choice[1])), *shown[-2:]]
    return shown


def _please_choose(required: "StrOrPromise", invalid: "StrOrPromise") -> dict[str, "StrOrPromise"]:
    return {"required": required, "invalid_choice": invalid}


class ConsentForm(forms.Form):
    consent = _yes_no(
        _("Do you agree to take part in this study?"),
        _("Yes, I agree to take part"),
        _("No, I do not agree"),
        _("Please say whether you agree to take part."),
    )
    anonymised = _yes_no(
        _("Do you agree that your anonymised answers may be used in research publications and shared data sets?"),
        _("Yes, my anonymised answers may be used"),
        pgettext_lazy("answer", "No"),
        _("Please say whether your anonymised answers may be used."),
    )

    def clean(self):
        data = super().clean()
        assert data is not None  # Form.clean returns the cleaned data
        if data.get("consent") is False:
            self.errors.pop("anonymised", None)  # declining ends the study: the second answer does not matter
            data["anonymised"] = False
        return data


class DemographicsForm(forms.Form):
    gender = SharedChoiceField(
        label=_("Gender"),
        values=constants.GENDERS,
        error_messages=_please_choose(_("Please choose your gender."), _("Please choose your gender from the list.")),
    )
    gender_specify = forms.CharField(label=_("If you prefer to specify your gender"), max_length=100, required=False)
    age = SharedChoiceField(
        label=_("Age"),
        values=constants.AGE_GROUPS,
        error_messages=_please_choose(
            _("Please choose your age group."), _("Please choose your age group from the list.")
        ),
    )
    religion = SharedChoiceField(
        label=_("Religion"),
        values=constants.RELIGIONS,
        error_messages=_please_choose(
            _("Please choose your religion."), _("Please choose your religion from the list.")
        ),
    )
    religion_specify = forms.CharField(
        label=_("If other, please specify your religion"), max_length=100, required=False
    )
    education = SharedChoiceField(
        label=_("Highest level of education completed"),
        values=constants.EDUCATION_LEVELS,
        error_messages=_please_choose(
            _("Please choose your highest level of education."),
            _("Please choose your highest level of education from the list."),
        ),
    )
    country = SharedChoiceField(
        label=_("Country of residence"),
        values=[*constants.COUNTRIES, constants.COUNTRY_OTHER, constants.PREFER_NOT_TO_SAY],
        sort=True,
        error_messages=_please_choose(
            _("Please choose your country of residence."), _("Please choose your country of residence from the list.")
        ),
    )

    def clean(self):
        data = super().clean()
        assert data is not None  # Form.clean returns the cleaned data
        if data.get("gender") != constants.SPECIFY_GENDER:
            data["gender_specify"] = ""
        if data.get("religion") != constants.SPECIFY_RELIGION:
            data["religion_specify"] = ""
        return data


class PairForm(forms.Form):
    """One forced choice between Answer A and Answer B per question of the study, nothing preselected.

    Each form builds its own fields and widgets (forms are built in many threads at once, and a form may
    set a widget's attributes); the labels are the questions as shown, in the active language.
    """

    def __init__(self, *args, questions: list[Question], **kwargs):
        super().__init__(*args, **kwargs)
        self.questions = questions
        for number, question in enumerate(questions, 1):
            self.fields[question.key] = forms.ChoiceField(
                label=f"{number}. {question_text(question)}",
                choices=[(Judgment.Position.FIRST, _("Answer A")), (Judgment.Position.SECOND, _("Answer B"))],
                widget=forms.RadioSelect,
                error_messages={"required": _("Please choose Answer A or Answer B.")},
            )

    def picks(self) -> dict[str, str]:
        return {question.key: self.cleaned_data[question.key] for question in self.questions}


class AttentionForm(forms.Form):
    def __init__(self, *args, prompt: str, options: list[str], **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["choice"] = forms.TypedChoiceField(
            label=prompt,
            choices=[(str(number), text) for number, text in enumerate(options, start=1)],
            coerce=int,
            widget=forms.RadioSelect,
            error_messages={"required": _("Please choose one of the two options.")},
        )
