"""The demo study `make run` loads: the project's own writing, four systems on four vignettes."""

from pathlib import Path

from django.contrib.auth import get_user_model
from django.db import transaction

from ..models import Study
from ..study_files import import_study, parse_study_file

DEMO_FILE = Path(__file__).with_name("demo.study.json")
DEMO_USERNAME = "researcher"
# Study files carry no Prolific settings; the demo's codes show each outcome's redirect.
DEMO_CODES = {
    "completion_code": "DEMOCOMPLETE",
    "failed_attention_code": "DEMOATTENTION",
    "no_consent_code": "DEMONOCONSENT",
    "screened_out_code": "DEMOFULL",
}


@transaction.atomic
def load_demo(*, password: str) -> tuple[Study, str]:
    """Import the demo study unless it is there already, and (re)set the demo researcher login."""
    data = parse_study_file(DEMO_FILE.read_text(encoding="utf-8"))
    study = Study.objects.filter(slug=data["slug"]).first()
    if study is None:
        study = import_study(data)
        Study.objects.filter(pk=study.pk).update(**DEMO_CODES)
        study.refresh_from_db()
    user, _ = get_user_model().objects.get_or_create(username=DEMO_USERNAME, defaults={"is_staff": True})
    user.is_staff = True
    user.is_superuser = True
    user.set_password(password)
    user.save()
    return study, DEMO_USERNAME
