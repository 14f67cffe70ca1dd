"""Researcher forms: the power analysis and the second study to compare with."""

from django import forms
from django.core.exceptions import ValidationError
from django.db import models

from analysis.power import SPACINGS
from analysis.power.judge import DEFAULT_HUMAN_AGREEMENT
from surveys.models import Study

JUDGE_FIELDS = ("judge", "judge_agreement", "human_agreement", "llm_cells")

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
    # With an LLM judge (PPI++): give a measured judge or an agreement; blank both for humans alone.
    judge = forms.ChoiceField(
        required=False,
        label="LLM judge measured on this study",
        help_text="Uses its measured correlation with the human picks (rho).",
    )
    judge_agreement = forms.FloatField(
        min_value=0.0,
        max_value=1.0,
        required=False,
        label="Or: judge agreement with the human majority",
        help_text="0.5 is chance (no saving).",
    )
    human_agreement = forms.FloatField(
        min_value=0.5,
        max_value=1.0,
        required=False,
        label="Human agreement with their cell's majority",
        help_text=f"With a typed agreement only; {DEFAULT_HUMAN_AGREEMENT} is an assumption until humans have judged.",
    )
    llm_cells = forms.IntegerField(
        min_value=1,
        max_value=1_000_000,
        required=False,
        label="Cells the LLM judges",
        help_text="Blank: the design's cells. The saving grows when the judge covers many more cells than humans.",
    )

    def __init__(self, *args, judges=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.measured = {judge.key: judge for judge in judges}
        self.fields["judge"].choices = [("", "none")] + [(judge.key, judge.label()) for judge in judges]

    def clean(self):
        data = super().clean()
        judge = self.measured.get(data.get("judge") or "")
        if judge is not None and data.get("judge_agreement") is not None:
            raise ValidationError("Pick a measured judge or type an agreement, not both.")
        if judge is not None and judge.rho is None:
            self.add_error("judge", "Too few human judgments on this judge's cells to measure its correlation.")
        return data

    def design(self) -> dict:
        """The human design, as plan_power takes it."""
        return {key: value for key, value in self.cleaned_data.items() if key not in JUDGE_FIELDS}

    def judge_plan(self) -> dict | None:
        """judge_assisted_power's arguments, or None when no judge was given."""
        data, judge = self.cleaned_data, self.measured.get(self.cleaned_data.get("judge") or "")
        if judge is None and data.get("judge_agreement") is None:
            return None
        design = self.design()
        plan = {key: design[key] for key in ("systems", "vignettes", "repetitions", "gap", "spacing", "alpha")}
        plan.update(
            questions=design["questions"],
            simulations=design["simulations"],
            seed=design["seed"],
            vignettes_per_participant=design["vignettes_per_participant"],
            target_power=design["target_power"],
            llm_cells=data.get("llm_cells"),
        )
        if judge is not None:
            return plan | {"rho": judge.rho}
        human = data.get("human_agreement")
        return plan | {
            "judge_agreement": data["judge_agreement"],
            "human_agreement": DEFAULT_HUMAN_AGREEMENT if human is None else human,
        }

    @classmethod
    def initial_for(cls, study: Study, *, human_agreement: float | None = None) -> dict:
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
            "human_agreement": round(human_agreement, 3) if human_agreement is not None else DEFAULT_HUMAN_AGREEMENT,
        }


class CompareForm(forms.Form):
    compare = forms.ModelChoiceField(
        queryset=Study.objects.none(), to_field_name="slug", required=False, label="Compare with"
    )

    def __init__(self, *args, study: Study, among: models.QuerySet[Study], **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["compare"].queryset = among.exclude(pk=study.pk).order_by("name")  # the user's studies
        # Names may repeat (a pilot, a re-import under a new slug): the slug tells them apart.
        self.fields["compare"].label_from_instance = lambda other: f"{other.name} ({other.slug})"
