"""Static file storages that work out each file's URL once per process.

Every page names the same few files ({% static %} in the base template); the URL of a name cannot change
while a process runs (the manifest is read at start), yet working it out (hashed name, quoting, joining)
cost more than a participant page's other tags together.
"""

from django.contrib.staticfiles.storage import StaticFilesStorage
from whitenoise.storage import CompressedManifestStaticFilesStorage

MAX_REMEMBERED = 1000  # the templates name a few dozen files; a bound in case a name comes from elsewhere


class RememberedUrls(StaticFilesStorage):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._urls: dict[str, str] = {}

    def url(self, name, force=False):
        if force:  # the manifest's storage only: the hashed name even in DEBUG, asked for by collectstatic
            return super().url(name, force)  # type: ignore[call-arg]
        found = self._urls.get(name)
        if found is None:
            found = super().url(name)
            if len(self._urls) < MAX_REMEMBERED:
                self._urls[name] = found
        return found


class StaticFiles(RememberedUrls):
    """Development and tests: the files straight from static/."""


class HashedStaticFiles(RememberedUrls, CompressedManifestStaticFilesStorage):
    """Production: hashed, compressed names from the manifest `collectstatic` wrote."""
