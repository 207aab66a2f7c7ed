// kvlake's UI: small progressive enhancements, no build step (CSP: no inline script).
"use strict";

// Dates arrive as Unix seconds; show them in the browser's time zone.
function showDates(root) {
  for (const el of root.querySelectorAll("time.date[data-unix]")) {
    const seconds = Number(el.dataset.unix);
    if (Number.isFinite(seconds) && seconds > 0) {
      el.textContent = new Date(seconds * 1000).toLocaleString();
    }
  }
}

// The upload form: a dropped file fills its file input; sending it goes through
// XMLHttpRequest for a progress bar, then the browser follows the server's answer
// (the object's page, or the error page). Without JavaScript the form posts as is.
function enhanceUpload(form) {
  const input = form.querySelector("input[type=file]");
  const zone = form.querySelector(".dropzone");
  const bar = form.querySelector("progress");
  const error = form.querySelector(".flash.error");
  if (zone && input) {
    zone.addEventListener("dragover", (event) => { event.preventDefault(); zone.classList.add("over"); });
    zone.addEventListener("dragleave", () => zone.classList.remove("over"));
    zone.addEventListener("drop", (event) => {
      event.preventDefault();
      zone.classList.remove("over");
      const files = event.dataTransfer ? event.dataTransfer.files : [];
      if (files.length > 1) {
        error.textContent = "drop one file at a time: nothing was uploaded";
        error.hidden = false;
      } else if (files.length === 1) {
        input.files = files;
        form.requestSubmit();
      }
    });
  }
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const request = new XMLHttpRequest();
    request.open("POST", form.action);
    bar.hidden = false;
    bar.value = 0;
    request.upload.addEventListener("progress", (progress) => {
      if (progress.lengthComputable) bar.value = Math.round((100 * progress.loaded) / progress.total);
    });
    request.addEventListener("load", () => {
      bar.value = 100;
      if (request.status < 400 && request.responseURL) {
        window.location.assign(request.responseURL);
      } else {
        // The error page's message, as text (never as HTML).
        const page = new DOMParser().parseFromString(request.responseText, "text/html");
        const message = page.querySelector("#error h1");
        error.textContent = message ? message.textContent : "the upload failed (" + request.status + ")";
        error.hidden = false;
      }
    });
    request.addEventListener("error", () => {
      error.textContent = "the upload could not reach the server; try again";
      error.hidden = false;
    });
    request.send(new FormData(form));
  });
}

// A live progress bar: poll the operation's JSON status (no reload) until it has finished.
const FINISHED = new Set(["completed", "completed_with_errors", "failed", "cancelled"]);
const POLL_MS = 1000;

function showProgress(box, op) {
  const done = op.deleted_count + op.failed_count + op.skipped_count;
  const bar = box.querySelector("progress");
  const finished = FINISHED.has(op.status);
  if (finished) {
    bar.value = 100;
  } else if (op.total_count) {
    // 100% means finished: the last batch's commit may still be running.
    bar.value = Math.min(99, Math.floor((100 * done) / op.total_count));
  } else {
    bar.removeAttribute("value"); // not counted yet: an indeterminate bar
  }
  box.querySelector(".percent").textContent = bar.hasAttribute("value") ? bar.value + "%" : "";
  box.querySelector(".op-status").textContent = op.status;
  box.querySelector(".op-summary").textContent = op.summary;
  box.querySelector(".op-rate").textContent = Math.round(op.rate_per_second) + "/s";
  box.querySelector(".op-eta").textContent =
    !finished && op.eta_seconds !== null ? "ETA " + Math.round(op.eta_seconds) + " s" : "";
  for (const el of document.querySelectorAll(".op-deleted")) el.textContent = op.deleted_count;
  return finished;
}

function follow(box) {
  if (box.hasAttribute("data-finished")) return;
  const poll = () => {
    fetch(box.dataset.statusUrl, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then((answer) => (answer.ok ? answer.json() : Promise.reject(answer.status)))
      .then((op) => {
        if (showProgress(box, op)) {
          box.setAttribute("data-finished", "");
          const cancel = document.getElementById("cancel");
          if (cancel) cancel.hidden = true;
        } else {
          window.setTimeout(poll, POLL_MS);
        }
      })
      .catch(() => window.setTimeout(poll, POLL_MS * 5)); // a hiccup: try again, slower
  };
  window.setTimeout(poll, POLL_MS);
}

document.addEventListener("DOMContentLoaded", () => {
  showDates(document);
  for (const form of document.querySelectorAll("form.upload")) enhanceUpload(form);
  for (const box of document.querySelectorAll(".progress[data-status-url]")) follow(box);
});
