// regua review page: keyboard shortcuts, time scrubber, masks on demand.
// Loaded as a static file (the Content-Security-Policy forbids inline scripts).
(function () {
  "use strict";
  var form = document.getElementById("review-form");
  if (!form) { return; }

  var keys = { p: "pass", f: "fail", u: "uncertain", n: "not_applicable" };
  var submit = document.getElementById("submit-review");
  var note = document.getElementById("note");
  var chosen = document.getElementById("chosen");

  function selected() {
    var el = form.querySelector("input[name=status]:checked");
    return el ? el.value : null;
  }
  function refresh() {
    var s = selected();
    submit.disabled = !s;
    if (chosen) { chosen.textContent = s ? s.replace("_", " ") : "nothing yet"; }
  }
  function choose(status) {
    var el = form.querySelector("input[name=status][value=" + status + "]");
    if (el) { el.checked = true; el.focus(); refresh(); }
  }
  form.addEventListener("change", refresh);
  form.addEventListener("submit", function (ev) {
    if (!selected()) { ev.preventDefault(); }
  });
  refresh();

  // Frames: a scrubber over the sampled times (animated tasks).
  var frames = Array.prototype.slice.call(document.querySelectorAll("#frame-list li"));
  var img = document.getElementById("frame-img");
  var scrub = document.getElementById("scrub");
  var out = document.getElementById("scrub-time");
  var timeField = document.getElementById("time_s");
  var maskGroups = Array.prototype.slice.call(document.querySelectorAll(".masks[data-time]"));
  var masksOn = false;

  function show(i) {
    if (!frames.length) { return; }
    if (typeof clearOverlay === "function") { clearOverlay(); }
    i = Math.max(0, Math.min(frames.length - 1, i));
    var li = frames[i];
    img.src = li.getAttribute("data-url");
    var t = li.getAttribute("data-time");
    img.alt = "Rendered frame at " + t + " s";
    if (scrub) { scrub.value = String(i); }
    if (out) { out.textContent = Number(t).toFixed(2) + " s"; }
    if (timeField) { timeField.value = t; }
    maskGroups.forEach(function (g) {
      g.classList.toggle("hidden", !masksOn || g.getAttribute("data-time") !== t);
    });
  }
  if (scrub) {
    scrub.addEventListener("input", function () { show(Number(scrub.value)); });
  }
  var maskBtn = document.getElementById("toggle-masks");
  function toggleMasks() {
    masksOn = !masksOn;
    if (!masksOn && typeof clearOverlay === "function") { clearOverlay(); }
    if (maskBtn) { maskBtn.setAttribute("aria-pressed", masksOn ? "true" : "false"); }
    if (maskBtn) { maskBtn.textContent = masksOn ? "Hide masks (M)" : "Show masks (M)"; }
    show(scrub ? Number(scrub.value) : 0);
  }
  if (maskBtn) { maskBtn.addEventListener("click", toggleMasks); }

  // Clicking a mask overlays it on the frame (multiply: the part stays, the rest goes dark).
  var overlay = document.getElementById("mask-overlay");
  var picks = Array.prototype.slice.call(document.querySelectorAll(".mask-pick"));
  function clearOverlay() {
    if (overlay) { overlay.classList.add("hidden"); overlay.removeAttribute("src"); }
    picks.forEach(function (p) { p.setAttribute("aria-pressed", "false"); });
  }
  picks.forEach(function (btn) {
    btn.addEventListener("click", function () {
      var on = btn.getAttribute("aria-pressed") === "true";
      clearOverlay();
      if (!on && overlay) {
        overlay.src = btn.getAttribute("data-url");
        overlay.classList.remove("hidden");
        btn.setAttribute("aria-pressed", "true");
      }
    });
  });

  document.addEventListener("keydown", function (ev) {
    var t = ev.target;
    var typing = t && (t.tagName === "TEXTAREA" || (t.tagName === "INPUT" && t.type !== "radio"));
    if (typing) {
      if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey) && selected()) {
        ev.preventDefault(); form.requestSubmit();
      } else if (ev.key === "Escape") { t.blur(); }
      return;
    }
    if (ev.ctrlKey || ev.metaKey || ev.altKey) { return; }
    var k = ev.key.toLowerCase();
    if (keys[k]) { ev.preventDefault(); choose(keys[k]); return; }
    if (k === "enter" && selected()) { ev.preventDefault(); form.requestSubmit(); return; }
    if (k === "e") { ev.preventDefault(); note.focus(); return; }
    if (k === "m" && maskBtn) { ev.preventDefault(); toggleMasks(); return; }
    var skip = document.getElementById("skip");
    if (k === "s" && skip) { ev.preventDefault(); window.location.assign(skip.href); return; }
    if (scrub && (k === "arrowright" || k === "arrowleft" || k === "." || k === ",")) {
      ev.preventDefault();
      show(Number(scrub.value) + ((k === "arrowright" || k === ".") ? 1 : -1));
    }
  });
  show(0);
})();
