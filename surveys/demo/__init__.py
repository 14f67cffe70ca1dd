"""The demo study `make run` loads: the project's own writing, four systems on four vignettes."""

from pathlib import Path

from django.contrib.auth import get_user_model
from django.db import transaction

from ..models import Study
from ..services.study_files import import_study, parse_study_file

DEMO_FILE = Path(__file__).with_name("demo.study.json")
DEMO_USERNAME = "researcher"


@transaction.atomic
def load_demo(*, password: str | None) -> tuple[Study, str | None]:
    """Import the demo study unless it is there already; given a password, (re)set the demo researcher login."""
    data = parse_study_file(DEMO_FILE.read_text(encoding="utf-8"))
    study = Study.objects.filter(slug=data["slug"]).first() or import_study(data)
    if password is None:
        return study, None
    user, _ = get_user_model().objects.get_or_create(username=DEMO_USERNAME, defaults={"is_staff": True})
    user.is_staff = True
    user.is_superuser = True
    user.set_password(password)
    user.save()
    return study, DEMO_USERNAME
