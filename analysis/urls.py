app_name = "analysis"

urlpatterns: list = []
