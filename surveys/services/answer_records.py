"""Answers written and chosen: create an answer (its features checked by answer_shape.py), replace its
features, and select the one answer judges see for a system × vignette."""

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from ..models import Answer, Feature, Study, System, Vignette
from .answer_shape import FeatureIn, feature_errors

SAME_STUDY = (
    "The system and the vignette belong to different studies: an answer's system and vignette must be one study's."
)


def check_same_study(*, system: System, vignette: Vignette) -> None:
    """An answer's system and vignette belong to one study (every writer asks; the database guards it too)."""
    if system.study_id != vignette.study_id:
        raise ValidationError(SAME_STUDY)


@transaction.atomic
def create_answer(
    *,
    system: System,
    vignette: Vignette,
    features: list[FeatureIn],
    action: str,
    additional_information: str = "",
    sample: int | None = None,
    raw_text: str = "",
    origin: str = Answer.Origin.ADMIN,
    selected: bool = False,
) -> Answer:
    check_same_study(system=system, vignette=vignette)
    errors = feature_errors(features)
    if errors:
        raise ValidationError(errors)
    if sample is None:
        sample = next_sample_number(system=system, vignette=vignette)
    answer = Answer.objects.create(
        system=system,
        vignette=vignette,
        sample=sample,
        action=action,
        additional_information=additional_information,
        raw_text=raw_text,
        origin=origin,
    )
    replace_features(answer=answer, features=features)
    if selected:
        select_answer(answer=answer)
    return answer


def next_sample_number(*, system: System, vignette: Vignette) -> int:
    last = Answer.objects.filter(system=system, vignette=vignette).order_by("-sample").first()
    return last.sample + 1 if last else 1


def replace_features(*, answer: Answer, features: list[FeatureIn]) -> None:
    errors = feature_errors(features)
    if errors:
        raise ValidationError(errors)
    with transaction.atomic():
        answer.features.all().delete()
        Feature.objects.bulk_create(
            Feature(answer=answer, position=index, feature=item.feature, weight=item.weight, reason=item.reason)
            for index, item in enumerate(features, start=1)
        )


LOW_AUTHENTICITY = (
    "This answer's authenticity is rated low (most of it was pasted or not typed; see docs/authenticity.md): "
    "review it, then confirm that you select it anyway. The confirmation is recorded."
)


@transaction.atomic
def select_answer(*, answer: Answer, user=None, confirm_low_authenticity: bool = False) -> Answer:
    """Make this the one answer judges see for its system × vignette.

    An answer rated low authenticity is selected only with the researcher's confirmation, recorded on it.
    """
    study = answer.vignette.study
    if study.status != Study.Status.DRAFT:
        raise ValidationError(
            f"Study '{study.slug}' is {study.status}: the answers judges see cannot change once it has gone live."
        )
    fields = ["selected", "selected_by", "selected_at"]
    if answer.authenticity == Answer.Authenticity.LOW:
        if not confirm_low_authenticity:
            raise ValidationError(LOW_AUTHENTICITY)
        answer.low_authenticity_confirmed_by = user
        answer.low_authenticity_confirmed_at = timezone.now()
        fields += ["low_authenticity_confirmed_by", "low_authenticity_confirmed_at"]
    Answer.objects.filter(system=answer.system_id, vignette=answer.vignette_id, selected=True).exclude(
        pk=answer.pk
    ).update(selected=False, selected_by=None, selected_at=None)
    answer.selected = True
    answer.selected_by = user
    answer.selected_at = timezone.now()
    answer.save(update_fields=fields)
    return answer
