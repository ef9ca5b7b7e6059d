// Gatehouse web UI: progressive enhancements only; every page works without it.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  // "Select all" checkboxes: data-select-all names the boxes they set.
  document.querySelectorAll("input[data-select-all]").forEach(function (all) {
    all.addEventListener("change", function () {
      var name = all.getAttribute("data-select-all");
      all.form.querySelectorAll("input[type=checkbox][name='" + name + "']").forEach(function (box) {
        box.checked = all.checked;
      });
    });
  });
  // Migration diffs: show only the marked lines, or every line.
  document.querySelectorAll("[data-diff-toggle]").forEach(function (button) {
    button.addEventListener("click", function () {
      var diff = button.closest("[data-diff]");
      var on = diff.classList.toggle("only-marked");
      button.setAttribute("aria-pressed", on ? "true" : "false");
      button.textContent = on ? "Show every line" : "Show marked lines only";
    });
  });
  // Forms that change something irreversible ask first.
  document.querySelectorAll("form[data-confirm]").forEach(function (form) {
    form.addEventListener("submit", function (event) {
      var text = form.getAttribute("data-confirm");
      if (text && !window.confirm(text)) {
        event.preventDefault();
      }
    });
  });
});
