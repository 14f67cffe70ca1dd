"""A fake Prolific API v1 on 127.0.0.1: a real HTTP server in a thread, with state.

It speaks the endpoints MoralJudge uses, in Prolific's wire format:
- GET  /api/v1/studies/{id}/submissions/          {"results": [...], "_links": {"next": {"href": ...}}, "meta": {...}}
- GET  /api/v1/submissions/{id}/
- POST /api/v1/submissions/{id}/transition/       APPROVE / REJECT (message >= 100 chars, known category)
- POST /api/v1/submissions/bulk-approve/          {"submission_ids"} or {"study_id", "participant_ids"}
- POST /api/v1/submissions/{id}/request-return/   {"request_return_reasons": [...]}
- POST /api/v1/studies/                            create a draft (UNPUBLISHED), checked like Prolific: required
                                                   fields, completion codes and their actions, reward >= minimum
- GET  /api/v1/studies/{id}/
- PATCH /api/v1/studies/{id}/                      a draft: any field (checked again); published: only
                                                   total_available_places, and only up
- POST /api/v1/studies/{id}/transition/            {"action": "PUBLISH"} from UNPUBLISHED to ACTIVE
- GET  /api/v1/filters/                            the filters studies may use (FILTERS; previous_studies_blocklist's
                                                   choices are this workspace's studies); a study's `filters` are
                                                   checked against it: known filter_id, select filters' selected_values
                                                   among the choices, range filters' selected_range within min..max
- POST /api/v1/submissions/bonus-payments/         set up bonuses: {"study_id", "csv_bonuses": "<pid or submission id>,
                                                   <amount in pounds>\\n..."}, each id one of the study's submissions;
                                                   answers {"id", "study", "amount", "fees", "vat", "total_amount"}
                                                   in pence (floats, as Prolific)
- POST /api/v1/bulk-bonus-payments/{id}/pay/       pays them, and pays again on every further call (Prolific: not
                                                   idempotent): `bonuses_paid` lists each payment made

It checks `Authorization: Token <token>`, records every call, and can be told to answer with an
error (429 with Retry-After, 500, ...) or to hang for a while, for the next N calls. Every change of a
submission's status is kept as the webhook event Prolific would send (`take_status_changes`;
manage.py prolific_sandbox sends them, signed, to the platform).

    with FakeProlific() as prolific:
        prolific.add_submission("sub1", participant_id="pid1", study_id="st1", status="AWAITING REVIEW")
        settings.PROLIFIC_API_URL = prolific.url
"""

from __future__ import annotations

import json
import re
import threading
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

REJECTION_CATEGORIES = {
    "TOO_QUICKLY",
    "TOO_SLOWLY",
    "FAILED_INSTRUCTIONS",
    "INCOMP_LONGITUDINAL",
    "FAILED_CHECK",
    "LOW_EFFORT",
    "MALINGERING",
    "NO_CODE",
    "BAD_CODE",
    "NO_DATA",
    "UNSUPP_DEVICE",
    "OTHER",
}


# The study fields Prolific requires on creation, and the completion-code vocabulary it accepts.
REQUIRED_STUDY_FIELDS = (
    "name",
    "description",
    "external_study_url",
    "prolific_id_option",
    "completion_codes",
    "estimated_completion_time",
    "reward",
    "total_available_places",
)
CODE_TYPES = {
    "COMPLETED",
    "FAILED_ATTENTION_CHECK",
    "FOLLOW_UP_STUDY",
    "GIVE_BONUS",
    "INCOMPATIBLE_DEVICE",
    "NO_CONSENT",
    "OTHER",
    "FIXED_SCREENOUT",
}
CODE_ACTIONS = {
    "AUTOMATICALLY_APPROVE",
    "MANUALLY_REVIEW",
    "REQUEST_RETURN",
    "ADD_TO_PARTICIPANT_GROUP",
    "REMOVE_FROM_PARTICIPANT_GROUP",
}
# Pence or cents per hour below which Prolific refuses a study, by workspace currency.
MINIMUM_HOURLY = {"GBP": 600, "USD": 800}

