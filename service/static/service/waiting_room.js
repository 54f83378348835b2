// An online exam's waiting room (service/templates/service/exams/exam_start.html): the page counts down
// the milliseconds the server gave until the exam opens (never the device's own time of day, which
// may be wrong: only the time elapsed since the page came counts, and a sleeping laptop's too), then posts the start form once, a moment later drawn
// within the spread the server gave, so that a class's starts arrive over a second or two. It never
// reloads the page while waiting. An exam with an access code that was not given yet waits for it.
"use strict";

(function () {
  const room = document.getElementById("waiting-room");
  if (!room) { return; }
  const form = document.getElementById("start");
  const countdown = document.getElementById("countdown");
  const status = document.getElementById("waiting-status");
  const begun = Date.now();
  const wait = Number(room.dataset.waitingMs) + Math.random() * Number(room.dataset.spreadMs || 0);
  let started = false;

  function shown(ms) {
    const seconds = Math.max(0, Math.ceil(ms / 1000));
    const hours = Math.floor(seconds / 3600);
    const minutes = Math.floor((seconds % 3600) / 60);
    return (hours ? hours + " h " : "") + (hours || minutes ? minutes + " min " : "") + (seconds % 60) + " s";
  }

  function start() {
    const code = form.elements.code;
    if (code && !code.value.trim()) {
      status.textContent = "The exam is open: type the access code the proctor gives, then press the button.";
      form.querySelector("button").textContent = "Start the exam";
      code.focus();
      return;
    }
    started = true;
    form.querySelector("button").disabled = true;
    status.textContent = "Starting your attempt…";
    form.submit();
  }

  function tick() {
    if (started) { return; }
    const left = wait - (Date.now() - begun);
    countdown.textContent = shown(left);
    if (left <= 0) { clearInterval(timer); start(); }
  }

  const timer = window.setInterval(tick, 250);
  tick();
})();
