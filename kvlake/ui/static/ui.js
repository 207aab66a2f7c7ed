// kvlake's UI: small progressive enhancements, no build step (CSP: no inline script).
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  // Dates arrive as Unix seconds; show them in the browser's time zone.
  for (const el of document.querySelectorAll("time.date[data-unix]")) {
    const seconds = Number(el.dataset.unix);
    if (Number.isFinite(seconds) && seconds > 0) {
      el.textContent = new Date(seconds * 1000).toLocaleString();
    }
  }
});
