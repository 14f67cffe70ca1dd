"""A fake LLM provider on 127.0.0.1 that speaks the four wire formats the collector uses.

The path picks the format, as on the real services:

- ``POST /chat/completions`` or ``/v1/chat/completions``: OpenAI Chat Completions (also OpenAI-compatible)
- ``POST /v1/messages``: Anthropic Messages (needs ``x-api-key`` and ``anthropic-version``)
- ``POST /models/<model>:generateContent`` (optionally under ``/v1beta``): Google Gemini

What it answers is scripted: ``script`` is a list of steps used one per request, in order, then ``default``
for every later request. A step is a dict:

- ``{"text": "..."}``: a 200 reply whose model output is that text (default: a valid answer)
- ``{"status": 429, "retry_after": 2}``, ``{"status": 500}``, ``{"status": 400}``: an error in the provider's shape
- ``{"sleep": 3}``: wait that long before answering (for client timeouts)
- ``{"body": "<html>oops"}``: a 200 whose body is not JSON
- ``{"hold": threading.Event()}``: wait until the event is set (a call in flight, for killed-worker tests)
- ``{"outcome": "refused" | "length" | "blocked"}``: a 200 that is a refusal, a length cut or a safety block, in
  the provider's own shape (``"reason"`` sets the refusal text or the block reason)
- ``{"status": 429, "retry_delay": "2s"}``: Gemini's wait in the body (google.rpc.RetryInfo), no header;
  ``"headers": {...}`` adds any header (``x-should-retry``, ``x-ratelimit-reset-requests`` …)

Requests the real API would refuse get its 400 (tests/fakes/wire_rules.py): a temperature or ``max_tokens``
sent to a reasoning model, a forced tool beside Anthropic's extended thinking, a setting Gemini does not know
in ``generationConfig``, a thinking budget out of range … With thinking on, replies carry a thinking block
(Anthropic) or thought tokens (Gemini), as the real ones do.

It can also enforce a rate limit like a provider: ``requests_per_minute`` with ``burst`` (GCRA); a request
that comes too early gets 429 with a Retry-After header, and is counted in ``rejected``. ``latency`` delays
every reply. Everything received is kept in ``requests`` (path, headers, JSON body).

Judging prompts (llm_judging: a schema named "judgment", or a user prompt that asks about Answer A and B) get a
judgment instead of an answer: ``judge(keys, prompt_text)`` returns the JSON object to send (default: "A" on
every question key). On the Anthropic format with a forced tool, the object comes back as a tool_use block.
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from . import wire_rules

POOL = [
    ("honesty", "Lying would betray the trust the others place in the character."),
    ("harm to others", "Whatever is chosen, someone may be hurt, and harm matters morally."),
    ("loyalty", "The character owes something to friends and family."),
    ("fairness", "Everyone affected should be treated alike."),
    ("consequences", "What happens next depends on this choice."),
]
ACTIONS = ["Tell the truth and offer to make amends.", "Talk to the people involved before acting."]


def answer_json(n: int = 1, *, weights=(50, 30, 20)) -> str:
    """A valid answer; reply n picks its features from a small pool, so samples resemble each other."""
    picked = [POOL[(n + i) % len(POOL)] for i in range(len(weights))]
    features = [{"feature": f, "weight": w, "reason": r} for (f, r), w in zip(picked, weights, strict=True)]
    return json.dumps(
        {"features": features, "action": ACTIONS[n % 2], "additional_information": f"Who else knows? (reply {n})"}
    )


class FakeLLMServer:
    def __init__(
        self,
        *,
        script: list[dict] | None = None,
        default: dict | None = None,
        latency: float = 0.0,
        requests_per_minute: float | None = None,
        burst: int = 1,
        model_version_suffix: str = "-2024-08-06",
        judge=None,
    ) -> None:
        self.judge = judge or (lambda keys, prompt: {key: {"choice": "A", "reason": "clearer"} for key in keys})
        self.script = list(script or [])
        self.default = default
        self.latency = latency
        self.interval = 60.0 / requests_per_minute if requests_per_minute else 0.0
        self.tolerance = self.interval * (burst - 1)
        self.suffix = model_version_suffix
        self.lock = threading.Lock()
        self.tat = 0.0
        self.requests: list[tuple[str, dict, dict]] = []
        self.served = 0
        self.rejected = 0
        self.refused: list[str] = []  # the 400s a real API would have answered (wire_rules)
        self.server: ThreadingHTTPServer | None = None

    # lifecycle -------------------------------------------------------------------------------------------
    def start(self) -> FakeLLMServer:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def do_POST(self):
                fake.handle(self)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server:
            self.server.shutdown()
            self.server.server_close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    # behaviour -------------------------------------------------------------------------------------------
    def next_step(self) -> tuple[int, dict]:
        with self.lock:
            self.served += 1
            n = self.served
            if self.script:
                return n, self.script.pop(0)
        return n, dict(self.default or {})

    def over_limit(self) -> float:
        """GCRA: seconds until this request would have been allowed (0 when it is allowed now)."""
        if not self.interval:
            return 0.0
        with self.lock:
            now = time.monotonic()
            tat = max(self.tat, now)
            early = tat - self.tolerance - now
            if early > 0:
                self.rejected += 1
                return early
            self.tat = tat + self.interval
            return 0.0

    def handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("content-length") or 0)
        raw = handler.rfile.read(length)
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        headers = {k.lower(): v for k, v in handler.headers.items()}
        path = handler.path.split("?")[0]
        with self.lock:
            self.requests.append((path, headers, body))
        fmt = "anthropic" if path.endswith("/v1/messages") else "gemini" if ":generateContent" in path else "openai"
        if fmt == "anthropic" and ("x-api-key" not in headers or "anthropic-version" not in headers):
            return self.send(handler, 401, {"type": "error", "error": {"type": "authentication_error"}})
        refused = self.wire_refusal(fmt, path, body)
        if refused:
            with self.lock:
                self.refused.append(refused)
            return self.send(handler, 400, self.error_body(fmt, 400, refused))
        early = self.over_limit()
        if early:
            return self.send(handler, 429, self.error_body(fmt, 429), {"retry-after": str(math.ceil(early))})
        n, step = self.next_step()
        if self.latency:
            time.sleep(self.latency)
        if "sleep" in step:
            time.sleep(step["sleep"])
        if "hold" in step:
            step["hold"].wait(30)
        if "status" in step:
            extra = {"retry-after": str(step["retry_after"])} if "retry_after" in step else {}
            error = self.error_body(fmt, step["status"])
            if "retry_delay" in step:  # Gemini: the wait in the body only
                error["error"]["details"] = [
                    {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": step["retry_delay"]}
                ]
            return self.send(handler, step["status"], error, {**extra, **step.get("headers", {})})
        if "body" in step:
            return self.send_raw(handler, 200, step["body"].encode(), "text/html")
        keys, prompt = judging_request(fmt, body)
        default = json.dumps(self.judge(keys, prompt)) if keys is not None else answer_json(n)
        text = step.get("text", default)
        model = body.get("model") or path.rsplit("/", 1)[-1].split(":")[0]
        reply = self.reply_body(fmt, model, text, n)
        if fmt == "anthropic" and body.get("tools") and step.get("tool", True):
            with contextlib.suppress(ValueError):  # not JSON: a text block, as a model ignoring the tool sends
                reply["content"] = [
                    {"type": "tool_use", "id": f"toolu_{n}", "name": "judgment", "input": json.loads(text)}
                ]
                reply["stop_reason"] = "tool_use"
        think(fmt, body, reply)
        if "outcome" in step:
            unanswered(fmt, reply, step["outcome"], step.get("reason"))
        return self.send(handler, 200, reply)

    @staticmethod
    def wire_refusal(fmt: str, path: str, body: dict) -> str | None:
        if fmt == "anthropic":
            return wire_rules.anthropic_refusal(body)
        if fmt == "gemini":
            return wire_rules.gemini_refusal(path.rsplit("/", 1)[-1].split(":")[0], body)
        return wire_rules.openai_refusal(body)

    def reply_body(self, fmt: str, model: str, text: str, n: int) -> dict:
        version = f"{model}{self.suffix}"
        if fmt == "anthropic":
            return {
                "id": f"msg_{n}",
                "type": "message",
                "role": "assistant",
                "model": version,
                "content": [{"type": "text", "text": text}],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": 400, "output_tokens": 200},
            }
        if fmt == "gemini":
            return {
                "candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP"}],
                "usageMetadata": {"promptTokenCount": 400, "candidatesTokenCount": 200, "totalTokenCount": 600},
                "modelVersion": version,
            }
        return {
            "id": f"chatcmpl-{n}",
            "object": "chat.completion",
            "model": version,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 400, "completion_tokens": 200, "total_tokens": 600},
        }

    @staticmethod
    def error_body(fmt: str, status: int, message: str = "") -> dict:
        message = message or f"fake error {status}"
        if fmt == "anthropic":
            kind = {429: "rate_limit_error", 400: "invalid_request_error"}.get(status, "api_error")
            return {"type": "error", "error": {"type": kind, "message": message}}
        if fmt == "gemini":
            kind = {429: "RESOURCE_EXHAUSTED", 400: "INVALID_ARGUMENT"}.get(status, "INTERNAL")
            return {"error": {"code": status, "message": message, "status": kind}}
        kind = {429: "rate_limit", 400: "invalid_request_error"}.get(status, "server")
        return {"error": {"message": message, "type": kind}}

    def send(self, handler, status: int, payload: dict, headers: dict | None = None) -> None:
        self.send_raw(handler, status, json.dumps(payload).encode(), "application/json", headers)

    @staticmethod
    def send_raw(handler, status: int, data: bytes, content_type: str, headers: dict | None = None) -> None:
        try:
            handler.send_response(status)
            handler.send_header("content-type", content_type)
            handler.send_header("content-length", str(len(data)))
            for key, value in (headers or {}).items():
                handler.send_header(key, value)
            handler.end_headers()
            handler.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout test)


def judging_request(fmt: str, body: dict) -> tuple[list[str] | None, str]:
    """The question keys a judging request asks about and its user prompt; (None, "") for any other request."""
    if fmt == "anthropic":
        schema = ((body.get("tools") or [{}])[0]).get("input_schema") or {}
        prompt = " ".join(m.get("content", "") for m in body.get("messages", []) if isinstance(m.get("content"), str))
    elif fmt == "gemini":
        schema = (body.get("generationConfig") or {}).get("responseSchema") or {}
        prompt = " ".join(p.get("text", "") for c in body.get("contents", []) for p in c.get("parts", []))
    else:
        schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema") or {}
        prompt = " ".join(str(m.get("content", "")) for m in body.get("messages", []) if m.get("role") == "user")
    if "ANSWER A" not in prompt or "ANSWER B" not in prompt:
        return None, ""
    keys = list((schema.get("properties") or {}).keys())
    if not keys:  # json_object mode (OpenAI-compatible): the keys from the prompt's list
        keys = re.findall(r"^- ([a-z0-9_-]+): ", prompt.split("WHICH ANSWER IS BETTER?")[-1], flags=re.M)
    return keys, prompt


def think(fmt: str, body: dict, reply: dict) -> None:
    """Thinking as the real replies carry it: a thinking block first (Anthropic), thought tokens (Gemini)."""
    if fmt == "anthropic" and (body.get("thinking") or {}).get("type") == "enabled":
        reply["content"].insert(0, {"type": "thinking", "thinking": "Weighing both.", "signature": "sig"})
    budget = ((body.get("generationConfig") or {}).get("thinkingConfig") or {}).get("thinkingBudget", -1)
    if fmt == "gemini" and budget != 0 and str(reply.get("modelVersion", "")).startswith("gemini-2.5"):
        reply["usageMetadata"]["thoughtsTokenCount"] = 100


def unanswered(fmt: str, reply: dict, outcome: str, reason: str | None) -> None:
    """Turn a 200 reply into a refusal, a length cut or a safety block, each in its provider's shape."""
    if fmt == "anthropic":
        reply["stop_reason"] = {"refused": "refusal", "length": "max_tokens", "blocked": "refusal"}[outcome]
        if outcome != "length":
            reply["content"] = [{"type": "text", "text": reason or "I can't help with that."}]
    elif fmt == "gemini":
        candidate = reply["candidates"][0]
        if outcome == "length":
            candidate["finishReason"] = "MAX_TOKENS"
        elif outcome == "blocked" and reason == "prompt":
            reply["candidates"] = []
            reply["promptFeedback"] = {"blockReason": "SAFETY", "safetyRatings": [
                {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH", "blocked": True}]}  # fmt: skip
        else:
            candidate["finishReason"] = "SAFETY"
            candidate["content"] = {"role": "model", "parts": []}
            candidate["safetyRatings"] = [{"category": "HARM_CATEGORY_HARASSMENT", "probability": "MEDIUM"}]
    else:
        choice = reply["choices"][0]
        if outcome == "refused":
            choice["message"] = {"role": "assistant", "content": None, "refusal": reason or "I can't help with that."}
        else:
            choice["finish_reason"] = {"length": "length", "blocked": "content_filter"}[outcome]
            if outcome == "blocked":
                choice["message"]["content"] = None
