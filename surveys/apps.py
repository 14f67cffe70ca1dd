from django.apps import AppConfig, apps
from django.db.models.signals import post_migrate


class SurveysConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "surveys"
    verbose_name = "Studies and surveys"

    def ready(self):
        post_migrate.connect(ship_role_groups, sender=self, dispatch_uid="surveys.ship_role_groups")


def ship_role_groups(sender, using="default", verbosity=1, **kwargs):
    """After every migrate: the team roles' permission groups (surveys/services/role_groups.py)."""
    from django.contrib.auth.management import create_permissions

    from .services.role_groups import STUDY_APPS, ensure_role_groups

    for label in STUDY_APPS:  # apps after surveys in INSTALLED_APPS get their permissions later otherwise
        create_permissions(apps.get_app_config(label), verbosity=0, using=using)
    ensure_role_groups()
