from django.urls import path

from . import api, views
from .views import answering, judging

app_name = "surveys"

# Each flow keeps its own routes beside its views; this file only gathers them.
urlpatterns = [
    path("healthz", views.healthz, name="healthz"),
    path("", views.home, name="home"),
    *judging.urlpatterns,
    *answering.urlpatterns,
    *api.urlpatterns,
]
