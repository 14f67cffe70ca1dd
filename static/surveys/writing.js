// How an answer was written, for the researcher's review (docs/authenticity.md): per text field the
// keystrokes, the characters the person's input method typed, the characters single input events brought
// at once (more than a word or two: not typed), the pastes and the characters they brought,
// the characters moved from the page's own fields (cut or copied there, pasted here), the characters quoted
// from the page's own scenario or questions (pasted or dropped text found in them: decided here, the text is
// never kept), the corrections (text removed, typed over or autocorrected), the rhythm of the keys (count,
// mean and spread of the intervals between them), and the time the field had focus; for the page,
// how often and how long it was hidden or lost focus, and the time from the first keystroke to submitting.
// Only counts and durations are kept, never what was typed or pasted; they go to the server in the hidden
// input "writing_signals" with the form. Without this script the signals are "unknown".
(function () {
  "use strict";
  var form = document.getElementById("answer-form");
  var output = form && form.querySelector("input[name=writing_signals]");
  if (!output) return;
  var AWAY_WINDOW_MS = 60000; // a paste this soon after coming back to the page counts as "after away"
  var NOT_TYPING = /^(Shift|Control|Alt|AltGraph|Meta|CapsLock|Tab|Escape|Arrow\w+|Home|End|PageUp|PageDown|F\d+)$/;
  var fields = {};
  var page = { hidden: 0, hidden_ms: 0, blurred: 0, blurred_ms: 0, first_key_to_submit_ms: 0 };
  var firstKeyAt = null, hiddenSince = null, blurredSince = null, backAt = null, focusedSince = {};

  function now() { return Math.round(performance.now()); }
  function counts(name) {
    if (!fields[name]) {
      fields[name] = {
        keys: 0, typed_chars: 0, pastes: 0, pasted_chars: 0, moved_chars: 0, quoted_chars: 0, inserted_chars: 0,
        corrections: 0, focus_ms: 0, pasted_after_away: 0, key_intervals: 0, key_interval_mean_ms: 0,
        key_interval_sd_ms: 0
      };
    }
    return fields[name];
  }
  function carryOver() {
    // The page came back with an error (weights not adding to 100): keep counting from what was sent.
    try {
      var before = JSON.parse(output.value || "null");
      if (!before || before.v !== 1) return;
      Object.keys(before.fields || {}).forEach(function (name) {
        var field = counts(name);
        Object.keys(field).forEach(function (key) { field[key] = before.fields[name][key] || 0; });
      });
      Object.keys(page).forEach(function (key) { page[key] = (before.page || {})[key] || 0; });
      Object.keys(fields).forEach(function (name) {
        var n = fields[name].key_intervals, mean = fields[name].key_interval_mean_ms, sd = fields[name].key_interval_sd_ms;
        if (n > 0) rhythm[name] = { n: n, sum: n * mean, squares: n * (sd * sd + mean * mean) };
      });
    } catch (error) { /* a value we cannot read: start afresh */ }
  }

  // What the writer copied or cut from this page's own fields (the last few), so that moving their own
  // text (a paragraph written in the wrong box) is not taken for text pasted in from elsewhere.
  var ownClips = [];
  function remember(event) {
    var input = event.target, text = input.value.substring(input.selectionStart || 0, input.selectionEnd || 0);
    if (text) { ownClips.push(text); if (ownClips.length > 20) ownClips.shift(); }
  }

  // The page's own scenario and questions: text pasted or dropped from them is a quotation, the writer's
  // reading of the situation they answer, not text brought from elsewhere. Compared with spaces collapsed
  // and case ignored, as a copied selection may break lines differently from the page's text.
  function plain(text) { return text.replace(/\s+/g, " ").trim().toLowerCase(); }
  var quotable = plain(Array.prototype.map.call(document.querySelectorAll("[data-quotable]"), function (element) {
    return element.textContent;
  }).join(" \u0000 "));
  function isQuotation(text) { var words = plain(text); return words !== "" && quotable.indexOf(words) >= 0; }

  // "More than a word or two" in one input event: three words, or a run longer than any word (scripts
  // without spaces between words commit a phrase through composition, in steps).
  var BULK_WORDS = 2, BULK_CHARS = 30;
  var COUNTED_ELSEWHERE = /^(insertFromPaste|insertFromDrop|insertCompositionText|insertLineBreak|insertParagraph|delete|history)/;
  function isBulk(text) {
    var trimmed = text.trim();
    return trimmed.length > BULK_CHARS || (trimmed !== "" && trimmed.split(/\s+/).length > BULK_WORDS);
  }
  var lengths = {}, composing = {};

  // The rhythm of typing: per field, the count, mean and spread of the intervals between successive keys
  // (not auto-repeat). A longer gap than this is the writer stopping (thinking, reading, away), not rhythm.
  var RHYTHM_GAP_MS = 5000;
  var rhythm = {}, lastKeyAt = {};
  function keyInterval(name, at) {
    var last = lastKeyAt[name];
    lastKeyAt[name] = at;
    if (last == null || at - last > RHYTHM_GAP_MS) return;
    var r = rhythm[name] || (rhythm[name] = { n: 0, sum: 0, squares: 0 });
    r.n += 1; r.sum += at - last; r.squares += (at - last) * (at - last);
  }

  var inputs = form.querySelectorAll("textarea, input[type=text]");
  inputs.forEach(function (input) {
    var name = input.name;
    lengths[name] = input.value.length;
    input.addEventListener("copy", remember);
    input.addEventListener("cut", remember);
    input.addEventListener("keydown", function (event) {
      if (event.ctrlKey || event.metaKey || NOT_TYPING.test(event.key || "")) return;
      counts(name).keys += 1;
      if (!event.repeat) keyInterval(name, now());
      if (firstKeyAt === null) firstKeyAt = now();
    });
    // Characters an input method typed: keys, but also phone keyboards (swipe, word suggestions,
    // autocorrect), dictation and IME composition, which insert text a word at a time with few or no
    // keydowns. Pastes and drops are not among them, nor a single event bringing more than a word or two,
    // whatever its input type (a sentence inserted at once by a tool, a clipboard chip, an autofill).
    // Corrections: text removed (Backspace, Delete, cut), typed over a selection, or replaced by autocorrect.
    input.addEventListener("beforeinput", function (event) {
      var type = event.inputType || "";
      var overSelection = type === "insertText" && input.selectionStart !== input.selectionEnd;
      if (/^delete/.test(type) || type === "insertReplacementText" || overSelection) counts(name).corrections += 1;
    });
    input.addEventListener("input", function (event) {
      var field = counts(name), type = event.inputType || "", grown = input.value.length - (lengths[name] || 0);
      lengths[name] = input.value.length;
      if (type === "insertText" || type === "insertReplacementText") {
        var text = event.data || (event.dataTransfer ? event.dataTransfer.getData("text/plain") : "") || "";
        if (isBulk(text)) field.inserted_chars += text.length;
        else field.typed_chars += text.length;
        if (firstKeyAt === null) firstKeyAt = now();
      } else if (!COUNTED_ELSEWHERE.test(type) && grown > BULK_CHARS) {
        field.inserted_chars += grown; // text filled in by an event that does not say how (autofill, a script)
      }
    });
    // A composition (IME, dictation) grows in steps the writer sees; one step bringing more than a word or
    // two is an insertion, not typing.
    input.addEventListener("compositionstart", function () { composing[name] = { text: "", bulk: false }; });
    input.addEventListener("compositionupdate", function (event) {
      var composition = composing[name] || (composing[name] = { text: "", bulk: false }), data = event.data || "";
      var added = data.indexOf(composition.text) === 0 ? data.slice(composition.text.length) : data;
      composition.bulk = composition.bulk || isBulk(added);
      composition.text = data;
    });
    input.addEventListener("compositionend", function (event) {
      var composition = composing[name] || { text: "", bulk: false }, data = event.data || "";
      var added = data.indexOf(composition.text) === 0 ? data.slice(composition.text.length) : data;
      if (composition.bulk || isBulk(added)) counts(name).inserted_chars += data.length;
      else counts(name).typed_chars += data.length;
      composing[name] = null;
      lengths[name] = input.value.length;
      if (firstKeyAt === null) firstKeyAt = now();
    });
    input.addEventListener("paste", function (event) {
      var data = event.clipboardData || window.clipboardData;
      var text = data ? data.getData("text") || "" : "";
      var field = counts(name);
      if (text && ownClips.indexOf(text) >= 0) { field.moved_chars += text.length; return; }
      if (isQuotation(text)) { field.quoted_chars += text.length; return; }
      field.pastes += 1;
      field.pasted_chars += text.length;
      if (backAt !== null && now() - backAt < AWAY_WINDOW_MS) field.pasted_after_away += text.length;
    });
    input.addEventListener("drop", function (event) {
      var text = event.dataTransfer ? event.dataTransfer.getData("text") || "" : "";
      if (isQuotation(text)) { counts(name).quoted_chars += text.length; return; }
      counts(name).pastes += 1;
      counts(name).pasted_chars += text.length;
    });
    input.addEventListener("focus", function () { focusedSince[name] = now(); });
    input.addEventListener("blur", function () {
      lastKeyAt[name] = null;
      if (focusedSince[name] != null) counts(name).focus_ms += now() - focusedSince[name];
      focusedSince[name] = null;
    });
  });

  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "hidden") { page.hidden += 1; hiddenSince = now(); }
    else if (hiddenSince !== null) { page.hidden_ms += now() - hiddenSince; hiddenSince = null; backAt = now(); }
  });
  window.addEventListener("blur", function () { page.blurred += 1; blurredSince = now(); });
  window.addEventListener("focus", function () {
    if (blurredSince !== null) { page.blurred_ms += now() - blurredSince; blurredSince = null; backAt = now(); }
  });

  function write() {
    var active = document.activeElement;
    if (active && focusedSince[active.name] != null) {
      counts(active.name).focus_ms += now() - focusedSince[active.name];
      focusedSince[active.name] = now();
    }
    Object.keys(rhythm).forEach(function (name) {
      var r = rhythm[name], field = counts(name), mean = r.sum / r.n;
      if (!r.n) return;
      field.key_intervals = r.n;
      field.key_interval_mean_ms = Math.round(mean);
      field.key_interval_sd_ms = Math.round(Math.sqrt(Math.max(0, r.squares / r.n - mean * mean)));
    });
    if (firstKeyAt !== null) page.first_key_to_submit_ms += now() - firstKeyAt;
    firstKeyAt = null;
    output.value = JSON.stringify({ v: 1, fields: fields, page: page });
  }
  carryOver();
  // Before answering.js may cancel the submit: capture phase, so a blocked submit also keeps its counts.
  form.addEventListener("submit", write, true);
})();