# GET filters/ as Prolific answers it (a few of its filters; choice ids are Prolific's own, looked up by label).
FILTERS = [
    {
        "filter_id": "approval_rate",
        "title": "Approval Rate",
        "question": "",
        "type": "range",
        "data_type": "integer",
        "min": 0,
        "max": 100,
    },
    {
        "filter_id": "current-country-of-residence",
        "title": "Current Country of Residence",
        "question": "In which country do you currently reside?",
        "type": "select",
        "data_type": "ChoiceID",
        "choices": {"0": "United Kingdom", "1": "United States", "2": "Ireland", "3": "Germany", "4": "Canada",
                    "5": "Australia", "6": "France", "7": "Netherlands"},
    },
    {
        "filter_id": "fluent-languages",
        "title": "Fluent languages",
        "question": "Which of the following languages are you fluent in?",
        "type": "select",
        "data_type": "ChoiceID",
        "choices": {"19": "English", "26": "French", "28": "German", "47": "Spanish", "3": "Arabic"},
    },
    {
        "filter_id": "previous_studies_blocklist",
        "title": "Exclude participants from other studies",
        "question": "",
        "type": "select",
        "data_type": "StudyID",
        "choices": {},  # the workspace's studies, filled in when asked
    },
]  # fmt: skip


@dataclass
class Call:
    method: str
    path: str
    body: object
    authorization: str


