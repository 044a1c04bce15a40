// cartoqa review: keyboard shortcuts.  The pages work without this file.
"use strict";
document.addEventListener("keydown", (e) => {
  const t = e.target;
  const inField = t instanceof Element && t.closest("input, textarea, select, summary");
  const help = document.getElementById("help");
  if (e.key === "Escape" && inField) { t.blur(); return; }
  if (e.key === "Escape" && help && !help.hidden) { help.hidden = true; return; }
  if (inField || e.ctrlKey || e.metaKey || e.altKey) return;
  const press = (...sels) => {
    const el = sels.map((s) => document.querySelector(s)).find(Boolean);
    if (el) { e.preventDefault(); el.click(); }
  };
  if (e.key === "a") press("#accept");
  else if (e.key === "c") press("#correct");
  else if (e.key === "r") press("#reject");
  else if (e.key === "j" || e.key === "ArrowRight") press("#next", "#start");
  else if (e.key === "k" || e.key === "ArrowLeft") press("#prev");
  else if (e.key === "e") {
    const first = document.querySelector(".answer");
    if (first) { e.preventDefault(); first.focus(); }
  } else if (e.key === "?") {
    if (help) { e.preventDefault(); help.hidden = !help.hidden; }
  } else if (/^[1-9]$/.test(e.key)) {
    const reason = document.getElementById("reason");
    if (reason && Number(e.key) < reason.options.length) {
      e.preventDefault();
      reason.selectedIndex = Number(e.key);
    }
  }
});
