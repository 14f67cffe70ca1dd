// Progressive enhancement only: the survey works fully without this script.
(function () {
  "use strict";
  // A second click on a submit button while the page is being sent does nothing.
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (form.dataset.sent) { event.preventDefault(); return; }
    form.dataset.sent = "1";
    setTimeout(function () { delete form.dataset.sent; }, 8000);  // a failed send may be tried again
  });

  // A page sent back incomplete: the summary of what is missing is at the top; move focus there so a
  // screen reader reads it and the keyboard continues from it.
  var summary = document.getElementById("error-summary");
  if (summary) {
    summary.setAttribute("tabindex", "-1");
    summary.focus();
  }

  // Once a question marked as missing is answered, its message (and its line in the summary) goes away.
  function clearError(container) {
    if (!container || !container.classList.contains("has-error")) return;
    container.classList.remove("has-error");
    container.querySelectorAll(".errorlist").forEach(function (list) { list.remove(); });
    container.querySelectorAll("[aria-describedby]").forEach(function (input) {
      input.removeAttribute("aria-describedby");
    });
    if (!summary) return;
    var item = summary.querySelector('li[data-field="' + container.getAttribute("data-field") + '"]');
    if (item) item.remove();
    if (!summary.querySelector("li[data-field]")) summary.hidden = true;
  }
  document.addEventListener("change", function (event) {
    var field = event.target.closest && event.target.closest("[data-field]");
    if (field && event.target.value !== "") clearError(field);
  });
})();
