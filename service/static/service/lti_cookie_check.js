// LTI login, step one, in the course platform's frame: the launch needs the tool's cookies, which
// some browsers refuse to a site in another's frame. If a test cookie is kept, go on to the login
// address (marked as checked); else offer it in a new window, where the cookies are the tool's own.
// pylti1p3's check, as a static file: the Content-Security-Policy runs no inline script.
const link = document.getElementById("lti-continue");
const secure = location.protocol === "https:" ? "; SameSite=None; Secure" : "";
document.cookie = "lti1p3_test_cookie=1; path=/" + secure;
if (document.cookie.indexOf("lti1p3_test_cookie") !== -1) {
  document.cookie = "lti1p3_test_cookie=1; path=/; expires=Thu, 01-Jan-1970 00:00:01 GMT" + secure;
  document.getElementById("lti-loading").hidden = false;
  location.href = link.href;
} else {
  document.getElementById("lti-no-cookies").hidden = false;
  link.addEventListener("click", () => { setTimeout(() => { link.remove(); }, 0); });
}
