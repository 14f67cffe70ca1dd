"""Simulated writers on the real answer-writing page (shared by tests/e2e and benchmarks/authenticity.py).

Every key, paste, drop and insertion is Chromium's own (Playwright's keyboard, the clipboard, CDP input), so
the page's script sees the events a person's browser sends. Only time is simulated: the page's clock
(`performance.now`, which writing.js reads) stands still except where the writer's timing moves it — before
each key by the interval the writer planned for it, and by explicit pauses (thinking, reading, switching to
another tab) — so a writer's minutes of typing take the benchmark a second or two, and the page measures the
planned timing, not the machine's load.

People (honest):
- typist: key by key with a person's rhythm (lognormal intervals around a personal median, longer at word
  and sentence boundaries, the odd pause to think), typos noticed and corrected by Backspace;
- brief: a typist writing a short answer (one feature, about 110 characters in all);
- quoter: a brief answer whose feature is 3-6 words copied from the scenario on the page and whose reason
  quotes 5-9 words of it (selected in the page, Control+C, Control+V);
- swipe: a phone keyboard inserting each word whole (swipe typing, word suggestions), a person's pace;
- autocorrect: keys, the odd mistyped word replaced by the keyboard's fix;
- dictation: each sentence composed a word at a time as it is recognised, then committed;
- ime: each word composed in steps, then committed, as Chinese or Japanese input does;
- reviser: a typist who writes two fields' text in the wrong box first and moves it (Control+X, Control+V);
- phrase: a typist who pastes one short phrase (a quotation, a name) from elsewhere into one field.
Cheats (the text is the study's LLM answer for the scenario on the page when the writer is given them):
- paster: every field pasted whole (Control+V) after a few seconds in another tab;
- dropper: every field dragged in from another window (CDP drag and drop);
- one-shot: each field inserted whole by one insertText (a phone keyboard's clipboard chip, an auto-typer);
- filled-in: each field's value set by a script with an input event (an extension, an autofill tool);
- constant: an auto-typer typing the answer key by key at a constant speed (3-25 keys a second, jitter
  under 10%), no typos;
- reasons-paster: types the features and the action, pastes the reasons (about half of the text);
- retyper: a person retyping the chatbot's answer with a person's timing and typos (undetectable by
  behaviour; the content check is the second line).
"""

import math
import random
import re
from dataclasses import dataclass

WORDS = [
    "the",
    "friend",
    "trust",
    "honesty",
    "harm",
    "would",
    "should",
    "because",
    "their",
    "family",
    "money",
    "promise",
    "truth",
    "fair",
    "kind",
    "duty",
    "risk",
    "life",
    "help",
    "others",
    "care",
    "respect",
    "choice",
    "cost",
    "loss",
    "safety",
    "right",
    "wrong",
    "loyal",
    "lie",
    "report",
]

PHRASES = ["do unto others", "first, do no harm", "the greater good", "honesty is the best policy"]

# The page's clock, installed before the page's own scripts. It moves only when told: by `advance(ms)`, or
# before a key (a printable key or Backspace, not a shortcut) by the next interval planned with `plan([...])`.
CLOCK = """(() => {
  const origin = performance.now();
  let elapsed = 0;
  const planned = [];
  performance.now = () => origin + elapsed;
  window.__writerClock = {
    advance(ms) { elapsed += ms; },
    // A new plan replaces what is left of the last: a character typed without a keydown (one the keyboard
    // layout lacks, which Playwright inserts) must not carry an interval over into the next field.
    plan(intervals) { planned.splice(0, planned.length, ...intervals); },
  };
  addEventListener("keydown", (event) => {
    const typing = event.key.length === 1 || event.key === "Backspace";
    if (typing && !event.ctrlKey && !event.metaKey && planned.length) elapsed += planned.shift();
  }, true);
})();"""


def advance(page, ms: float) -> None:
    page.evaluate("ms => window.__writerClock.advance(ms)", round(ms))