@dataclass
class FakeProlific:
    token: str = "test-prolific-token"
    port: int = 0  # 0: any free port (tests); manage.py prolific_sandbox gives a fixed one
    page_size: int = 2
    currency: str = "GBP"  # the workspace's: rewards are checked against its minimum
    submissions: dict = field(default_factory=dict)
    studies: dict = field(default_factory=dict)
    calls: list = field(default_factory=list)
    status_changes: list = field(default_factory=list)  # webhook events not taken yet: (event id, sent at, payload)
    fee_percent: float = 33.33  # Prolific's fee on bonuses in this workspace
    vat_percent: float = 0.0
    bulk_bonuses: dict = field(default_factory=dict)  # set up: id -> {"study", "rows": [(id, pence)], ...}
    bonuses_paid: list = field(default_factory=list)  # (bulk id, participant or submission id, pence), per payment
    _failures: list = field(default_factory=list)
    _hang_seconds: float = 0.0
    _hang_count: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    # -- set-up -------------------------------------------------------------------------------
    def add_submission(self, submission_id: str, *, participant_id: str, study_id: str, status: str) -> dict:
        submission = {
            "id": submission_id,
            "participant_id": participant_id,
            "study_id": study_id,
            "status": status,
            "started_at": "2026-01-01T10:00:00.000000Z",
            "completed_at": None,
            "study_code": "",
            "return_requested": None,
            "rejection": None,
        }
        with self._lock:
            self.submissions[submission_id] = submission
            self._status_changed(submission)
        return submission

    def add_study(self, study_id: str, *, status: str = "UNPUBLISHED", **fields) -> dict:
        study = {"id": study_id, "status": status, "places_taken": 0, "total_available_places": 0, **fields}
        with self._lock:
            self.studies[study_id] = study
        return study

    def set_study(self, study_id: str, **fields) -> None:
        with self._lock:
            self.studies[study_id].update(fields)

    def set_status(self, submission_id: str, status: str) -> None:
        with self._lock:
            self.submissions[submission_id]["status"] = status
            self._status_changed(self.submissions[submission_id])

    def _status_changed(self, submission: dict) -> None:
        """Keep the webhook event Prolific sends when a submission's status changes (the caller holds the lock)."""
        payload = {
            "event_type": "submission.status.change",
            "resource_id": submission["id"],
            "participant_id": submission["participant_id"],
            "status": submission["status"],
        }
        self.status_changes.append((uuid.uuid4().hex, time.time(), payload))

    def take_status_changes(self) -> list[tuple[str, float, dict]]:
        """The status changes since the last call, oldest first: (X-Event-ID, X-Timestamp, event)."""
        with self._lock:
            taken, self.status_changes = self.status_changes, []
        return taken

    def send_status_changes(self, *, url: str, secret: str) -> list[str]:
        """POST each status change to `url` as Prolific sends webhooks, signed with `secret`, oldest first; what
        happened to each. When the platform cannot be reached, the rest are kept to send next time, in order."""
        said: list[str] = []
        events = self.take_status_changes()
        for position, (event_id, sent_at, payload) in enumerate(events):
            try:
                answer = send_webhook(url=url, secret=secret, event_id=event_id, sent_at=sent_at, payload=payload)
            except (urllib.error.URLError, TimeoutError) as exc:
                with self._lock:
                    self.status_changes[:0] = events[position:]  # as Prolific retries
                return [*said, f"Webhooks not delivered ({getattr(exc, 'reason', exc)}): sent again next time."]
            said.append(f"Webhook {payload['resource_id']} {payload['status']}: {answer}")
        return said

    def fail_next(self, status: int, *, times: int = 1, retry_after: str | None = None, path: str = "") -> None:
        """Answer the next `times` calls (whose path contains `path`) with this status and Retry-After."""
        with self._lock:
            self._failures += [(status, retry_after, path)] * times

    def hang_next(self, seconds: float, *, times: int = 1) -> None:
        with self._lock:
            self._hang_seconds, self._hang_count = seconds, times

    def add_missing_submissions(self, rows: list[tuple[str, str, str, str]]) -> int:
        """Add a submission for each (session id, participant id, study id, status) not known yet; how many."""
        with self._lock:
            new = [row for row in rows if row[0] and row[0] not in self.submissions]
        for session_id, participant_id, study_id, status in new:
            self.add_submission(session_id, participant_id=participant_id, study_id=study_id, status=status)
        return len(new)

    def calls_to(self, fragment: str, method: str = "POST") -> list[Call]:
        return [c for c in self.calls if c.method == method and fragment in c.path]

    # -- lifecycle ----------------------------------------------------------------------------
    def __enter__(self) -> FakeProlific:
        fake = self

        class Handler(_Handler):
            server_state = fake

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        assert isinstance(host, str)  # an IPv4 server's address is (host, port)
        return f"http://{host}:{port}/api/v1/"

    # -- request handling (called from the server thread) ---------------------------------------
    def handle(self, method: str, raw_path: str, body: object, authorization: str) -> tuple[int, dict, object]:
        parts = urlsplit(raw_path)
        path, query = parts.path, parse_qs(parts.query)
        with self._lock:
            self.calls.append(Call(method, raw_path, body, authorization))
            hang = self._hang_seconds if self._hang_count > 0 else 0.0
            if self._hang_count > 0:
                self._hang_count -= 1
            failure = next((f for f in self._failures if f[2] in path), None)
            if failure is not None:
                self._failures.remove(failure)
        if hang:
            time.sleep(hang)
        if authorization != f"Token {self.token}":
            return 401, {}, {"error": {"error_code": 140101, "title": "Unauthorized", "detail": "Invalid token."}}
        if failure:
            status, retry_after, _ = failure
            headers = {"Retry-After": retry_after} if retry_after is not None else {}
            title = "Too many requests" if status == 429 else "Server error"
            return status, headers, {"error": {"title": title, "detail": f"Injected failure {status}."}}
        with self._lock:
            return self._route(method, path, query, body)

    def _route(self, method: str, path: str, query: dict, body: object) -> tuple[int, dict, object]:
        if method == "GET" and (m := re.fullmatch(r"/api/v1/studies/([^/]+)/submissions/", path)):
            return self._list(m.group(1), int(query.get("page", ["1"])[0]))
        if method == "GET" and (m := re.fullmatch(r"/api/v1/submissions/([^/]+)/", path)):
            sub = self.submissions.get(m.group(1))
            return (200, {}, _detail_view(sub)) if sub else _not_found()
        if method == "POST" and path == "/api/v1/submissions/bulk-approve/":
            return self._bulk_approve(body)
        if method == "POST" and (m := re.fullmatch(r"/api/v1/submissions/([^/]+)/transition/", path)):
            return self._transition(m.group(1), body)
        if method == "POST" and (m := re.fullmatch(r"/api/v1/submissions/([^/]+)/request-return/", path)):
            return self._request_return(m.group(1), body)
        if method == "POST" and path == "/api/v1/studies/":
            return self._create_study(body)
        if (m := re.fullmatch(r"/api/v1/studies/([^/]+)/", path)) and method in ("GET", "PATCH"):
            study = self.studies.get(m.group(1))
            if study is None:
                return _not_found()
            return (200, {}, dict(study)) if method == "GET" else self._update_study(study, body)
        if method == "POST" and (m := re.fullmatch(r"/api/v1/studies/([^/]+)/transition/", path)):
            return self._transition_study(m.group(1), body)
        if method == "GET" and path == "/api/v1/filters/":
            return 200, {}, {"results": self._filters(), "_links": {"next": {"href": None}}, "meta": {"count": 4}}
        if method == "POST" and path == "/api/v1/submissions/bonus-payments/":
            return self._set_up_bonuses(body)
        if method == "POST" and (m := re.fullmatch(r"/api/v1/bulk-bonus-payments/([^/]+)/pay/", path)):
            return self._pay_bonuses(m.group(1))
        return _not_found()

    # -- filters and bonuses ------------------------------------------------------------------------
    def _filters(self) -> list[dict]:
        filters = json.loads(json.dumps(FILTERS))
        filters[-1]["choices"] = {i: str(s.get("name") or i) for i, s in self.studies.items()}
        return filters

    def _filter_errors(self, filters: object) -> list[str]:
        if not isinstance(filters, list):
            return ["Expected a list of filters."]
        known = {f["filter_id"]: f for f in self._filters()}
        errors = []
        for given in filters:
            spec = known.get(given.get("filter_id")) if isinstance(given, dict) else None
            if spec is None:
                errors.append(f"Unknown filter {given!r}: see GET /api/v1/filters/.")
                continue
            extra = set(given) - {"filter_id", "selected_values", "selected_range", "weightings"}
            if extra:
                errors.append(f"{spec['filter_id']}: unknown fields {sorted(extra)}.")
            elif spec["type"] == "select":
                values = given.get("selected_values")
                if not isinstance(values, list) or not values or "selected_range" in given:
                    errors.append(f"{spec['filter_id']} is a select filter: give a non-empty selected_values.")
                elif any(not isinstance(v, str) or v not in spec["choices"] for v in values):
                    errors.append(f"{spec['filter_id']}: {values!r} are not all among its choice ids.")
            else:
                bounds = given.get("selected_range")
                if not isinstance(bounds, dict) or "selected_values" in given or not set(bounds) <= {"lower", "upper"}:
                    errors.append(f"{spec['filter_id']} is a range filter: give selected_range {{lower, upper}}.")
                    continue
                lower, upper = bounds.get("lower", spec["min"]), bounds.get("upper", spec["max"])
                numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (lower, upper))
                if not numbers or not spec["min"] <= lower <= upper <= spec["max"]:
                    errors.append(f"{spec['filter_id']}: the range must lie within {spec['min']}..{spec['max']}.")
        return errors

    def _set_up_bonuses(self, body: object) -> tuple[int, dict, object]:
        if not isinstance(body, dict) or not isinstance(body.get("csv_bonuses"), str):
            return _bad_request("study_id and csv_bonuses are required.")
        study_id = body.get("study_id")
        if study_id not in self.studies:
            return _bad_request(f"Study {study_id} does not exist.")
        takers = {
            key
            for s in self.submissions.values()
            if s["study_id"] == study_id
            for key in (s["id"], s["participant_id"])
        }
        rows, wrong = [], []
        for line in body["csv_bonuses"].splitlines():
            if not line.strip():
                continue
            who, _, amount = line.partition(",")
            if not re.fullmatch(r"\d+(\.\d{1,2})?", amount.strip()) or float(amount) <= 0:
                return _bad_request(f"Invalid amount in line {line!r}: a decimal such as 1.50.")
            if who.strip() not in takers:
                wrong.append(who.strip())
            rows.append((who.strip(), round(float(amount) * 100)))
        if wrong:
            return _bad_request(f"These ids did not take part in the study: {', '.join(wrong)}.")
        if not rows:
            return _bad_request("csv_bonuses is empty.")
        bulk_id = uuid.uuid4().hex[:24]
        amount = float(sum(pence for _, pence in rows))
        fees = round(amount * self.fee_percent / 100, 2)
        vat = round(fees * self.vat_percent / 100, 2)
        self.bulk_bonuses[bulk_id] = {"study": study_id, "rows": rows, "amount": amount, "fees": fees, "vat": vat}
        answer = {"id": bulk_id, "study": study_id, "amount": amount, "fees": fees, "vat": vat}
        return 201, {}, {**answer, "total_amount": round(amount + fees + vat, 2)}

    def _pay_bonuses(self, bulk_id: str) -> tuple[int, dict, object]:
        bulk = self.bulk_bonuses.get(bulk_id)
        if bulk is None:
            return _not_found()
        self.bonuses_paid += [(bulk_id, who, pence) for who, pence in bulk["rows"]]  # again on every call
        return 202, {}, f"Bulk bonus payment with ID {bulk_id} is being processed asynchronously."

    # -- studies ----------------------------------------------------------------------------------
    def _create_study(self, body: object) -> tuple[int, dict, object]:
        if not isinstance(body, dict):
            return _bad_request("A JSON object is expected.")
        errors = self._study_errors(body, creating=True)
        if errors:
            return _invalid(errors)
        study_id = f"{len(self.studies) + 1:024x}"  # Prolific's ids are 24 hexadecimal characters
        study = {"id": study_id, "status": "UNPUBLISHED", "places_taken": 0, **body}
        self.studies[study_id] = study
        return 201, {}, dict(study)

    def _update_study(self, study: dict, body: object) -> tuple[int, dict, object]:
        if not isinstance(body, dict):
            return _bad_request("A JSON object is expected.")
        if study["status"] != "UNPUBLISHED":
            # Published: only the places may change, and only upwards (internal_name too, unused here).
            others = set(body) - {"total_available_places", "internal_name"}
            if others:
                return _bad_request(
                    f"Cannot update {', '.join(sorted(others))} of a study in status {study['status']}."
                )
            places = body.get("total_available_places", study["total_available_places"])
            if not isinstance(places, int) or places < study["total_available_places"]:
                return _invalid({"total_available_places": ["Places can only be increased."]})
            study.update(body)
            if study["status"] in ("AWAITING REVIEW", "COMPLETED") and places > study["places_taken"]:
                study["status"] = "ACTIVE"  # more places reopen a study that had filled
            return 200, {}, dict(study)
        errors = self._study_errors({**study, **body}, creating=False)
        if errors:
            return _invalid(errors)
        study.update(body)
        return 200, {}, dict(study)

    def _transition_study(self, study_id: str, body: object) -> tuple[int, dict, object]:
        study = self.studies.get(study_id)
        if study is None:
            return _not_found()
        action = body.get("action") if isinstance(body, dict) else None
        if action != "PUBLISH":
            return _bad_request("action must be one of PUBLISH, PAUSE, START, STOP.")
        if study["status"] != "UNPUBLISHED":
            return _bad_request(f"Cannot publish a study in status {study['status']}.")
        study["status"] = "ACTIVE"
        return 200, {}, dict(study)

    def _study_errors(self, study: dict, *, creating: bool) -> dict:
        errors: dict = {}
        for name in REQUIRED_STUDY_FIELDS:
            if study.get(name) in (None, "", []):
                errors[name] = ["This field is required."]
        codes = study.get("completion_codes") or []
        if not isinstance(codes, list):
            codes, errors["completion_codes"] = [], ["Expected a list of completion codes."]
        seen = set()
        for code in codes:
            problem = _code_problem(code)
            if problem is None and code["code"] in seen:
                problem = f"Completion code {code['code']} is used twice; each code must be unique within a study."
            if problem:
                errors.setdefault("completion_codes", []).append(problem)
            else:
                seen.add(code["code"])
        if codes and not any(isinstance(c, dict) and c.get("code_type") == "COMPLETED" for c in codes):
            errors.setdefault("completion_codes", []).append("A completion code of type COMPLETED is required.")
        filter_errors = self._filter_errors(study.get("filters", []))
        if filter_errors:
            errors["filters"] = filter_errors
        for name in ("estimated_completion_time", "reward", "total_available_places"):
            value = study.get(name)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
                errors[name] = ["A positive whole number is required."]
        minutes, reward = study.get("estimated_completion_time"), study.get("reward")
        if not errors.get("reward") and isinstance(minutes, int) and isinstance(reward, int) and minutes > 0:
            minimum = MINIMUM_HOURLY[self.currency]
            if reward * 60 < minimum * minutes:
                errors["reward"] = [
                    f"The reward per hour ({reward * 60 / minutes / 100:.2f} {self.currency}) is below the minimum "
                    f"of {minimum / 100:.2f} {self.currency} per hour."
                ]
        return errors

    def _list(self, study_id: str, page: int) -> tuple[int, dict, object]:
        rows = [s for s in self.submissions.values() if s["study_id"] == study_id]
        start = (page - 1) * self.page_size
        chunk = rows[start : start + self.page_size]
        base = f"{self.url}studies/{study_id}/submissions/"
        nxt = f"{base}?page={page + 1}" if start + self.page_size < len(rows) else None
        return (
            200,
            {},
            {
                "results": [dict(s) for s in chunk],
                "_links": {
                    "self": {"href": f"{base}?page={page}", "title": "Current"},
                    "next": {"href": nxt, "title": "Next"},
                },
                "meta": {"count": len(rows)},
            },
        )

    def _transition(self, submission_id: str, body: object) -> tuple[int, dict, object]:
        sub = self.submissions.get(submission_id)
        if sub is None:
            return _not_found()
        if not isinstance(body, dict) or body.get("action") not in {"APPROVE", "REJECT"}:
            return _bad_request("action must be APPROVE or REJECT.")
        target = "APPROVED" if body["action"] == "APPROVE" else "REJECTED"
        if sub["status"] == target:
            return 200, {}, _detail_view(sub)  # Prolific: the same request twice is ignored
        if sub["status"] != "AWAITING REVIEW":
            return _bad_request(f"Cannot transition a submission in status {sub['status']}.")
        if body["action"] == "REJECT":
            if body.get("rejection_category") not in REJECTION_CATEGORIES:
                return _bad_request("rejection_category is required and must be a known category.")
            if len(body.get("message") or "") < 100:
                return _bad_request("message must be at least 100 characters long.")
            sub["rejection"] = {"category": body["rejection_category"], "message": body["message"]}
        sub["status"] = target
        self._status_changed(sub)
        return 200, {}, _detail_view(sub)

    def _bulk_approve(self, body: object) -> tuple[int, dict, object]:
        if not isinstance(body, dict):
            return _bad_request("A JSON object is expected.")
        if "submission_ids" in body:
            targets = [self.submissions.get(i) for i in body["submission_ids"]]
        elif "study_id" in body and "participant_ids" in body:
            targets = [
                s
                for s in self.submissions.values()
                if s["study_id"] == body["study_id"] and s["participant_id"] in body["participant_ids"]
            ]
        else:
            return _bad_request("Provide submission_ids, or study_id and participant_ids.")
        found = [t for t in targets if t is not None]
        if len(found) < len(targets):
            return _bad_request("Unknown submission id.")
        for sub in found:
            if sub["status"] == "AWAITING REVIEW":
                sub["status"] = "APPROVED"
                self._status_changed(sub)
        return 200, {}, "The request to bulk approve has been made successfully."

    def _request_return(self, submission_id: str, body: object) -> tuple[int, dict, object]:
        sub = self.submissions.get(submission_id)
        if sub is None:
            return _not_found()
        reasons = body.get("request_return_reasons") if isinstance(body, dict) else None
        if not reasons or not all(isinstance(r, str) for r in reasons):
            return _bad_request("request_return_reasons must be a list of strings.")
        sub["return_requested"] = "2026-01-01T12:00:00Z"
        sub["return_reasons"] = reasons
        return (
            200,
            {},
            {k: sub[k] for k in ("id", "status", "return_requested")} | {"participant": sub["participant_id"]},
        )


