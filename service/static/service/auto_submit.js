// Forms marked data-auto-submit are sent as soon as the page is read (deep linking's signed answer,
// posted back to the course platform). A static file: the Content-Security-Policy runs no inline script.
for (const form of document.querySelectorAll("form[data-auto-submit]")) { form.submit(); }