@dataclass(frozen=True)
class Hand:
    """A writer's timing, in milliseconds: the median interval between keys and its lognormal spread, the
    extra pause at word and sentence boundaries, how long they think before a field, how often they mistype."""

    median: float
    sigma: float
    word_pause: float
    sentence_pause: float
    think: float
    typo_rate: float
    steady: bool = False  # a machine: every interval the median, give or take `sigma` (uniform)

    @classmethod
    def person(cls, rng: random.Random) -> "Hand":
        # Composing, not copying: 30-70 words a minute while the fingers move (median 170-400 ms a key),
        # spread as measured in keystroke logs (sigma 0.35-0.7), pauses between words and sentences.
        return cls(
            median=rng.uniform(170, 400),
            sigma=rng.uniform(0.35, 0.7),
            word_pause=rng.uniform(150, 600),
            sentence_pause=rng.uniform(1500, 5000),
            think=rng.uniform(3000, 20000),
            typo_rate=rng.uniform(0.01, 0.05),
        )

    @classmethod
    def machine(cls, rng: random.Random) -> "Hand":
        return cls(
            median=1000 / rng.uniform(3, 25),
            sigma=rng.uniform(0, 0.1),
            word_pause=0,
            sentence_pause=0,
            think=rng.uniform(2000, 8000),
            typo_rate=0,
            steady=True,
        )

    def gap(self, rng: random.Random, before: str) -> float:
        if self.steady:
            return self.median * (1 + rng.uniform(-self.sigma, self.sigma))
        gap = self.median * math.exp(rng.gauss(0, self.sigma))
        if before == " ":
            gap += rng.expovariate(1 / self.word_pause)
        elif before in ".!?":
            gap += rng.expovariate(1 / self.sentence_pause)
        if rng.random() < 0.01:  # stops to think mid-sentence
            gap += rng.expovariate(1 / 4000)
        return gap

    def first(self, rng: random.Random) -> float:
        return self.think * math.exp(rng.gauss(0, 0.5))


def keystrokes(text: str, rng: random.Random, hand: Hand) -> list[tuple[str, float]]:
    """(key, interval before it) for typing `text`: a typo is a wrong key, noticed, Backspace, the right key."""
    strokes: list[tuple[str, float]] = []
    for n, char in enumerate(text):
        gap = hand.first(rng) if n == 0 else hand.gap(rng, text[n - 1])
        if char.isalpha() and rng.random() < hand.typo_rate:
            strokes.append((rng.choice("qwertyuiop"), gap))
            strokes.append(("Backspace", hand.median * 2 * math.exp(rng.gauss(0, 0.4))))
            gap = hand.gap(rng, "")
        strokes.append((char, gap))
    return strokes


def press_keys(page, strokes: list[tuple[str, float]]) -> None:
    """Send the keys through Chromium's keyboard, the page's clock moving by each key's planned interval."""
    page.evaluate("ms => window.__writerClock.plan(ms)", [round(gap) for _, gap in strokes])
    run = ""
    for key, _ in strokes:
        if key == "Backspace":
            if run:
                page.keyboard.type(run)
                run = ""
            page.keyboard.press("Backspace")
        else:
            run += key
    if run:
        page.keyboard.type(run)


def sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def answer_texts(rng: random.Random, *, features: int = 2) -> dict[str, str]:
    """What a writer puts in each text field (about 300–500 characters in all)."""
    texts = {"action": sentence(rng, rng.randint(12, 20)), "additional_information": sentence(rng, rng.randint(5, 9))}
    for number in range(1, features + 1):
        texts[f"feature_{number}"] = sentence(rng, rng.randint(2, 4))
        texts[f"reason_{number}"] = sentence(rng, rng.randint(10, 16))
    return texts


def brief_texts(rng: random.Random) -> dict[str, str]:
    """A brief answer: one feature, a short reason and action, about 110 characters in all."""
    return {
        "feature_1": sentence(rng, rng.randint(1, 3)),
        "reason_1": sentence(rng, rng.randint(5, 8)),
        "action": sentence(rng, rng.randint(4, 7)),
    }


def paste(page, selector: str, text: str, rng: random.Random | None = None) -> None:
    page.click(selector)
    page.evaluate("text => navigator.clipboard.writeText(text)", text)
    if rng:
        advance(page, rng.uniform(2000, 8000))  # fetched from another tab
    page.keyboard.press("Control+V")


def drop(page, selector: str, text: str, rng: random.Random) -> None:
    """Text dragged in from another window and dropped on the field (Chromium's own drag and drop)."""
    page.locator(selector).evaluate("field => field.scrollIntoView({block: 'center'})")  # clear of the sticky total
    box = page.locator(selector).bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    advance(page, rng.uniform(2000, 8000))
    cdp = page.context.new_cdp_session(page)
    data = {"items": [{"mimeType": "text/plain", "data": text}], "dragOperationsMask": 1}
    for kind in ("dragEnter", "dragOver", "drop"):
        cdp.send("Input.dispatchDragEvent", {"type": kind, "x": x, "y": y, "data": data})
    cdp.detach()


def copy_from_scenario(page, rng: random.Random, *, words: tuple[int, int] = (5, 9)) -> str:
    """Select a few consecutive words of the scenario on the page and copy them (Control+C)."""
    scenario = page.locator(".vignette-text p").first
    scenario.click()  # the writer leaves the field for the scenario
    text = scenario.evaluate("p => p.firstChild.textContent")
    spans = [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]
    count = min(len(spans), rng.randint(*words))
    first = rng.randrange(len(spans) - count + 1)
    start, end = spans[first][0], spans[first + count - 1][1]
    scenario.evaluate(
        """(p, [start, end]) => {
            const range = document.createRange();
            range.setStart(p.firstChild, start);
            range.setEnd(p.firstChild, end);
            getSelection().removeAllRanges();
            getSelection().addRange(range);
        }""",
        [start, end],
    )
    advance(page, rng.uniform(2000, 6000))  # reading, selecting
    page.keyboard.press("Control+C")
    return text[start:end]


