#!/usr/bin/env python
import os
import sys


def main():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "moraljudge.settings")
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    try:
        settings.INSTALLED_APPS  # noqa: B018 (reads the settings now: a configuration error is one line, not a traceback)
    except ImproperlyConfigured as exc:
        sys.exit(f"Configuration error: {exc}")
    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
