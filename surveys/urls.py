from django.urls import path

from . import api, views
from .views import answering, judging, preview
from .views.language import in_study_language
from .views.team_join import TeamJoinView

app_name = "surveys"

urlpatterns = [
    path("healthz", views.healthz, name="healthz"),
    path("", views.home, name="home"),
    # Participant pages are shown in the study's language (views/language.py).
    # The judging survey (participants from Prolific; staff without parameters preview).
    path("s/<slug:slug>/", in_study_language(judging.entry), name="judging-entry"),
    path("s/<slug:slug>/consent/", in_study_language(judging.consent), name="judging-consent"),
    path("s/<slug:slug>/about-you/", in_study_language(judging.about_you), name="judging-about-you"),
    path("s/<slug:slug>/pair/<int:position>/", in_study_language(judging.pair), name="judging-pair"),
    path("s/<slug:slug>/check/", in_study_language(judging.check), name="judging-check"),
    path("s/<slug:slug>/done/", in_study_language(judging.done), name="judging-done"),
    # A researcher's preview of a study before it is live (nothing recorded; the place is in the URL).
    path("s/<slug:slug>/preview/", preview.start, name="preview"),
    path("s/<slug:slug>/preview/<uuid:snapshot>/", preview.languages, name="preview-languages"),
    path("s/<slug:slug>/preview/<uuid:snapshot>/<str:language>/<str:step>/", preview.page, name="preview-page"),
    # The answer-writing survey (lay respondents from Prolific, invited experts).
    path("r/<slug:slug>/preview/", in_study_language(answering.preview), name="answering-preview"),
    path("r/<slug:slug>/", in_study_language(answering.entry), name="answering-entry"),
    path(
        "r/<slug:slug>/invite/<str:token>/", in_study_language(answering.invitation_entry), name="answering-invitation"
    ),
    path("r/<slug:slug>/consent/", in_study_language(answering.consent), name="answering-consent"),
    path("r/<slug:slug>/write/<int:position>/", in_study_language(answering.write), name="answering-write"),
    path("r/<slug:slug>/done/", in_study_language(answering.done), name="answering-done"),
    # A colleague invited onto a study's team chooses their first password (no session yet).
    path("team/join/<uidb64>/<token>/", TeamJoinView.as_view(), name="team-join"),
    # Prolific's webhook (signed, no session).
    path("prolific/webhook/", api.ProlificWebhook.as_view(), name="prolific_webhook"),
]
