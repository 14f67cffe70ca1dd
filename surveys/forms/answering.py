"""The answer-writing page's forms: consent, and one answer with up to five weighted features."""

from django import forms
from django.utils.text import format_lazy
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from ..models import MAX_FEATURES, WEIGHT_TOTAL
from ..services.answer_shape import MIN_WEIGHT, validate_features
from ..services.shape_basics import ShapeError, describe, sentence

WEIGHT_WORDS = format_lazy(_("A weight is a whole number from {low} to {high}."), low=MIN_WEIGHT, high=WEIGHT_TOTAL)


class ConsentForm(forms.Form):
    agree = forms.TypedChoiceField(
        choices=[("yes", _("I agree to take part")), ("no", _("I do not agree"))],
        coerce=lambda value: value == "yes",
        widget=forms.RadioSelect,
        label=_("Do you agree to take part?"),
        error_messages={"required": _("Please choose whether you agree to take part.")},
    )


class AnswerForm(forms.Form):
    """Five feature rows (feature, weight, reason), the action and further information.

    Empty rows are ignored. The weights of the rows filled in must add up to 100: the page's script
    shows the running total, and this form says so again when the script is off.
    """

    action = forms.CharField(
        label=_("What should be done? (your conclusion)"),
        max_length=5000,
        widget=forms.Textarea(attrs={"rows": 4}),
        error_messages={"required": _("Please say what should be done.")},
    )
    additional_information = forms.CharField(
        label=_("What further information would you want, if any?"),
        max_length=5000,
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
    )

    # What writing.js recorded while the page was filled in (surveys/services/authenticity.py checks it);
    # never an error for the writer: anything odd here only makes the signals unknown.
    writing_signals = forms.CharField(required=False, widget=forms.HiddenInput, strip=False)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for i in range(1, MAX_FEATURES + 1):
            self.fields[f"feature_{i}"] = forms.CharField(
                label=gettext("Feature {number}").format(number=i),
                max_length=300,
                required=False,
                widget=forms.TextInput(attrs={"size": 30}),
            )
            self.fields[f"weight_{i}"] = forms.IntegerField(
                label=gettext("Weight of feature {number}").format(number=i),
                min_value=MIN_WEIGHT,
                max_value=WEIGHT_TOTAL,
                required=False,
                error_messages={"min_value": WEIGHT_WORDS, "max_value": WEIGHT_WORDS},
                widget=forms.NumberInput(
                    attrs={
                        "inputmode": "numeric",
                        "class": "weight",
                        "data-weight": "",
                        "min": MIN_WEIGHT,
                        "max": WEIGHT_TOTAL,
                    }
                ),
            )
            self.fields[f"reason_{i}"] = forms.CharField(
                label=gettext("Why feature {number} matters").format(number=i),
                max_length=3000,
                required=False,
                widget=forms.Textarea(attrs={"rows": 2}),
            )

    def texts(self) -> dict[str, str]:
        """The final text of every text field, by its input's name (the signals' field names)."""
        names = ["action", "additional_information"]
        names += [f"{kind}_{i}" for i in range(1, MAX_FEATURES + 1) for kind in ("feature", "reason")]
        return {name: self.cleaned_data.get(name) or "" for name in names}

    def rows(self) -> list[dict]:
        return [
            {
                "number": i,
                "feature": self[f"feature_{i}"],
                "weight": self[f"weight_{i}"],
                "reason": self[f"reason_{i}"],
            }
            for i in range(1, MAX_FEATURES + 1)
        ]

    def clean(self):
        cleaned = super().clean()
        assert cleaned is not None  # Form.clean returns the cleaned data
        rows, numbers = [], []
        for i in range(1, MAX_FEATURES + 1):
            feature = (cleaned.get(f"feature_{i}") or "").strip()
            weight = cleaned.get(f"weight_{i}")
            reason = (cleaned.get(f"reason_{i}") or "").strip()
            if f"weight_{i}" in self.errors:
                continue
            if not feature and weight is None and not reason:
                continue
            if not feature:
                self.add_error(f"feature_{i}", gettext("Please name the feature, or clear this row."))
                continue
            if weight is None:
                self.add_error(f"weight_{i}", gettext("Please give this feature a weight."))
                continue
            rows.append({"feature": feature, "weight": weight, "reason": reason})
            numbers.append(i)
        if any(name.startswith(("feature_", "weight_")) for name in self.errors):
            return cleaned  # fix the rows first; their totals mean little yet
        if not rows:
            raise forms.ValidationError(gettext("Please name at least one feature, with its weight."))
        try:
            cleaned["features"] = validate_features(rows)  # the answer's one shape, as everywhere else
        except ShapeError as error:
            for problem in error.errors():
                if problem["loc"]:
                    index, name = problem["loc"][:2]
                    assert isinstance(index, int)  # a feature's problem: its row first
                    self.add_error(
                        f"{name}_{numbers[index]}", WEIGHT_WORDS if name == "weight" else sentence(describe(problem))
                    )
                elif problem["type"] == "weights_total":
                    self.add_error(
                        None,
                        gettext(
                            "Weights: {total} / {target}. The weights must add up to exactly {target}; "
                            "please change them. Everything you typed is kept."
                        ).format(total=problem["ctx"]["total"], target=WEIGHT_TOTAL),
                    )
                else:
                    self.add_error(None, sentence(describe(problem)))
        return cleaned
