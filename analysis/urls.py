from django.urls import path

from . import api, views

app_name = "analysis"

urlpatterns = [
    # Researcher dashboard (staff)
    path("dashboard/", views.study_list, name="study-list"),
    path("dashboard/<slug:slug>/", views.study_dashboard, name="study"),
    path("dashboard/<slug:slug>/refit/", views.refit, name="refit"),
    path("dashboard/<slug:slug>/compared-with/<slug:other>/", views.study_comparison, name="study-comparison"),
    path("dashboard/<slug:slug>/power/", views.power_page, name="power"),
    path("dashboard/<slug:slug>/plots/<slug:question>.<str:fmt>", views.plot, name="plot"),
    path("dashboard/<slug:slug>/plots/<slug:question>/sets.<str:fmt>", views.set_plot, name="set-plot"),
    path("dashboard/<slug:slug>/exports/<str:name>", views.export, name="export"),
    # REST API (token or session, staff)
    path("api/studies/", api.study_list, name="api-study-list"),
    path("api/studies/<slug:slug>/", api.study_detail, name="api-study-detail"),
    path("api/studies/<slug:slug>/progress/", api.study_progress_view, name="api-study-progress"),
    path("api/studies/<slug:slug>/results/", api.latest_results, name="api-study-results"),
    path("api/studies/<slug:slug>/refit/", api.refit, name="api-study-refit"),
    path("api/studies/<slug:slug>/power/", api.power, name="api-study-power"),
    path("api/studies/<slug:slug>/compared-with/<slug:other>/", api.study_comparison, name="api-study-comparison"),
    path("api/studies/<slug:slug>/exports/<str:name>", api.export, name="api-study-export"),
]
