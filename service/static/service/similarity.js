// The similarity page: pointing at (or tabbing to) one region of a fragment outlines its partner on the
// other side too. The links work without this; a static file, since the Content-Security-Policy runs no
// inline script.
for (const region of document.querySelectorAll("a.frag")) {
  const partner = document.getElementById(region.getAttribute("href").slice(1));
  if (!partner) continue;
  const mark = (on) => { region.classList.toggle("partner", on); partner.classList.toggle("partner", on); };
  region.addEventListener("mouseenter", () => mark(true));
  region.addEventListener("mouseleave", () => mark(false));
  region.addEventListener("focus", () => mark(true));
  region.addEventListener("blur", () => mark(false));
}
