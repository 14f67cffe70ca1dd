"""Simulated writers on the real answer-writing page (shared by tests/e2e and benchmarks/authenticity.py).

- typist: types every text field key by key, with the odd typo corrected by Backspace;
- paster: pastes every text field whole (a chatbot's answer copied in), types only the weights;
- phrase: types everything but pastes one short phrase (a quotation, a name) into one field;
- quoter: types everything but one feature, which is 3-6 words copied from the scenario on the page, and
  quotes 5-9 words of the scenario in one reason (selected in the page, Control+C, Control+V);
- the typists whose input method, not key presses, puts the characters in (Chromium's own input paths,
  as a phone keyboard, dictation or an IME delivers them; few or no keydowns):
  swipe (a phone keyboard: each word inserted whole, as swipe typing and word suggestions do),
  dictation (each sentence composed a word at a time as it is recognised, then committed), ime (each word composed, then committed, as Chinese or
  Japanese input does), autocorrect (keys, with the odd mistyped word replaced by the keyboard's fix);
- one-shot: each field inserted whole by one insertText (a phone keyboard's clipboard chip, an auto-typer);
- filled-in: each field's value set by a script with an input event (an extension, an autofill tool);
- reviser: types key by key, but writes two fields' text in the wrong box first and moves it with
  Control+X / Control+V (the page's own text, not a paste from elsewhere).

A paste is Chromium's own: the text is put on the clipboard and Control+V pressed in the field, so the page
sees the same paste event and inserted text a person's paste gives.
"""

import random
import re

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


def sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def answer_texts(rng: random.Random, *, features: int = 2) -> dict[str, str]:
    """What a writer puts in each text field (about 300–500 characters in all)."""
    texts = {"action": sentence(rng, rng.randint(12, 20)), "additional_information": sentence(rng, rng.randint(5, 9))}
    for number in range(1, features + 1):
        texts[f"feature_{number}"] = sentence(rng, rng.randint(2, 4))
        texts[f"reason_{number}"] = sentence(rng, rng.randint(10, 16))
    return texts


def paste(page, selector: str, text: str) -> None:
    page.click(selector)
    page.evaluate("text => navigator.clipboard.writeText(text)", text)
    page.keyboard.press("Control+V")


def copy_from_scenario(page, rng: random.Random, *, words: tuple[int, int] = (5, 9)) -> str:
    """Select a few consecutive words of the scenario on the page with the mouse's help and copy them (Control+C)."""
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
    page.keyboard.press("Control+C")
    return text[start:end]


def quote_scenario(page, selector: str, rng: random.Random, *, words: tuple[int, int] = (5, 9)) -> str:
    """Copy words of the scenario and paste them at the end of the field, as a writer quoting it does."""
    quote = copy_from_scenario(page, rng, words=words)
    page.click(selector)
    page.keyboard.press("Control+End")
    page.keyboard.press("Control+V")
    return quote


def type_text(page, selector: str, text: str, rng: random.Random) -> None:
    page.click(selector)
    for char in text:
        if rng.random() < 0.03:  # a typo, noticed and corrected
            page.keyboard.type(rng.choice("qwertyuiop"))
            page.keyboard.press("Backspace")
        page.keyboard.type(char)


def swipe_text(page, selector: str, text: str, rng: random.Random) -> None:
    page.click(selector)
    for n, word in enumerate(text.split(" ")):
        page.keyboard.insert_text(word if n == 0 else " " + word)


def dictate_text(page, selector: str, text: str, rng: random.Random) -> None:
    """Dictation as Chromium's input methods deliver it: the sentence composed a word at a time as it is
    recognised, then committed whole."""
    page.click(selector)
    cdp = page.context.new_cdp_session(page)
    words = text.split(" ")
    for end in range(1, len(words) + 1):
        heard = " ".join(words[:end])
        cdp.send("Input.imeSetComposition", {"text": heard, "selectionStart": len(heard), "selectionEnd": len(heard)})
    cdp.send("Input.insertText", {"text": text})
    cdp.detach()


def insert_at_once(page, selector: str, text: str, rng: random.Random) -> None:
    """The whole field in one insertText (a phone keyboard's clipboard chip, an auto-typer): not typing."""
    page.click(selector)
    page.keyboard.insert_text(text)


def insert_by_script(page, selector: str, text: str, rng: random.Random) -> None:
    """A browser extension filling the field: the value set and an input event sent, as autofill tools do."""
    page.click(selector)
    page.locator(selector).evaluate(
        "(field, text) => { field.value = text; field.dispatchEvent(new Event('input', {bubbles: true})); }", text
    )


