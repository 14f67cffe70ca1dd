"""The answer-writing survey's pages for lay respondents (Prolific) and invited experts."""

urlpatterns: list = []
