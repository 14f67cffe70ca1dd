"""Print each model's self-similarity: `manage.py self_similarity SLUG [--embeddings]`."""

from django.core.management.base import BaseCommand, CommandError

from llm_collect.similarity import self_similarity
from surveys.models import Study


class Command(BaseCommand):
    help = "Mean pairwise cosine similarity of each system's samples per vignette, averaged over vignettes."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--embeddings", action="store_true", help="Also the sentence-embedding measure.")

    def handle(self, *args, slug, embeddings, **options):
        study = Study.objects.filter(slug=slug).first()
        if study is None:
            raise CommandError(f"No study with slug '{slug}'.")
        tfidf = self_similarity(study=study, measure="tfidf")
        if not tfidf:
            self.stdout.write("No system has two or more samples of any vignette yet.")
            return
        embedded = self_similarity(study=study, measure="embedding") if embeddings else {}
        if embeddings and not embedded:
            self.stderr.write("The embedding measure needs requirements-embeddings.txt installed; showing TF-IDF.")
        header = "system\ttfidf" + ("\tembedding" if embedded else "")
        self.stdout.write(header)
        for key, value in tfidf.items():
            line = f"{key}\t{value:.3f}"
            if embedded:
                line += f"\t{embedded.get(key, float('nan')):.3f}"
            self.stdout.write(line)
