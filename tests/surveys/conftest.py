"""Fixtures shared by the surveys tests."""

import pytest

from tests.fakes.prolific_server import FakeProlific


@pytest.fixture
def prolific(settings):
    """A fake Prolific API on a real local port, with the settings pointing at it."""
    with FakeProlific() as server:
        settings.PROLIFIC_API_URL = server.url
        settings.PROLIFIC_API_TOKEN = server.token
        yield server
