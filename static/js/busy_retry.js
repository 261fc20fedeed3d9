// The 503 page (spadesite/busy.py): try the page again after the server's
// Retry-After, once, as a person pressing "Try again" would. Nothing was stored
// by the request that failed, so trying again is safe.
(() => {
  "use strict";
  const box = document.getElementById("busy-retry");
  if (!box) return;
  const seconds = Number(box.dataset.seconds) || 5;
  // A GET of the same address: a reload would send a failed form again.
  setTimeout(() => window.location.assign(window.location.href), seconds * 1000);
})();
