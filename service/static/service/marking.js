// The marking page's keys: 1-9 apply a rubric item, n and p move to the next and previous answer,
// Ctrl+Enter saves and moves on. A static file: the Content-Security-Policy runs no inline script.
document.addEventListener("keydown", (event) => {
  if (event.target.tagName === "TEXTAREA" || event.target.tagName === "INPUT" && event.target.type !== "checkbox") {
    if (event.ctrlKey && event.key === "Enter") { document.querySelector("button[value=next]").click(); }
    return;
  }
  const box = document.querySelector(`input[data-key="${event.key}"]`);
  if (box) { box.checked = !box.checked; }
  else if (event.key === "n") { document.getElementById("next").click(); }
  else if (event.key === "p") { document.getElementById("previous").click(); }
  else if (event.ctrlKey && event.key === "Enter") { document.querySelector("button[value=next]").click(); }
});
