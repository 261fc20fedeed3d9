// The staff's study monitor (studies.monitor_views): polls the study's JSON and
// reloads the page when something but the waiting times changed, or every minute.
(() => {
  "use strict";
  const box = document.getElementById("study-monitor");
  if (!box) return;
  const EVERY_MS = 5000;
  const AT_LEAST_MS = 60000;
  const since = Date.now();

  async function poll() {
    try {
      const res = await fetch(box.dataset.url, { credentials: "same-origin", cache: "no-store" });
      if (res.ok) {
        const data = await res.json();
        if (data.digest !== box.dataset.digest || Date.now() - since > AT_LEAST_MS) {
          window.location.reload();
          return;
        }
      }
    } catch { /* offline for a moment: the next poll tries again */ }
    setTimeout(poll, EVERY_MS);
  }
  setTimeout(poll, EVERY_MS);
})();
