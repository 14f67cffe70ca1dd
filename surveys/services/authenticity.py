"""Authenticity of a written answer: what the writing page recorded, checked, and one rating from it.

The answer-writing page's own script (static/surveys/writing.js) counts, per text field, the keystrokes,
the characters the writer's input method typed (keys, phone keyboards, dictation, IME composition; pages
written before this count sent none: 0), the characters single input events brought at once (more than a
word or two: an auto-typer's or a clipboard chip's insertion, an autofill; not typing), the paste events and the characters they brought, the
characters moved within the page (cut or copied from its own fields, pasted elsewhere in it), the characters
quoted from the page's own scenario or questions (pasted or dropped text the script found in them; it never
sends the text), and the time the field had focus; for the page, how
often and how long it was hidden or lost focus, and the time from the first keystroke to submitting. It
sends them in the hidden input `writing_signals`. Here they are checked (known names, whole numbers in
range, a size cap) and the characters of the final text are added from what the server received. With
JavaScript off, or signals that fail the checks, the answer's signals are unknown (None) and its rating
is "unknown", never "low": a flag is for the researcher's review, not a verdict (docs/authenticity.md).
"""

import json

from ..models import Answer

SIGNALS_VERSION = 1
MAX_SIGNALS_BYTES = 6000  # 12 fields of 14 counts fit in about 4,000
MAX_COUNT = 10**9  # any count or milliseconds beyond this is not from a real page
FIELD_COUNTS = (
    "keys", "typed_chars", "inserted_chars", "pastes", "pasted_chars", "moved_chars", "quoted_chars", "corrections",
    "focus_ms", "pasted_after_away", "key_intervals", "key_interval_mean_ms", "key_interval_sd_ms",
)  # fmt: skip
PAGE_COUNTS = ("hidden", "hidden_ms", "blurred", "blurred_ms", "first_key_to_submit_ms")

# The rule (docs/authenticity.md). Shares are of the final text's characters, over all the answer's fields.
MIN_CHARS = 20  # shorter answers say too little to rate: the rating is "high" unless most of it was pasted
LOW_SHARE = 0.5  # half or more of the final text pasted, or not explained by keystrokes → low
MIXED_SHARE = 0.15  # a sizeable part pasted → mixed
MIXED_UNTYPED_SHARE = 0.25  # a quarter of the text not explained by keystrokes → mixed
QUOTED_SHARE = 0.6  # most of the answer is the scenario's or the question's own words, quoted back → mixed
AWAY_PASTE_CHARS = 50  # a paste this long soon after coming back to a hidden or unfocused page → mixed
# Time (docs/authenticity.md "Time"): signs that never make an answer low by themselves, only with another.
STEADY_CV = 0.25  # key intervals this regular (coefficient of variation) are a machine's rhythm…
RHYTHM_MIN_INTERVALS = 50  # …over at least this many intervals between keys
FAST_CHARS_PER_SECOND = 10.0  # more characters than this per second the fields had focus…
FAST_MIN_CHARS = 100  # …in an answer of at least this many characters
UNCORRECTED_MIN_KEYS = 100  # this many keys without one correction: corroborates a time sign, never a sign


def _count(value) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if value != value or value < 0 or value > MAX_COUNT:  # NaN, negative or absurd
        return None
    return int(value)


def _counts(raw, names: tuple[str, ...]) -> dict[str, int] | None:
    if not isinstance(raw, dict) or not set(raw) <= set(names):
        return None
    counts = {name: _count(raw.get(name, 0)) for name in names}
    if None in counts.values():
        return None
    return {name: count for name, count in counts.items() if count is not None}


def parse_signals(raw: str, *, texts: dict[str, str]) -> dict | None:
    """The page's signals, checked, with each field's final `chars` added; None when absent or not valid."""
    if not raw or len(raw.encode()) > MAX_SIGNALS_BYTES:
        return None
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("v") != SIGNALS_VERSION or not isinstance(data.get("fields"), dict):
        return None
    page = _counts(data.get("page"), PAGE_COUNTS)
    if page is None or not set(data["fields"]) <= set(texts):
        return None
    fields = {}
    for name, text in texts.items():
        counts = _counts(data["fields"].get(name, {}), FIELD_COUNTS)
        if counts is None:
            return None
        if text or any(counts.values()):
            fields[name] = counts | {"chars": len(text)}
    return {"v": SIGNALS_VERSION, "fields": fields, "page": page}


def stored_signals_problem(signals: dict) -> str | None:
    """Why signals read back from a study file are not signals as this module stores them, or None."""
    if len(json.dumps(signals)) > 2 * MAX_SIGNALS_BYTES:
        return "are too large"
    fields = signals.get("fields")
    if signals.get("v") != SIGNALS_VERSION or not isinstance(fields, dict) or set(signals) != {"v", "fields", "page"}:
        return f'must be {{"v": {SIGNALS_VERSION}, "fields": {{…}}, "page": {{…}}}} as exported'
    if _counts(signals["page"], PAGE_COUNTS) is None:
        return f"page must hold whole numbers from 0 to {MAX_COUNT} named {', '.join(PAGE_COUNTS)}"
    for name, counts in fields.items():
        if _counts(counts, (*FIELD_COUNTS, "chars")) is None:
            return f"fields.{name} must hold whole numbers from 0 to {MAX_COUNT} named {', '.join(FIELD_COUNTS)}, chars"
    return None