def compose_text(page, selector: str, text: str, rng: random.Random) -> None:
    """Each word composed in steps (compositionupdate), then committed, as an IME does."""
    page.click(selector)
    cdp = page.context.new_cdp_session(page)
    for n, word in enumerate(text.split(" ")):
        word = word if n == 0 else " " + word
        for end in range(1, len(word), 3):
            cdp.send("Input.imeSetComposition", {"text": word[:end], "selectionStart": end, "selectionEnd": end})
        cdp.send("Input.insertText", {"text": word})
    cdp.detach()


def autocorrect_text(page, selector: str, text: str, rng: random.Random) -> None:
    """Typed key by key; now and then a word is mistyped and the keyboard replaces it with the right one."""
    page.click(selector)
    for n, word in enumerate(text.split(" ")):
        if n:
            page.keyboard.type(" ")
        if len(word) > 3 and rng.random() < 0.2:
            page.keyboard.type(word[:-2] + rng.choice("qwertyuiop"))
            for _ in range(len(word) - 1):
                page.keyboard.press("Shift+ArrowLeft")
            page.keyboard.insert_text(word)
        else:
            page.keyboard.type(word)


# A reviser types these fields' text in the wrong box first (empty until later), then moves it by cut and paste.
WRONG_BOX = {"#id_action": "#id_additional_information", "#id_reason_1": "#id_reason_2"}


def revise_text(page, selector: str, text: str, rng: random.Random) -> None:
    if selector not in WRONG_BOX:
        return type_text(page, selector, text, rng)
    type_text(page, WRONG_BOX[selector], text, rng)
    page.keyboard.press("Control+A")
    page.keyboard.press("Control+X")
    page.click(selector)
    page.keyboard.press("Control+V")


TYPING = {"typist": type_text, "swipe": swipe_text, "dictation": dictate_text, "ime": compose_text}
TYPING |= {"autocorrect": autocorrect_text, "reviser": revise_text}
TYPIST_KINDS = tuple(TYPING)
INSERTING = {"one-shot": insert_at_once, "filled-in": insert_by_script}


def write_answer(page, *, kind: str, rng: random.Random) -> dict[str, str]:
    """Fill the page as a writer of this kind and submit; returns the texts written."""
    texts = answer_texts(rng)
    phrase_field = rng.choice(sorted(texts)) if kind == "phrase" else None
    for name, text in texts.items():
        selector = f"#id_{name}"
        if kind == "quoter" and name == "feature_1":  # a feature named in the scenario's own words
            texts[name] = quote_scenario(page, selector, rng, words=(3, 6))
        elif kind == "quoter" and name == "reason_1":  # a reason that quotes the scenario
            type_text(page, selector, text + " As it says: ", rng)
            texts[name] = text + " As it says: " + quote_scenario(page, selector, rng)
        elif kind == "paster":
            paste(page, selector, text)
        elif name == phrase_field:
            phrase = rng.choice(PHRASES)
            type_text(page, selector, text, rng)
            paste(page, selector, " " + phrase)
            texts[name] = text + " " + phrase
        else:
            (TYPING | INSERTING).get(kind, type_text)(page, selector, text, rng)  # a phrase-paster types the rest
    for number, weight in enumerate((60, 40), start=1):
        page.fill(f"#id_weight_{number}", str(weight))
    page.get_by_role("button", name="Submit this answer").click()
    return texts


def write_as(browser, *, base: str, slug: str, pid: str, study_id: str, kind: str, rng: random.Random) -> None:
    """One writer of this kind arrives from the study's Prolific link, consents and writes one answer."""
    from playwright.sync_api import expect

    from tests.e2e.browser import stub_prolific

    context = writing_context(browser)
    page = context.new_page()
    stub_prolific(page)
    page.goto(f"{base}/r/{slug}/?PROLIFIC_PID={pid}&STUDY_ID={study_id}&SESSION_ID={pid}")
    page.get_by_label("I agree to take part").check()
    page.get_by_role("button", name="Continue").click()
    write_answer(page, kind=kind, rng=rng)
    expect(page.get_by_role("heading", name="Thank you for your answers")).to_be_visible()
    context.close()


def writing_context(browser):
    """A browser context whose pages may use the clipboard (for the pasters)."""
    context = browser.new_context()
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    context.set_default_timeout(15_000)
    return context
