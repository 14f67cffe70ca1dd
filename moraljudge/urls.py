from django.conf import settings
from django.contrib import admin
from django.contrib.admin.views.decorators import staff_member_required
from django.urls import include, path
from django.views.static import serve
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # The docs page is read in a browser: an anonymous visitor goes to the login page, as on the dashboard.
    path("api/docs/", staff_member_required(SpectacularSwaggerView.as_view(url_name="api-schema")), name="api-docs"),
    # Browsers ask for /favicon.ico whatever a page links: the one small file, straight from static/.
    path("favicon.ico", serve, {"path": "favicon.ico", "document_root": settings.BASE_DIR / "static"}, name="favicon"),
    path("", include("analysis.urls")),
    path("", include("llm_judging.urls")),
    path("", include("surveys.urls")),
]