def send_webhook(*, url: str, secret: str, event_id: str, sent_at: float, payload: dict) -> str:
    """POST one event signed as Prolific signs it; what the platform answered ("recorded", or the refusal)."""
    from surveys.prolific.webhooks import sign_webhook  # the scheme the platform checks

    body = json.dumps(payload).encode()
    timestamp = str(int(time.time()))
    headers = {
        "Content-Type": "application/json",
        "X-Prolific-Request-Timestamp": timestamp,
        "X-Prolific-Request-Signature": sign_webhook(body=body, timestamp=timestamp, secret=secret),
        "X-Event-ID": event_id,
        "X-Timestamp": f"{sent_at:.6f}",  # when the status changed: the platform applies events in this order
    }
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read() or b"{}").get("detail", str(response.status))
    except urllib.error.HTTPError as exc:  # refused (a wrong secret, say): sending it again would not help
        return f"refused with {exc.code}: {exc.read()[:200].decode(errors='replace')}"


def _detail_view(sub: dict) -> dict:
    view = {k: v for k, v in sub.items() if k not in {"rejection", "return_reasons"}}
    view["participant"] = view.pop("participant_id")
    return view


def _code_problem(code: object) -> str | None:
    if not isinstance(code, dict) or not code.get("code"):
        return "Each completion code needs a code."
    if code.get("code_type") not in CODE_TYPES:
        return f"Unknown code_type {code.get('code_type')!r}."
    actions = code.get("actions")
    if not isinstance(actions, list) or not actions:
        return f"Completion code {code['code']} needs at least one action."
    names = [a.get("action") if isinstance(a, dict) else None for a in actions]
    if any(name not in CODE_ACTIONS for name in names):
        return f"Unknown action in {names!r}."
    if {"AUTOMATICALLY_APPROVE", "MANUALLY_REVIEW"} <= set(names):
        return "AUTOMATICALLY_APPROVE and MANUALLY_REVIEW cannot be used together."
    return None


def _invalid(errors: dict) -> tuple[int, dict, object]:
    """Prolific's validation error: the fields and their messages under error.detail."""
    return (
        400,
        {},
        {
            "error": {
                "status": 400,
                "error_code": 140001,
                "title": "Invalid request",
                "detail": errors,
                "additional_information": "/api/v1/errors/140001",
            }
        },
    )


def _not_found() -> tuple[int, dict, object]:
    return 404, {}, {"error": {"error_code": 140404, "title": "Not found", "detail": "Not found."}}


def _bad_request(detail: str) -> tuple[int, dict, object]:
    return 400, {}, {"error": {"error_code": 140400, "title": "Bad request", "detail": detail}}


class _Handler(BaseHTTPRequestHandler):
    server_state: FakeProlific
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):
        pass

    def _serve(self, method: str) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = "<invalid json>"
        status, headers, payload = self.server_state.handle(
            method, self.path, body, self.headers.get("Authorization", "")
        )
        data = json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout test)

    def do_GET(self):
        self._serve("GET")

    def do_POST(self):
        self._serve("POST")

    def do_PATCH(self):
        self._serve("PATCH")
