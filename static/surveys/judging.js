// Progressive enhancement only: the survey works fully without this script.
// A second click on a submit button while the page is being sent does nothing.
document.addEventListener("submit", function (event) {
  var form = event.target;
  if (form.dataset.sent) { event.preventDefault(); return; }
  form.dataset.sent = "1";
  setTimeout(function () { delete form.dataset.sent; }, 8000);  // a failed send may be tried again
});