def quote_scenario(page, selector: str, rng: random.Random, *, words: tuple[int, int] = (5, 9)) -> str:
    """Copy words of the scenario and paste them at the end of the field, as a writer quoting it does."""
    quote = copy_from_scenario(page, rng, words=words)
    page.click(selector)
    page.keyboard.press("Control+End")
    page.keyboard.press("Control+V")
    return quote


def type_text(page, selector: str, text: str, rng: random.Random, hand: Hand) -> None:
    page.click(selector)
    press_keys(page, keystrokes(text, rng, hand))


def swipe_text(page, selector: str, text: str, rng: random.Random, hand: Hand) -> None:
    page.click(selector)
    advance(page, hand.first(rng))
    for n, word in enumerate(text.split(" ")):
        if n:
            advance(page, hand.median * (2 + len(word)) * math.exp(rng.gauss(0, hand.sigma)))
        page.keyboard.insert_text(word if n == 0 else " " + word)


def dictate_text(page, selector: str, text: str, rng: random.Random, hand: Hand) -> None:
    """Dictation as Chromium's input methods deliver it: the sentence composed a word at a time as it is
    recognised, then committed whole."""
    page.click(selector)
    advance(page, hand.first(rng))
    cdp = page.context.new_cdp_session(page)
    words = text.split(" ")
    for end in range(1, len(words) + 1):
        heard = " ".join(words[:end])
        advance(page, 350 * math.exp(rng.gauss(0, 0.3)))
        cdp.send("Input.imeSetComposition", {"text": heard, "selectionStart": len(heard), "selectionEnd": len(heard)})
    cdp.send("Input.insertText", {"text": text})
    cdp.detach()


def compose_text(page, selector: str, text: str, rng: random.Random, hand: Hand) -> None:
    """Each word composed in steps (compositionupdate), then committed, as an IME does."""
    page.click(selector)
    advance(page, hand.first(rng))
    cdp = page.context.new_cdp_session(page)
    for n, word in enumerate(text.split(" ")):
        word = word if n == 0 else " " + word
        advance(page, hand.median * len(word) * math.exp(rng.gauss(0, hand.sigma)))
        for end in range(1, len(word), 3):
            cdp.send("Input.imeSetComposition", {"text": word[:end], "selectionStart": end, "selectionEnd": end})
        cdp.send("Input.insertText", {"text": word})
    cdp.detach()


def autocorrect_text(page, selector: str, text: str, rng: random.Random, hand: Hand) -> None:
    """Typed key by key; now and then a word is mistyped and the keyboard replaces it with the right one."""
    page.click(selector)
    for n, word in enumerate(text.split(" ")):
        wrong = len(word) > 3 and rng.random() < 0.2
        typed = (" " if n else "") + (word[:-1] + rng.choice("qwertyuiop") if wrong else word)
        strokes = keystrokes(typed, rng, hand)
        if n:  # not the field's first key: no thinking before it
            strokes[0] = (strokes[0][0], hand.gap(rng, ""))
        press_keys(page, strokes)
        if wrong:
            for _ in range(len(word)):
                page.keyboard.press("Shift+ArrowLeft")
            page.keyboard.insert_text(word)


# A reviser types these fields' text in the wrong box first (empty until later), then moves it by cut and paste.
WRONG_BOX = {"#id_action": "#id_additional_information", "#id_reason_1": "#id_reason_2"}


def revise_text(page, selector: str, text: str, rng: random.Random, hand: Hand) -> None:
    if selector not in WRONG_BOX:
        return type_text(page, selector, text, rng, hand)
    type_text(page, WRONG_BOX[selector], text, rng, hand)
    page.keyboard.press("Control+A")
    page.keyboard.press("Control+X")
    page.click(selector)
    page.keyboard.press("Control+V")


def insert_at_once(page, selector: str, text: str, rng: random.Random, hand: Hand) -> None:
    """The whole field in one insertText (a phone keyboard's clipboard chip, an auto-typer): not typing."""
    page.click(selector)
    advance(page, rng.uniform(2000, 8000))
    page.keyboard.insert_text(text)


def insert_by_script(page, selector: str, text: str, rng: random.Random, hand: Hand) -> None:
    """A browser extension filling the field: the value set and an input event sent, as autofill tools do."""
    page.click(selector)
    advance(page, rng.uniform(500, 3000))
    page.locator(selector).evaluate(
        "(field, text) => { field.value = text; field.dispatchEvent(new Event('input', {bubbles: true})); }", text
    )


