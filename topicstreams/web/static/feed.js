// The feed page's script: new entries without a reload, keyboard navigation, relative times kept current.
// The page works without it. It inserts only HTML the server rendered (and escaped), parsed by DOMParser and
// imported node by node; it never evaluates text.
(function () {
  "use strict";

  // Each poll asks for the events first seen since the newest one shown, minus this overlap: with several
  // writers on PostgreSQL an event committed late can carry a first_seen_at older than one already shown
  // (behind the cursor), and the overlap catches it; the entries' keys keep anything from being shown twice.
  var OVERLAP_MS = 60 * 1000;
  var MAX_BACKOFF_MS = 5 * 60 * 1000;

  var list, notice, skewMs = 0;
  var pending = [];        // entries (from the last poll) not shown yet, newest first
  var gap = false;         // more new entries than one poll returns: the notice reloads instead
  var failures = 0;
  var current = null;      // the entry marked by j/k

  function entries() {
    return list ? Array.prototype.slice.call(list.querySelectorAll(":scope > li.entry")) : [];
  }

  function shownKeys() {
    var keys = new Set();
    entries().forEach(function (li) { keys.add(li.dataset.key); });
    return keys;
  }

  // The feed's order: first_seen_at, then topic id, then news id, all newest (largest) first.
  function sortKey(li) {
    var key = li.dataset.key || "";
    var colon = key.indexOf(":");
    return [li.dataset.seen || "", Number(key.slice(0, colon)), key.slice(colon + 1)];
  }

  function compare(a, b) {  // > 0 when a comes before (is newer than) b
    var x = sortKey(a), y = sortKey(b);
    for (var i = 0; i < x.length; i++) {
      if (x[i] > y[i]) return 1;
      if (x[i] < y[i]) return -1;
    }
    return 0;
  }

  // -- polling --------------------------------------------------------------------------------------------

  function pollMs() {
    var value = Number(document.body.dataset.pollMs);
    return value > 0 ? value : 10000;
  }

  function schedule() {
    var delay = Math.min(pollMs() * Math.pow(2, failures), MAX_BACKOFF_MS);
    window.setTimeout(poll, delay);
  }

  function poll() {
    if (document.hidden) {  // asked again when the tab is shown
      document.addEventListener("visibilitychange", function again() {
        document.removeEventListener("visibilitychange", again);
        poll();
      });
      return;
    }
    var params = new URLSearchParams(list.dataset.query || "");
    params.set("partial", "1");
    var newest = entries()[0];
    if (newest) {
      var since = Date.parse(newest.dataset.seen) - OVERLAP_MS;
      if (!isNaN(since)) params.set("since", new Date(since).toISOString());
    }
    fetch(window.location.pathname + "?" + params.toString(), {headers: {"Accept": "text/html"}, cache: "no-store",
                                     credentials: "same-origin"})
      .then(function (response) {
        if (!response.ok) throw new Error("status " + response.status);
        return response.text();
      })
      .then(function (html) {
        failures = 0;
        received(new DOMParser().parseFromString(html, "text/html"));
      })
      .catch(function () { failures = Math.min(failures + 1, 8); })
      .then(schedule);
  }

  function received(doc) {
    var fresh = doc.getElementById("fresh");
    if (!fresh) return;
    var items = Array.prototype.slice.call(fresh.querySelectorAll(":scope > li.entry"));
    var shown = shownKeys();
    var all = entries();
    // When the page was cut (an "Older" link), what is older than its last entry belongs to the older page.
    var last = list.dataset.cut ? all[all.length - 1] : null;
    pending = items.filter(function (li) {
      return li.dataset.key && !shown.has(li.dataset.key) && !(last && compare(li, last) <= 0);
    });
    // A full answer whose oldest entry is still newer than everything shown may have left some out.
    gap = fresh.dataset.more === "1" && items.length > 0 &&
      (!all.length || compare(items[items.length - 1], all[0]) > 0);
    if (pending.length || gap) {
      notice.textContent = pending.length + (gap ? "+" : "") + " new";
      notice.title = gap ? "Reload the newest entries" : "Show the new entries";
      notice.hidden = false;
    } else {
      notice.hidden = true;
    }
  }

  function showFresh() {
    if (gap) {
      window.location.reload();
      return;
    }
    var shown = shownKeys();
    var first = null;
    pending.forEach(function (item) {
      if (shown.has(item.dataset.key)) return;
      var node = document.importNode(item, true);
      node.classList.add("is-fresh");
      var before = entries().find(function (li) { return compare(node, li) > 0; }) || null;
      list.insertBefore(node, before);
      shown.add(node.dataset.key);
      if (!first || compare(node, first) > 0) first = node;
    });
    pending = [];
    notice.hidden = true;
    var empty = document.getElementById("empty");
    if (empty && entries().length) empty.remove();
    updateTimes();
    if (first) first.scrollIntoView({block: "nearest"});
  }

  // -- keyboard -------------------------------------------------------------------------------------------

  function typing(target) {
    if (!target || !target.closest) return false;
    if (target.closest("textarea, select, [contenteditable=''], [contenteditable='true']")) return true;
    var input = target.closest("input");
    return !!input && !/^(checkbox|radio|button|submit|reset)$/.test(input.type);
  }

  function mark(li) {
    if (current) {
      current.classList.remove("is-current");
      current.removeAttribute("aria-current");
    }
    current = li;
    if (li) {
      li.classList.add("is-current");
      li.setAttribute("aria-current", "true");
      li.scrollIntoView({block: "nearest"});
    }
  }

  function move(step) {
    var all = entries();
    if (!all.length) return;
    var index = current ? all.indexOf(current) : -1;
    index = index < 0 ? 0 : Math.max(0, Math.min(all.length - 1, index + step));
    mark(all[index]);
  }

  function openCurrent() {
    var link = current && current.querySelector("a.title-link[href]");
    if (!link) return;
    var url;
    try { url = new URL(link.href); } catch (e) { return; }
    if (url.protocol !== "http:" && url.protocol !== "https:") return;
    window.open(url.href, "_blank", "noopener,noreferrer");
  }

  function toggleHelp(show) {
    var help = document.getElementById("help");
    var button = document.getElementById("keys-button");
    if (!help) return;
    help.hidden = show === undefined ? !help.hidden : !show;
    if (button) button.setAttribute("aria-expanded", String(!help.hidden));
  }

  function onKey(event) {
    if (event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented) return;
    if (typing(event.target)) {
      if (event.key === "Escape") event.target.blur();
      return;
    }
    switch (event.key) {
      case "j": move(1); break;
      case "k": move(-1); break;
      case "o": openCurrent(); break;
      case "/": {
        var search = document.getElementById("q");
        if (!search) return;
        search.focus();
        search.select();
        break;
      }
      case "?": toggleHelp(); break;
      case "Escape": toggleHelp(false); break;
      default: return;
    }
    event.preventDefault();
  }

  // -- relative times (the steps of formats.relative) -------------------------------------------------------

  var STEPS = [["year", 365 * 86400], ["month", 30 * 86400], ["day", 86400], ["hour", 3600], ["minute", 60]];

  function relative(ms, now) {
    var seconds = (now - ms) / 1000;
    var ahead = seconds < 0;
    seconds = Math.abs(seconds);
    for (var i = 0; i < STEPS.length; i++) {
      if (seconds >= STEPS[i][1]) {
        var count = Math.floor(seconds / STEPS[i][1]);
        var text = count + " " + STEPS[i][0] + (count === 1 ? "" : "s");
        return ahead ? "in " + text : text + " ago";
      }
    }
    return "just now";
  }

  function updateTimes() {
    var now = Date.now() + skewMs;
    document.querySelectorAll("time.rel[datetime]").forEach(function (time) {
      var ms = Date.parse(time.getAttribute("datetime"));
      if (!isNaN(ms)) time.textContent = relative(ms, now);
    });
  }

  // -- start ----------------------------------------------------------------------------------------------

  function start() {
    list = document.getElementById("entries");
    notice = document.getElementById("fresh-notice");
    var serverNow = Date.parse(document.body.dataset.now || "");
    if (!isNaN(serverNow)) skewMs = serverNow - Date.now();  // relative times by the server's clock
    document.addEventListener("keydown", onKey);
    var keys = document.getElementById("keys-button");
    if (keys) {
      keys.hidden = false;
      keys.addEventListener("click", function () { toggleHelp(); });
    }
    window.setInterval(updateTimes, 60 * 1000);
    if (list && notice && list.dataset.live) {
      notice.addEventListener("click", showFresh);
      schedule();
    }
  }

  if (document.readyState === "complete") start();
  else document.addEventListener("DOMContentLoaded", start);
})();
