// An online exam's page (service/templates/service/exam_take.html): each answer is saved on the
// server the moment it is chosen or typed. Without this script every answer is still a form with
// its own "Save" button; with it, a save is a small POST answered with JSON. A save that cannot
// reach the server (a dropped connection) is kept and sent again until it arrives; a save the
// server refuses (the exam ended) says why and locks the page. The clock counts down the seconds
// the server gave, and asks the server again now and then: its clock is the one that counts.
"use strict";

(function () {
  const clock = document.getElementById("clock");
  if (!clock) { return; }
  const status = document.getElementById("status");
  const answered = document.getElementById("answered");
  const left = document.getElementById("left");
  const pending = new Map(); // position -> the form whose latest value is not on the server yet
  let endsAt = Date.now() + 1000 * Number(clock.dataset.secondsLeft);
  let ended = false;
  let timer = null;

  function say(text, isError) {
    status.textContent = text;
    status.className = isError ? "error" : "";
  }

  function lock(reason) {
    ended = true;
    document.querySelectorAll("form.answer input, form.answer textarea, form.answer button").forEach(
      (field) => { field.disabled = true; });
    say(reason + " Reload the page to see your attempt.", true);
  }

  async function send(form) {
    const position = form.elements.position.value;
    const data = new FormData(form);
    data.delete("page"); // the server answers JSON, not the page again
    if (!data.has("value")) { data.set("value", ""); }
    const marker = form.querySelector(".saved");
    marker.textContent = "saving…";
    let response;
    try {
      response = await fetch(form.action, {
        method: "POST", body: data, credentials: "same-origin",
        headers: { "Accept": "application/json", "X-CSRFToken": data.get("csrfmiddlewaretoken") },
      });
    } catch (error) {
      pending.set(position, form);
      marker.textContent = "not saved yet";
      say("The connection to the server is lost: your answers are kept here and sent again as soon as it is back.", true);
      return;
    }
    let body = {};
    try { body = await response.json(); } catch (error) { body = {}; }
    if (response.ok) {
      if (pending.get(position) === form) { pending.delete(position); }
      marker.textContent = "saved";
      answered.textContent = body.answered;
      if (!pending.size) { say("All answers are saved.", false); }
      const link = document.querySelector('#numbers a[href="?q=' + position + '"]');
      if (link && !link.classList.contains("done")) { link.classList.add("done"); link.textContent += " ✓"; }
    } else {
      pending.delete(position);
      marker.textContent = "not saved";
      if (response.status === 409) { lock(body.error || "This answer was refused."); }
      else { say(body.error || "This answer was refused.", true); }
    }
  }

  function retry() {
    if (ended) { return; }
    for (const form of Array.from(pending.values())) { send(form); }
  }

  document.querySelectorAll("form.answer").forEach((form) => {
    form.addEventListener("submit", (event) => { event.preventDefault(); send(form); });
    form.querySelectorAll("input[type=radio]").forEach((radio) => {
      radio.addEventListener("change", () => send(form));
    });
    const text = form.querySelector("textarea");
    if (text) {
      let typing = null;
      text.addEventListener("input", () => {
        form.querySelector(".saved").textContent = "typing…";
        clearTimeout(typing);
        typing = setTimeout(() => send(form), 500);
      });
      text.addEventListener("blur", () => { clearTimeout(typing); send(form); });
    }
  });

  function tick() {
    const seconds = Math.max(0, Math.round((endsAt - Date.now()) / 1000));
    const minutes = Math.floor(seconds / 60);
    left.textContent = (minutes ? minutes + " min " : "") + (seconds % 60) + " s";
    if (seconds === 0 && !ended) {
      clearInterval(timer);
      window.setTimeout(() => window.location.reload(), 1500); // the server says how it ended
    }
  }

  async function resync() {
    try {
      const response = await fetch(clock.dataset.stateUrl, { credentials: "same-origin",
                                                             headers: { "Accept": "application/json" } });
      const state = await response.json();
      if (state.ended) { window.location.reload(); return; } // the server's page says how it ended
      endsAt = Date.now() + 1000 * state.seconds_left;
    } catch (error) { /* offline: the countdown goes on; the saves are kept */ }
    retry();
  }

  // Submit asks first, naming the questions not answered (on the server's count of this page's
  // answers: the numbers' ticks in one-at-a-time mode, the forms' values otherwise).
  function unanswered() {
    const numbers = document.querySelectorAll("#numbers a");
    if (numbers.length) {
      return Array.from(numbers).filter((link) => !link.classList.contains("done")).map((link) => link.textContent.trim());
    }
    return Array.from(document.querySelectorAll("form.answer")).filter((form) => {
      const text = form.querySelector("textarea");
      return text ? !text.value.trim() : !form.querySelector("input[type=radio]:checked");
    }).map((form) => form.elements.position.value);
  }

  const submit = document.getElementById("submit");
  if (submit) {
    submit.addEventListener("submit", (event) => {
      const missing = unanswered();
      const which = missing.length === 1 ? "question " + missing[0]
        : "questions " + missing.slice(0, -1).join(", ") + " and " + missing[missing.length - 1];
      const question = missing.length ? "Not answered: " + which + ". Submit the exam anyway?"
        : "Every question is answered. Submit the exam?";
      if (!window.confirm(question + " You cannot change your answers afterwards.")) { event.preventDefault(); }
    });
  }

  window.addEventListener("online", retry);
  window.setInterval(retry, 3000);
  window.setInterval(resync, 30000);
  timer = window.setInterval(tick, 1000);
  tick();
})();
