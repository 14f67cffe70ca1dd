app_name = "llm_collect"

urlpatterns: list = []
