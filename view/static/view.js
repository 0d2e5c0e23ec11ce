// Keyboard navigation: j / k go to the next / previous failed attempt,
// u goes up (to the run, or to the runs). No key is taken while typing.
"use strict";
document.addEventListener("keydown", function (e) {
  var t = e.target;
  if (e.ctrlKey || e.metaKey || e.altKey || (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT" || t.isContentEditable))) {
    return;
  }
  var ids = { j: "next-failed", k: "prev-failed", u: "up" };
  var a = ids[e.key] && document.getElementById(ids[e.key]);
  if (a && a.href) {
    window.location.href = a.href;
  }
});
