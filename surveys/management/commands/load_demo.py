import secrets

from django.conf import settings
from django.core.management.base import BaseCommand

from surveys.demo import load_demo


class Command(BaseCommand):
    help = (
        "Load the demo study (for `make run`). With DEBUG on, or --demo-login on a demo server, also create "
        "the demo researcher login; a production server never gets a superuser with a published password."
    )

    def add_arguments(self, parser):
        parser.add_argument("--password", default="moraljudge-demo")
        parser.add_argument(
            "--demo-login", action="store_true", help="create the demo login even with DEBUG off (a demo server)"
        )
        parser.add_argument(
            "--base-url", default="http://127.0.0.1:8000", help="where the server answers, for the printed links"
        )

    def handle(self, *args, password: str, demo_login: bool, base_url: str, **options):
        with_login = settings.DEBUG or demo_login
        study, username = load_demo(password=password if with_login else None)
        base_url = base_url.rstrip("/")
        # Prolific ids are 24 hexadecimal characters; a fresh person each time the link is printed.
        person, session = secrets.token_hex(12), secrets.token_hex(12)
        self.stdout.write(f"Demo study '{study.slug}' is {study.status}.")
        if with_login:
            self.stdout.write(f"Researcher login: {base_url}/admin/  user '{username}'  password '{password}'")
        else:
            self.stdout.write(
                "No demo login was made (DEBUG is off): create your own with `manage.py createsuperuser`, "
                "or pass --demo-login on a server that is only a demo."
            )
        self.stdout.write(
            f"Participant link: {base_url}/s/{study.slug}/"
            f"?PROLIFIC_PID={person}&STUDY_ID={'d' * 24}&SESSION_ID={session}"
        )
