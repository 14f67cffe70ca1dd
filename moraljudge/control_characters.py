"""Refuse a link whose query string carries a control character (NUL and the like) before any view reads it.

PostgreSQL stores no NUL in text, so a NUL in PROLIFIC_PID (or an admin search) reached the database and answered
500. No Prolific id, slug or search term holds a control character: such a request is answered 400, saying why,
before a session, a rate limit or a query sees it. Tab, newline and carriage return stay allowed (a pasted search).
"""

import re

from django.http import HttpResponseBadRequest

CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
MESSAGE = (
    "This link carries a control character (such as NUL) that no link from Prolific or MoralJudge holds: "
    "check the link you followed. Nothing was recorded."
)


class RefuseControlCharacters:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if any(CONTROL.search(key) or any(CONTROL.search(v) for v in values) for key, values in request.GET.lists()):
            return HttpResponseBadRequest(MESSAGE, content_type="text/plain; charset=utf-8")
        return self.get_response(request)