TYPING = {"typist": type_text, "swipe": swipe_text, "dictation": dictate_text, "ime": compose_text}
TYPING |= {"autocorrect": autocorrect_text, "reviser": revise_text}
TYPIST_KINDS = tuple(TYPING)
HONEST_KINDS = (*TYPIST_KINDS, "brief", "quoter", "phrase")
INSERTING = {"one-shot": insert_at_once, "filled-in": insert_by_script}
CHEAT_KINDS = ("paster", "dropper", "one-shot", "filled-in", "constant", "reasons-paster", "retyper")
LLM_TEXT_KINDS = ("paster", "dropper", "one-shot", "filled-in", "constant", "reasons-paster", "retyper")


def llm_texts(answer: dict) -> dict[str, str]:
    """The form's fields filled with a study file's answer (features, reasons, action, further information)."""
    texts = {}
    for number, feature in enumerate(answer["features"], start=1):
        texts[f"feature_{number}"] = feature["feature"]
        texts[f"reason_{number}"] = feature["reason"]
    texts["action"] = answer["action"]
    if answer.get("additional_information"):
        texts["additional_information"] = answer["additional_information"]
    return texts


def write_answer(page, *, kind: str, rng: random.Random, source: dict | None = None) -> dict[str, str]:
    """Fill the page as a writer of this kind and submit; returns the texts written. `source` is the study
    file's answer a cheat copies (its features' weights are kept); without it they copy made-up text."""
    if source and kind in LLM_TEXT_KINDS:
        texts, weights = llm_texts(source), [f["weight"] for f in source["features"]]
    elif kind in ("brief", "quoter"):
        texts, weights = brief_texts(rng), [100]
    else:
        texts, weights = answer_texts(rng), [60, 40]
    hand = Hand.machine(rng) if kind == "constant" else Hand.person(rng)
    phrase_field = rng.choice(sorted(texts)) if kind == "phrase" else None
    for name, text in list(texts.items()):
        selector = f"#id_{name}"
        if kind == "quoter" and name == "feature_1":  # a feature named in the scenario's own words
            texts[name] = quote_scenario(page, selector, rng, words=(3, 6))
        elif kind == "quoter" and name == "reason_1":  # a reason that quotes the scenario
            type_text(page, selector, text + " As it says: ", rng, hand)
            texts[name] = text + " As it says: " + quote_scenario(page, selector, rng)
        elif kind == "paster" or (kind == "reasons-paster" and name.startswith("reason_")):
            paste(page, selector, text, rng)
        elif kind == "dropper":
            drop(page, selector, text, rng)
        elif name == phrase_field:
            phrase = rng.choice(PHRASES)
            type_text(page, selector, text, rng, hand)
            paste(page, selector, " " + phrase)
            texts[name] = text + " " + phrase
        else:  # typists, and the cheats who type (constant, retyper, reasons-paster's other fields)
            (TYPING | INSERTING).get(kind, type_text)(page, selector, text, rng, hand)
    for number, weight in enumerate(weights, start=1):
        page.fill(f"#id_weight_{number}", str(weight))
    page.get_by_role("button", name="Submit this answer").click()
    return texts


def write_as(
    browser,
    *,
    base: str,
    slug: str,
    pid: str,
    study_id: str,
    kind: str,
    rng: random.Random,
    sources: dict[str, list[dict]] | None = None,
) -> dict[str, str]:
    """One writer of this kind arrives from the study's Prolific link, consents and writes one answer.
    `sources` maps the start of a scenario's text to the answers a cheat may copy for it (one is chosen).
    Returns the texts."""
    from playwright.sync_api import expect

    from tests.e2e.browser import stub_prolific

    context = writing_context(browser)
    page = context.new_page()
    stub_prolific(page)
    page.goto(f"{base}/r/{slug}/?PROLIFIC_PID={pid}&STUDY_ID={study_id}&SESSION_ID={pid}")
    page.get_by_label("I agree to take part").check()
    page.get_by_role("button", name="Continue").click()
    source = None
    if sources:
        scenario = page.locator(".vignette-text").inner_text()
        choices = next((answers for start, answers in sources.items() if scenario.startswith(start)), [])
        source = rng.choice(choices) if choices else None
    texts = write_answer(page, kind=kind, rng=rng, source=source)
    expect(page.get_by_role("heading", name="Thank you for your answers")).to_be_visible()
    context.close()
    return texts


def writing_context(browser):
    """A browser context whose pages may use the clipboard (for the pasters) and run on the writer's clock."""
    context = browser.new_context()
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    context.add_init_script(CLOCK)
    context.set_default_timeout(15_000)
    return context
