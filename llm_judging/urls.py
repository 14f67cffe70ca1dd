from django.urls import path

from . import views

app_name = "llm_judging"

urlpatterns = [
    path("dashboard/<slug:slug>/llm-judges/", views.study_judges, name="study"),
    path("dashboard/<slug:slug>/llm-judges/exports/<str:name>", views.export, name="export"),
    path(
        "dashboard/<slug:slug>/llm-judges/plots/<slug:kind>/<str:judge>/<slug:question>.<str:fmt>",
        views.plot,
        name="plot",
    ),
]
