// Live notes: the notes page (template/learn/notes.html) opens a
// WebSocket to /api/learn/live and, whenever the account's notes change
// (in this tab, another tab, or another browser), fetches the page again
// and puts its fresh list in place. The page works without it.
(function () {
  'use strict';
  var section = document.getElementById('notes-section');
  if (!section || !window.WebSocket || !window.fetch) {
    return;
  }
  var delay = 1000;
  var opened = false;

  function refresh() {
    fetch(location.pathname + location.search, {credentials: 'same-origin', headers: {'Accept': 'text/html'}})
      .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
      .then(function (html) {
        var fresh = new DOMParser().parseFromString(html, 'text/html').getElementById('notes-section');
        if (fresh) {
          section.innerHTML = fresh.innerHTML;
        }
      })
      .catch(function () {});
  }

  function connect() {
    var ws = new WebSocket((location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/api/learn/live');
    ws.onopen = function () {
      if (opened) {
        refresh(); // changes made while it was closed
      }
      opened = true;
      delay = 1000;
      document.body.setAttribute('data-live', 'on');
    };
    ws.onmessage = refresh;
    ws.onclose = function () {
      document.body.setAttribute('data-live', 'off');
      setTimeout(connect, delay);
      delay = Math.min(delay * 2, 30000);
    };
  }
  connect();
})();
