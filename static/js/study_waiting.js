// A study's waiting room: polls the participant's state (studies.views.state) and
// updates the count, or goes to the participant's page once their stage moves on.
(() => {
  "use strict";
  const box = document.getElementById("study-state");
  if (!box) return;
  const number = document.getElementById("waiting-number");
  const EVERY_MS = 4000;

  async function poll() {
    try {
      const res = await fetch(box.dataset.url, { credentials: "same-origin", cache: "no-store" });
      if (res.ok) {
        const state = await res.json();
        if (state.page && state.page !== box.dataset.page) {
          window.location.assign(state.page);
          return;
        }
        if (number) number.textContent = String(state.waiting);
      }
    } catch { /* offline for a moment: the next poll tries again */ }
    setTimeout(poll, EVERY_MS);
  }
  setTimeout(poll, EVERY_MS);
})();
