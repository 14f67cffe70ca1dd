from django.urls import path

from . import views

app_name = "surveys"

urlpatterns = [
    path("healthz", views.healthz, name="healthz"),
    path("", views.home, name="home"),
]
