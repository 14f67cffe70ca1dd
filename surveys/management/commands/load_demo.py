from django.core.management.base import BaseCommand

from surveys.demo import load_demo


class Command(BaseCommand):
    help = "Load the demo study and create the demo researcher login (for `make run`)."

    def add_arguments(self, parser):
        parser.add_argument("--password", default="moraljudge-demo")

    def handle(self, *args, password: str, **options):
        study, username = load_demo(password=password)
        self.stdout.write(
            f"Demo study '{study.slug}' is {study.status}.\n"
            f"Researcher login: http://127.0.0.1:8000/admin/  user '{username}'  password '{password}'\n"
            f"Participant link: http://127.0.0.1:8000/s/{study.slug}/"
            "?PROLIFIC_PID=demo-participant-0001&STUDY_ID=demo-study&SESSION_ID=demo-session-0001"
        )
