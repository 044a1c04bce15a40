// cartoqa answer: a visible timer and keyboard shortcuts.  The page works without this
// script; the server measures the time it stores.
(function () {
  "use strict";
  var timer = document.getElementById("timer");
  var start = Date.now();
  if (timer) {
    setInterval(function () {
      timer.textContent = String(Math.floor((Date.now() - start) / 1000));
    }, 1000);
  }
  function typing(el) {
    return el && (el.tagName === "INPUT" || el.tagName === "TEXTAREA" || el.tagName === "SELECT");
  }
  document.addEventListener("keydown", function (ev) {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) { return; }
    if (typing(document.activeElement)) {
      if (ev.key === "Escape") { document.activeElement.blur(); }
      return;
    }
    var key = ev.key.toLowerCase();
    var target = document.querySelector('[data-key="' + key.replace(/["\\]/g, "") + '"]');
    if (target) {
      ev.preventDefault();
      target.click();
    }
  });
})();
