"""Participant pages (function views + forms) and the two public utility pages."""

from django.db import connection
from django.http import HttpResponse
from django.shortcuts import render

from ..models import Study


def healthz(request):
    """For load balancers and compose: the app answers and reaches its database."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return HttpResponse("ok", content_type="text/plain")


def home(request):
    return render(request, "surveys/home.html", {"studies": Study.objects.filter(status=Study.Status.LIVE)})
