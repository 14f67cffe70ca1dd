"""The study's form: the reference system named by key on a new study, and the attention options' check."""

from django import forms
from django.core.exceptions import ValidationError


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

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if "attention_options" in self.fields:
            self.fields["attention_options"].help_text = self.ATTENTION_HELP

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
