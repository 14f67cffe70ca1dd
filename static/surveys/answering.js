// The answer-writing page: show the running total of the weights and allow submitting only at 100.
// The server checks the same rule, so the page works without this script. The button is marked
// aria-disabled rather than disabled, so keyboard users still reach it; pressing it while the total
// is off moves focus to the total, which says why.
(function () {
  "use strict";
  var form = document.getElementById("answer-form");
  if (!form) return;
  var total = document.getElementById("weight-total");
  var submit = document.getElementById("submit-answer");
  var target = parseInt(total.getAttribute("data-target"), 10) || 100;
  var weights = form.querySelectorAll("input[data-weight]");
  // The lowest weight comes from the form (the answer's shape refuses 0: a feature named carries weight).
  var lowest = weights.length ? parseInt(weights[0].getAttribute("min"), 10) : 1;

  function sum() {
    var s = 0;
    var bad = false;
    weights.forEach(function (input) {
      var text = input.value.trim();
      if (text === "") return;
      // Digits only, as the server reads a whole number ("1e2" is a number to the browser, not to the server).
      var n = /^\d+$/.test(text) ? Number(text) : NaN;
      if (!(n >= lowest && n <= target)) bad = true;
      else s += n;
    });
    return { total: s, bad: bad };
  }

  // The sentences come from the page, in the study's language: {total}, {target} and {lowest} are filled in.
  function words(attribute, runningTotal) {
    return (total.getAttribute(attribute) || "")
      .replace(/\{total\}/g, runningTotal).replace(/\{target\}/g, target).replace(/\{lowest\}/g, lowest);
  }

  function update() {
    var result = sum();
    var ok = result.total === target && !result.bad;
    total.textContent = words("data-words", result.total) + (ok ? "" : " " + words(result.bad ? "data-bad" : "data-off"));
    total.classList.toggle("ok", ok);
    total.classList.toggle("off", !ok);
    submit.setAttribute("aria-disabled", ok ? "false" : "true");
    submit.setAttribute("aria-describedby", "weight-total submit-help");
  }

  total.tabIndex = -1;  // focusable from the script only
  weights.forEach(function (input) { input.addEventListener("input", update); });
  form.addEventListener("submit", function (event) {
    if (submit.getAttribute("aria-disabled") === "true") { event.preventDefault(); total.focus(); return; }
    // A second click while the first submit is on its way must not send the page twice.
    if (form.dataset.sent) { event.preventDefault(); return; }
    form.dataset.sent = "1";
    window.setTimeout(function () { submit.disabled = true; }, 0);
  });
  update();
})();
