"""The researcher's admin: studies with their parts inline, answers side by side, status changes.

Django's autodiscovery imports this package; importing each module registers its models.
"""

from django.contrib import admin

from . import answers, audit, participants, respondents, study  # noqa: F401  (registers the models)

# The admin's "View site" link leads researchers to their results.
admin.site.site_header = "MoralJudge administration"
admin.site.site_title = "MoralJudge"
admin.site.site_url = "/dashboard/"
