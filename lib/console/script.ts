/**
 * The console's one script (served at /console/assets/console.js; CSP `script-src 'self'`, no
 * inline script anywhere). Progressive enhancement only: every page works without it.
 *  - `<button data-copy="ID">`: copies the text of the element with that id, and says so in the
 *    page's live region (#live).
 *  - `<form data-confirm="Question?">`: asks in a dialog first; when confirmed the form is sent
 *    with `confirmed=yes`, which skips the server's confirmation page (the no-script path).
 *  - `<... data-refresh="SECONDS">`: reloads the page every so many seconds while it is shown,
 *    unless the person is typing in a field (a list with something still running).
 */
export const CONSOLE_JS = `'use strict';
(function () {
  function say(text) {
    var live = document.getElementById('live');
    if (live) { live.textContent = ''; setTimeout(function () { live.textContent = text; }, 50); }
  }
  document.addEventListener('click', function (event) {
    var button = event.target.closest ? event.target.closest('button[data-copy]') : null;
    if (!button) return;
    event.preventDefault();
    var source = document.getElementById(button.getAttribute('data-copy'));
    if (!source) return;
    var text = (source.value !== undefined ? source.value : source.textContent).trim();
    if (navigator.clipboard && navigator.clipboard.writeText) {
      navigator.clipboard.writeText(text).then(function () { say('Copied to the clipboard.'); }, function () { say('Copying failed: select the text and copy it.'); });
    } else {
      say('Copying is not available here: select the text and copy it.');
    }
  });
  document.addEventListener('submit', function (event) {
    var form = event.target;
    var question = form.getAttribute && form.getAttribute('data-confirm');
    if (!question) return;
    if (!window.confirm(question)) { event.preventDefault(); return; }
    if (!form.querySelector('input[name="confirmed"]')) {
      var input = document.createElement('input');
      input.type = 'hidden'; input.name = 'confirmed'; input.value = 'yes';
      form.appendChild(input);
    }
  });
  var refresh = document.querySelector('[data-refresh]');
  if (refresh) {
    var seconds = Math.max(5, parseInt(refresh.getAttribute('data-refresh'), 10) || 15);
    setInterval(function () {
      var active = document.activeElement;
      var typing = active && /^(INPUT|TEXTAREA|SELECT)$/.test(active.tagName);
      if (document.visibilityState === 'visible' && !typing) window.location.reload();
    }, seconds * 1000);
  }
})();
`
