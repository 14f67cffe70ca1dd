"""manage.py judge_with_llm SLUG --judges gpt-4o,claude-3-7-sonnet [--samples N] [--orders both|one]"""

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from llm_collect.calls import BrokerUnavailable
from surveys.models import Study

from ...models import JudgingRun
from ...services.runs import judges_from_keys, start_judging_run


class Command(BaseCommand):
    help = "Judge every cell of a study with LLM judges (each cell in both display orders by default)."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--judges", required=True, help="Comma-separated judge model keys (see the admin).")
        parser.add_argument("--samples", type=int, default=1)
        parser.add_argument("--orders", choices=JudgingRun.Orders.values, default=JudgingRun.Orders.BOTH)
        parser.add_argument("--retry-failed", action="store_true", help="Ask failed and flagged items again.")

    def handle(self, *args, slug, judges, samples, orders, retry_failed, **options):
        study = Study.objects.filter(slug=slug).first()
        if study is None:
            raise CommandError(f"No study '{slug}'.")
        keys = [key.strip() for key in judges.split(",") if key.strip()]
        try:
            run = start_judging_run(
                study=study,
                judges=judges_from_keys(study=study, keys=keys),
                samples=samples,
                orders=orders,
                retry_failed=retry_failed,
            )
        except ValidationError as exc:
            raise CommandError("; ".join(exc.messages)) from exc
        except BrokerUnavailable as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(
            f"Judging run {run.pk}: {run.planned} calls queued, {run.already_present} judged before (not asked again)."
        )
