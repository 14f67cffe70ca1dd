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
    answer_sd = forms.FloatField(
        min_value=0.0,
        max_value=3.0,
        label="Answer-level SD (tau)",
        help_text="How much an answer's quality varies beyond its system's ability (log-odds). An assumption until "
        "this study has been refitted.",
    )
    order_effect = forms.FloatField(
        min_value=-3.0, max_value=3.0, label="Order effect", help_text="Log-odds for the answer shown first."
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
        help_text="Uses its measured correlation with the human picks (rho, per pick) and the human agreement below.",
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
        help_text=f"Assumed {DEFAULT_HUMAN_AGREEMENT}: no human has judged this study yet; replace it with your humans'.",
    )
    llm_cells = forms.IntegerField(
        min_value=1,
        max_value=1_000_000,
        required=False,
        label="Cells the LLM judges",
        help_text="The humans' cells included. Blank: the design's cells, which saves nothing (the judge's picks on "
        "the humans' cells cancel); only cells no human judges help.",
    )

    def __init__(
        self, *args, judges=(), measured_human_agreement: float | None = None, answer_sd_source: str = "", **kwargs
    ):
        super().__init__(*args, **kwargs)
        if answer_sd_source:
            self.fields["answer_sd"].help_text = answer_sd_source
        if measured_human_agreement is not None:
            self.fields["human_agreement"].help_text = measured_help(measured_human_agreement)
        self.measured = {judge.key: judge for judge in judges}
        judge_field = self.fields["judge"]
        assert isinstance(judge_field, forms.ChoiceField)
        judge_field.choices = [("", "none")] + [(judge.key, judge.label()) for judge in judges]

    def clean(self):
        data = super().clean()
        assert data is not None  # Form.clean returns the cleaned data
        judge = self.measured.get(data.get("judge") or "")
        if judge is not None and data.get("judge_agreement") is not None:
            raise ValidationError("Pick a measured judge or type an agreement, not both.")
        if judge is not None and judge.rho is None:
            self.add_error("judge", "Too few human judgments on this judge's cells to measure its correlation.")
        return data

    def design(self) -> dict:
        """The human design, as plan_power_page takes it."""
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
        human = data.get("human_agreement")
        plan["human_agreement"] = DEFAULT_HUMAN_AGREEMENT if human is None else human
        if judge is not None:
            return plan | {"rho": judge.rho}
        return plan | {"judge_agreement": data["judge_agreement"]}

    @classmethod
    def initial_for(cls, study: Study, *, human_agreement: float | None = None, answer_sd: float = 0.4) -> dict:
        return {
            "systems": study.systems.count(),
            "vignettes": study.vignettes.count(),
            "repetitions": study.repetitions,
            "vignettes_per_participant": study.vignettes_per_participant,
            "gap": 0.4,
            "spacing": "even",
            "answer_sd": answer_sd,
            "order_effect": 0.0,
            "alpha": 0.05,
            "questions": max(study.questions.count(), 1),
            "simulations": 2000,
            "seed": 1,
            "target_power": 0.8,
            "human_agreement": round(human_agreement, 3) if human_agreement is not None else DEFAULT_HUMAN_AGREEMENT,
        }


def measured_help(human_agreement: float) -> str:
    """Where the prefilled human agreement came from and what it implies for any judge."""
    source = (
        f"Prefilled with {human_agreement:.2f}, measured on this study: each human pick against the majority of the "
        "other humans on its cell."
    )
    if human_agreement <= 0.5:
        return (
            f"{source} At 0.5 the humans on a cell agree as coin flips would: no cell has a side a judge could "
            f"predict, so no judge saves anything. {DEFAULT_HUMAN_AGREEMENT} is the planning assumption if you expect "
            "your next humans to agree more."
        )
    return f"{source} The higher it is, the more of a human pick a judge can predict."


class StudyChoiceField(forms.ModelChoiceField):
    def label_from_instance(self, obj) -> str:
        # Names may repeat (a pilot, a re-import under a new slug): the slug tells them apart.
        return f"{obj.name} ({obj.slug})"


class CompareForm(forms.Form):
    compare = StudyChoiceField(
        queryset=Study.objects.none(), to_field_name="slug", required=False, label="Compare with"
    )

    def __init__(self, *args, study: Study, among: models.QuerySet[Study], **kwargs):
        super().__init__(*args, **kwargs)
        compare = self.fields["compare"]
        assert isinstance(compare, forms.ModelChoiceField)
        compare.queryset = among.exclude(pk=study.pk).order_by("name")  # the user's studies
