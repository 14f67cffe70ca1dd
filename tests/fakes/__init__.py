"""Real HTTP servers on 127.0.0.1 that speak external providers' wire formats, for tests."""
