// The monitor refreshes itself: every data-refresh-ms it asks for /monitor?partial=1 (the live part, rendered by the
// server) and swaps it in. Never while a person is typing a token in a Resume form, never over a focused element.
// Without JavaScript the page reloads itself instead (a <noscript> refresh).
(function () {
  "use strict";
  const live = document.getElementById("live");
  if (!live) return;
  const every = parseInt(document.body.dataset.refreshMs, 10) || 15000;

  function busy() {
    const active = document.activeElement;
    if (active && live.contains(active) && active !== document.body) return true;
    return Array.from(live.querySelectorAll("form.resume input")).some((input) => input.value !== "");
  }

  async function refresh() {
    if (document.hidden || busy()) return;
    try {
      const answer = await fetch("/monitor?partial=1", {headers: {"Accept": "text/html"}, cache: "no-store"});
      if (!answer.ok) return;
      const html = await answer.text();
      if (busy()) return;
      const fresh = new DOMParser().parseFromString(html, "text/html");
      live.replaceChildren(...Array.from(fresh.body.childNodes).map((node) => document.importNode(node, true)));
      live.dataset.refreshed = String(Date.now());
    } catch (error) {
      // The server is away for a moment (restarting): the next turn tries again.
    }
  }

  setInterval(refresh, every);
})();
