"""The judging survey's pages: Prolific entry, consent, demographics, pairs, attention check, completion."""

urlpatterns: list = []
