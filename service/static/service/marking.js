// The marking page's keys: 1-9 apply a rubric item, n and p move to the next and previous answer,
// Ctrl+Enter saves and moves on. A static file: the Content-Security-Policy runs no inline script.
document.addEventListener("keydown", (event) => {
  if (event.target.tagName === "TEXTAREA" || event.target.tagName === "INPUT" && event.target.type !== "checkbox") {
    if (event.ctrlKey && event.key === "Enter") { document.querySelector("button[value=next]").click(); }
    return;
  }
  const box = document.querySelector(`input[data-key="${event.key}"]`);
  if (box) { box.checked = !box.checked; total(); }
  else if (event.key === "n") { document.getElementById("next").click(); }
  else if (event.key === "p") { document.getElementById("previous").click(); }
  else if (event.key === "x") { split(event.target); }
  else if (event.ctrlKey && event.key === "Enter") { document.querySelector("button[value=next]").click(); }
});

// The running total before saving, as the gradebook will count it (gradebook.grades.mark_score): the
// ticked items' points plus the adjustment, within 0 and the question's points; two decimals at most.
const output = document.getElementById("running-total");
function total() {
  if (!output) { return; }
  const ticked = [...document.querySelectorAll("input[name=rubric]:checked")];
  if (ticked.length === 0) { output.textContent = "no item ticked"; return; }
  const adjustment = Number(document.querySelector("input[name=adjustment]").value) || 0;
  const sum = ticked.reduce((points, box) => points + Number(box.dataset.points), adjustment);
  const within = Math.min(Math.max(sum, 0), Number(output.dataset.most));
  output.textContent = String(Math.round(within * 100) / 100);
}
document.getElementById("mark")?.addEventListener("input", total);

// On a group's page, x splits out of the group the member whose box has the focus, or else the first
// whose own words differ from the representative's (its button posts the split form).
function split(focused) {
  const member = focused.closest?.("[data-member]") ?? document.querySelector("[data-member][data-differs]");
  member?.querySelector("button[name=split]")?.click();
}
