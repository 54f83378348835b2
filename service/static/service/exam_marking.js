// The exam marking page's keys: Ctrl+Enter saves and moves on; n and p (outside the fields) move to
// the next and previous answer. A static file: the Content-Security-Policy runs no inline script.
document.addEventListener("keydown", (event) => {
  if (event.ctrlKey && event.key === "Enter") { document.querySelector("button[value=next]").click(); return; }
  if (event.target.tagName === "TEXTAREA" || event.target.tagName === "INPUT") { return; }
  if (event.key === "n") { document.getElementById("next").click(); }
  else if (event.key === "p") { document.getElementById("previous").click(); }
});