def summary(signals: dict) -> dict[str, float | int]:
    """The answer's totals the rule reads: characters, keystrokes, pasted characters and their shares."""
    fields = signals["fields"].values()
    chars = sum(f["chars"] for f in fields)
    keys = sum(f["keys"] for f in fields)
    # A field's typing is its keys or, where an input method typed more than keys show (swipe, dictation,
    # composition), what it typed; typed_chars is absent (0) in signals recorded before it was counted.
    typed = sum(max(f["keys"], f.get("typed_chars", 0)) for f in fields)
    pasted = sum(f["pasted_chars"] for f in fields)
    # The writer's own text moved between or within fields was typed where it was first written.
    moved = sum(f.get("moved_chars", 0) for f in fields)
    # Words quoted from the scenario or the question on the page: not typed, but not brought from elsewhere.
    quoted = sum(f.get("quoted_chars", 0) for f in fields)
    # Characters no typing explains (pasted, dropped, filled in), and at least those a single input event
    # brought in bulk (a sentence inserted at once), however many keys were pressed besides.
    inserted = sum(f.get("inserted_chars", 0) for f in fields)
    untyped = min(chars, max(chars - typed - moved - quoted, inserted))
    focus_ms = sum(f["focus_ms"] for f in fields)
    intervals = sum(f.get("key_intervals", 0) for f in fields)
    interval_sum = sum(f.get("key_intervals", 0) * f.get("key_interval_mean_ms", 0) for f in fields)
    interval_squares = sum(
        f.get("key_intervals", 0) * (f.get("key_interval_sd_ms", 0) ** 2 + f.get("key_interval_mean_ms", 0) ** 2)
        for f in fields
    )
    mean_interval = interval_sum / intervals if intervals else 0.0
    spread = max(0.0, interval_squares / intervals - mean_interval**2) ** 0.5 if intervals else 0.0
    return {
        "chars": chars,
        "keys": keys,
        "corrections": sum(f.get("corrections", 0) for f in fields),
        # Characters per second the fields had focus (None without focused time): typing, with its pauses.
        "chars_per_second": round(chars * 1000 / focus_ms, 2) if focus_ms else None,
        "key_intervals": intervals,
        # How regular the rhythm is: the intervals' standard deviation over their mean (None without any).
        "key_interval_cv": round(spread / mean_interval, 3) if mean_interval else None,
        "typed": typed,
        "pasted_chars": pasted,
        "moved": moved,
        "quoted": quoted,
        "inserted": inserted,
        "pasted_share": min(1.0, pasted / chars) if chars else 0.0,
        "untyped_share": untyped / chars if chars else 0.0,
        "pasted_after_away": sum(f["pasted_after_away"] for f in fields),
    }


def reasons(totals: dict) -> dict[str, list[str]]:
    """The signs the rule reads, by kind: "text" (how the characters arrived), "time" (speed, rhythm) and
    "corroborating" (no correction over many keys: never a sign by itself, only beside a time sign)."""
    chars = totals["chars"]
    text = []
    if totals["pasted_share"] >= MIXED_SHARE:
        text.append(f"{totals['pasted_share']:.0%} pasted")
    if totals["untyped_share"] >= MIXED_UNTYPED_SHARE and chars >= MIN_CHARS:
        text.append(f"{totals['untyped_share']:.0%} not typed")
    if totals["pasted_after_away"] >= AWAY_PASTE_CHARS:
        text.append(f"{totals['pasted_after_away']} characters pasted just after leaving the page")
    time = []
    cv = totals["key_interval_cv"]
    if cv is not None and cv < STEADY_CV and totals["key_intervals"] >= RHYTHM_MIN_INTERVALS:
        time.append(f"machine-steady rhythm (variation {cv:.2f} over {totals['key_intervals']} keys)")
    speed = totals["chars_per_second"]
    if chars >= FAST_MIN_CHARS and (speed is None or speed > FAST_CHARS_PER_SECOND):
        time.append(f"{speed} characters per focused second" if speed else "text without focused time")
    corroborating = []
    if totals["keys"] >= UNCORRECTED_MIN_KEYS and totals["corrections"] == 0 and totals["key_intervals"]:
        corroborating.append(f"no correction in {totals['keys']} keys")
    return {"text": text, "time": time, "corroborating": corroborating}


def signs_in_words(signals: dict | None) -> list[str]:
    """Why the answer is rated as it is, for the researcher: each sign the rule read, in words."""
    if not signals:
        return []
    signs = reasons(summary(signals))
    return [*signs["text"], *signs["time"], *(signs["corroborating"] if signs["time"] else [])]


def rate(signals: dict | None) -> str:
    """high / mixed / low from the signals (docs/authenticity.md); unknown without them."""
    if not signals:
        return Answer.Authenticity.UNKNOWN
    totals = summary(signals)
    if totals["chars"] == 0:
        return Answer.Authenticity.UNKNOWN
    mostly_pasted = max(totals["pasted_share"], totals["untyped_share"]) >= LOW_SHARE
    if mostly_pasted and totals["chars"] >= MIN_CHARS:
        return Answer.Authenticity.LOW
    signs = reasons(totals)
    # A time sign never makes an answer low alone: only beside another sign of any kind.
    if signs["time"] and len(signs["time"]) + len(signs["text"]) + len(signs["corroborating"]) >= 2:
        return Answer.Authenticity.LOW
    mostly_quoted = totals["quoted"] >= QUOTED_SHARE * totals["chars"] and totals["chars"] >= MIN_CHARS
    if signs["text"] or signs["time"] or mostly_quoted:
        return Answer.Authenticity.MIXED
    return Answer.Authenticity.HIGH


def record_signals(*, answer: Answer, raw: str | None, texts: dict[str, str]) -> Answer:
    """Store the checked signals and the rating on an answer written in the answer-writing survey."""
    answer.writing_signals = parse_signals(raw or "", texts=texts)
    answer.authenticity = rate(answer.writing_signals)
    answer.save(update_fields=["writing_signals", "authenticity"])
    return answer
