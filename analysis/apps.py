from django.apps import AppConfig

from surveys.services.design_warnings import provide_design_check


class AnalysisConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "analysis"
    verbose_name = "Analysis"

    def ready(self) -> None:
        # The readiness line (surveys) warns about the design through a hook: surveys never imports analysis.
        provide_design_check("analysis.services.design_warnings.design_check")
