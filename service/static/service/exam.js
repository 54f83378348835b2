// An online exam's page (service/templates/service/exams/exam_take.html): each answer is saved on the
// server the moment it is chosen or typed. Without this script every answer is still a form with
// its own "Save" button; with it, a save is a small POST answered with JSON. A save that cannot
// reach the server (a dropped connection) is kept and sent again until it arrives; a save the
// server refuses (the exam ended) says why and locks the page. The clock counts down the seconds
// the server gave, and asks the server again now and then: its clock is the one that counts.
// The exam open in two tabs (or on two devices): each save carries the version of the answer this
// page last read; the server refuses one that another page overtook (never overwriting it), and this
// page then shows the newer answer and keeps what was typed here beside it, to choose. Coming back to
// the tab, or every 30 s, the page asks for the answers saved, and takes in (saying so) any changed
// elsewhere that it has no unsaved change to.
"use strict";

(function () {
  const clock = document.getElementById("clock");
  if (!clock) { return; }
  // The page may be the answer to the start's post (one request a student at a class's start): this
  // makes a reload of it read the page, rather than ask to send the start again.
  window.history.replaceState(null, "", window.location.href);
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

  function questionOf(form) { return form.elements.position.value; }

  function setVersion(form, version) { form.elements.version.value = "v:" + (version || ""); }

  // A save the server refused as stale: the newer answer shown, this page's own kept beside it.
  function conflict(form, body) {
    const position = questionOf(form);
    const text = form.querySelector("textarea");
    setVersion(form, body.version);
    form.querySelector(".conflict")?.remove();
    if (text) {
      const mine = text.value;
      text.value = body.value;
      if (mine.trim() && mine !== body.value) {
        const box = document.createElement("div");
        box.className = "conflict alert alert-warning mt-2";
        const said = document.createElement("p");
        said.textContent = "Question " + position + " was changed in another tab or on another device: the box above now " +
          "shows the answer saved there. What you typed here, not saved:";
        const kept = document.createElement("textarea");
        kept.className = "form-control mb-2"; kept.rows = 4; kept.readOnly = true; kept.value = mine;
        kept.setAttribute("aria-label", "What you typed here, not saved");
        const use = document.createElement("button");
        use.type = "button"; use.className = "btn btn-sm btn-primary"; use.textContent = "Use my text instead";
        use.addEventListener("click", () => { text.value = kept.value; box.remove(); send(form); });
        box.append(said, kept, use);
        form.append(box);
      }
    } else {
      const chosen = form.querySelector("input[type=radio]:checked");
      form.querySelectorAll("input[type=radio]").forEach((radio) => { radio.checked = radio.value === body.value; });
      if (chosen && chosen.value !== body.value) {
        say("Question " + position + " was answered " + (body.value || "nothing") + " in another tab or on another " +
            "device; this tab had chosen " + chosen.value + ": choose again if you meant " + chosen.value + ".", true);
      }
    }
    form.querySelector(".saved").textContent = "changed elsewhere";
    if (text) { say("Question " + position + " was changed in another tab or on another device: nothing was overwritten.", true); }
  }

  async function send(form) {
    if (form.dataset.sending) { form.dataset.again = "1"; return; } // one save of a question at a time
    form.dataset.sending = "1";
    try { await sendNow(form); } finally {
      delete form.dataset.sending;
      if (form.dataset.again) { delete form.dataset.again; send(form); }
    }
  }

  async function sendNow(form) {
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
      setVersion(form, body.version);
      marker.textContent = "saved";
      answered.textContent = body.answered;
      if (!pending.size) { say("All answers are saved.", false); }
      const link = document.querySelector('#numbers a[href="?q=' + position + '"]');
      if (link && !link.classList.contains("done")) { link.classList.add("done"); link.textContent += " ✓"; }
    } else {
      pending.delete(position);
      marker.textContent = "not saved";
      if (body.stale) { conflict(form, body); }
      else if (response.status === 409) { lock(body.error || "This answer was refused."); }
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
      takeIn(state);
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

  // The answers another tab or device saved, taken in where this page has no unsaved change to them.
  function takeIn(state) {
    const changed = [];
    document.querySelectorAll("form.answer").forEach((form) => {
      const position = questionOf(form);
      const version = (state.versions || {})[position] || "";
      if (form.elements.version.value === "v:" + version) { return; }
      const marker = form.querySelector(".saved");
      if (pending.has(position) || form.dataset.sending || marker.textContent === "typing…") { return; } // its save will tell
      const value = (state.answers || {})[position] || "";
      const text = form.querySelector("textarea");
      if (text) { text.value = value; }
      else { form.querySelectorAll("input[type=radio]").forEach((radio) => { radio.checked = radio.value === value; }); }
      setVersion(form, version);
      marker.textContent = "changed elsewhere";
      changed.push(position);
    });
    if (changed.length) {
      say((changed.length === 1 ? "Question " + changed[0] + " was" : "Questions " + changed.join(", ") + " were") +
          " changed in another tab or on another device: this page now shows " +
          (changed.length === 1 ? "that answer." : "those answers."), true);
    }
  }

  document.addEventListener("visibilitychange", () => { if (document.visibilityState === "visible") { resync(); } });
  window.addEventListener("online", retry);
  window.setInterval(retry, 3000);
  window.setInterval(resync, 30000);
  timer = window.setInterval(tick, 1000);
  tick();
})();
