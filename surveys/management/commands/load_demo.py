import secrets

from django.core.management.base import BaseCommand

from surveys.demo import load_demo


class Command(BaseCommand):
    help = "Load the demo study and create the demo researcher login (for `make run`)."

    def add_arguments(self, parser):
        parser.add_argument("--password", default="moraljudge-demo")

    def handle(self, *args, password: str, **options):
        study, username = load_demo(password=password)
        # Prolific ids are 24 hexadecimal characters; a fresh person each time the link is printed.
        person, session = secrets.token_hex(12), secrets.token_hex(12)
        self.stdout.write(
            f"Demo study '{study.slug}' is {study.status}.\n"
            f"Researcher login: http://127.0.0.1:8000/admin/  user '{username}'  password '{password}'\n"
            f"Participant link: http://127.0.0.1:8000/s/{study.slug}/"
            f"?PROLIFIC_PID={person}&STUDY_ID={'d' * 24}&SESSION_ID={session}"
        )
