"""Researcher forms: the power analysis and the second study to compare with."""

from django import forms

from analysis.power import SPACINGS
from surveys.models import Study

MAX_SIMULATIONS = 20_000


class PowerForm(forms.Form):
    systems = forms.IntegerField(min_value=2, max_value=50)
    vignettes = forms.IntegerField(min_value=1, max_value=500)
    repetitions = forms.IntegerField(min_value=1, max_value=200, help_text="Judges per cell (pair × vignette).")
    vignettes_per_participant = forms.IntegerField(min_value=1, max_value=100)
    gap = forms.FloatField(min_value=0.0, max_value=10.0, help_text="Log-odds between the best and worst system.")
    spacing = forms.ChoiceField(
        choices=[(s, s) for s in SPACINGS],
        help_text="even: abilities spread evenly from 0 to the gap; one-best: one system ahead by the gap.",
    )
    alpha = forms.FloatField(min_value=1e-6, max_value=0.5)
    questions = forms.IntegerField(
        min_value=1, max_value=20, help_text="Alpha is Bonferroni-divided by this (the method: 5 questions)."
    )
    simulations = forms.IntegerField(min_value=10, max_value=MAX_SIMULATIONS)
    seed = forms.IntegerField(min_value=0, required=False)
    target_power = forms.FloatField(
        min_value=0.05, max_value=0.999, required=False, help_text="Also find the repetitions reaching this power."
    )

    @classmethod
    def initial_for(cls, study: Study) -> dict:
        return {
            "systems": study.systems.count(),
            "vignettes": study.vignettes.count(),
            "repetitions": study.repetitions,
            "vignettes_per_participant": study.vignettes_per_participant,
            "gap": 0.4,
            "spacing": "even",
            "alpha": 0.05,
            "questions": max(study.questions.count(), 1),
            "simulations": 2000,
            "seed": 1,
            "target_power": 0.8,
        }


class CompareForm(forms.Form):
    compare = forms.ModelChoiceField(
        queryset=Study.objects.none(), to_field_name="slug", required=False, label="Compare with"
    )

    def __init__(self, *args, study: Study, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["compare"].queryset = Study.objects.exclude(pk=study.pk).order_by("name")
        # Names may repeat (a pilot, a re-import under a new slug): the slug tells them apart.
        self.fields["compare"].label_from_instance = lambda other: f"{other.name} ({other.slug})"
