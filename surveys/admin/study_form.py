"""The study's form: the reference system named by key on a new study, and the attention options' check."""

from django import forms
from django.core.exceptions import ValidationError

from ..prolific.client import ProlificError
from ..prolific.eligibility import clean_eligibility
from ..prolific.ownership import check_prolific_link

ELIGIBILITY_FIELDS: list = [
    "eligibility_minimum_approval_rate",
    "eligibility_countries",
    "eligibility_fluent_languages",
    "eligibility_exclude_team_studies",
    "eligibility_excluded_studies",
]


class StudyForm(forms.ModelForm):
    """The admin builds the Meta from the fieldsets; this adds the attention options' check."""

    ATTENTION_HELP = (
        'Two options as a JSON list, e.g. ["I read the answers quickly", "I read the answers carefully"]; '
        "the correct choice is the second. Empty ([]): these two."
    )

    # A new study has no systems to choose from yet: the reference is named by the key of a system
    # typed into the Systems rows of the same page, and set once they are saved (StudyAdmin.save_related).
    reference_key = forms.CharField(
        label="Reference system",
        required=False,
        max_length=64,
        help_text=(
            "The key of one of the systems you enter under Systems below, e.g. lay-human. Estimates are reported "
            "relative to it (the method: lay humans). A key, because the systems do not exist until the study "
            "is saved; afterwards you choose it from the study's systems. May be left empty until going live."
        ),
    )

    # Who may take part on Prolific: kept in the study's prolific_eligibility (surveys/prolific/eligibility.py).
    eligibility_minimum_approval_rate = forms.IntegerField(
        label="Minimum approval rate (%)",
        required=False,
        min_value=0,
        max_value=100,
        help_text="Only participants with at least this share of approved submissions on Prolific, e.g. 95. "
        "Empty: any.",
    )
    eligibility_countries = forms.CharField(
        label="Countries of residence",
        required=False,
        help_text="Comma-separated, as Prolific names them, e.g. United Kingdom, United States. Empty: any.",
    )
    eligibility_fluent_languages = forms.CharField(
        label="Fluent in",
        required=False,
        help_text="Comma-separated languages as Prolific names them, e.g. English. Empty: any. Judges read "
        "the study's language: usually that one.",
    )
    eligibility_exclude_team_studies = forms.BooleanField(
        label="Not in the team's other studies",
        required=False,
        help_text="Keep out everyone who took part in another study of this study's owners and researchers on "
        "Prolific, so that a second experiment gets fresh judges.",
    )
    eligibility_excluded_studies = forms.CharField(
        label="Also not in these Prolific studies",
        required=False,
        help_text="Comma-separated Prolific study ids (24 characters, from the study's URL on Prolific).",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if "attention_options" in self.fields:
            self.fields["attention_options"].help_text = self.ATTENTION_HELP
        saved = clean_eligibility(getattr(self.instance, "prolific_eligibility", None) or {})
        for name in ELIGIBILITY_FIELDS:
            value = saved.get(name.removeprefix("eligibility_"))
            self.initial.setdefault(name, ", ".join(value) if isinstance(value, list) else value)

    def clean(self):
        cleaned = super().clean() or {}
        if any(name in self.fields for name in ELIGIBILITY_FIELDS):
            given = {name.removeprefix("eligibility_"): cleaned.get(name) for name in ELIGIBILITY_FIELDS}
            try:
                self.instance.prolific_eligibility = clean_eligibility(given)
            except ValidationError as exc:
                self.add_error(None, exc)
        return cleaned

    def clean_prolific_study_id(self):
        # Linked by hand only once Prolific's API shows the study is this one's (surveys/prolific/ownership.py).
        given = self.cleaned_data["prolific_study_id"].strip()
        try:
            self.instance.prolific_link = check_prolific_link(study=self.instance, prolific_id=given)
        except ProlificError as exc:
            raise ValidationError(f"Prolific could not be asked whose study this is: {exc}") from exc
        return given

    def clean_reference_key(self):
        key = self.cleaned_data["reference_key"].strip()
        entered = systems_entered(self.data)
        if key and key not in entered:
            listed = ", ".join(entered) if entered else "none yet"
            raise ValidationError(
                f"No system under Systems has the key '{key}' (keys entered: {listed}). "
                "Give the key of one of them, or leave this empty and choose after saving."
            )
        return key

    def clean_attention_options(self):
        # Anything but [] or two texts would silently show judges the default options instead.
        options = self.cleaned_data["attention_options"]
        if options in ([], None):
            return []
        two_texts = isinstance(options, list) and len(options) == 2
        if not (two_texts and all(isinstance(o, str) and o.strip() for o in options)):
            raise ValidationError('Give exactly two options as a JSON list of texts, e.g. ["No", "Yes"], or [].')
        return options


def systems_entered(data) -> list[str]:
    """The keys typed into the systems inline of a posted study form (rows not marked for deletion)."""
    keys = []
    for index in range(int(data.get("systems-TOTAL_FORMS") or 0)):
        key = (data.get(f"systems-{index}-key") or "").strip()
        if key and not data.get(f"systems-{index}-DELETE"):
            keys.append(key)
    return keys
