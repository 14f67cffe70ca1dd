from django.urls import path

from . import api, views
from .views import answering, judging

app_name = "surveys"

urlpatterns = [
    path("healthz", views.healthz, name="healthz"),
    path("", views.home, name="home"),
    # The judging survey (participants from Prolific; staff without parameters preview).
    path("s/<slug:slug>/", judging.entry, name="judging-entry"),
    path("s/<slug:slug>/consent/", judging.consent, name="judging-consent"),
    path("s/<slug:slug>/about-you/", judging.about_you, name="judging-about-you"),
    path("s/<slug:slug>/pair/<int:position>/", judging.pair, name="judging-pair"),
    path("s/<slug:slug>/check/", judging.check, name="judging-check"),
    path("s/<slug:slug>/done/", judging.done, name="judging-done"),
    # The answer-writing survey (lay respondents from Prolific, invited experts).
    path("r/<slug:slug>/preview/", answering.preview, name="answering-preview"),
    path("r/<slug:slug>/", answering.entry, name="answering-entry"),
    path("r/<slug:slug>/invite/<str:token>/", answering.invitation_entry, name="answering-invitation"),
    path("r/<slug:slug>/consent/", answering.consent, name="answering-consent"),
    path("r/<slug:slug>/write/<int:position>/", answering.write, name="answering-write"),
    path("r/<slug:slug>/done/", answering.done, name="answering-done"),
    # Prolific's webhook (signed, no session).
    path("prolific/webhook/", api.ProlificWebhook.as_view(), name="prolific_webhook"),
]
