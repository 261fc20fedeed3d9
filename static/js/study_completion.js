// A study's completion page (templates/studies/completion.html): counts down,
// then goes to the recruitment platform's link, the same as clicking it.
(() => {
  "use strict";
  const link = document.getElementById("completion-link");
  if (!link) return;
  const shown = document.getElementById("redirect-seconds");
  let left = Number.parseInt(link.dataset.seconds || "8", 10);

  function tick() {
    left -= 1;
    if (left <= 0) {
      window.location.assign(link.href);
      return;
    }
    if (shown) shown.textContent = String(left);
    setTimeout(tick, 1000);
  }
  setTimeout(tick, 1000);
})();
