// Keeps an open instance page current: it asks /console/live (a long-poll that answers when the instance commits, or
// after Console:LiveWait), then fetches the page again and swaps the parts that show the instance's state. The forms
// the person may be typing in are left alone. Served from this node; the console fetches nothing from elsewhere.
(function () {
  'use strict';
  const main = document.querySelector('main[data-live-instance]');
  if (!main) {
    return;
  }

  const id = main.dataset.liveInstance;
  let version = Number(main.dataset.liveVersion);
  let failures = 0;

  const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

  async function redraw() {
    const response = await fetch(window.location.href, { credentials: 'same-origin', headers: { Accept: 'text/html' } });
    if (!response.ok) {
      throw new Error('page ' + response.status);
    }

    const fresh = new DOMParser().parseFromString(await response.text(), 'text/html').querySelector('main[data-live-instance]');
    if (!fresh) {
      return false;
    }

    for (const region of fresh.querySelectorAll('[data-live-region]')) {
      const current = main.querySelector('[data-live-region="' + region.dataset.liveRegion + '"]');
      if (current) {
        current.replaceWith(document.importNode(region, true));
      }
    }

    version = Number(fresh.dataset.liveVersion);
    main.dataset.liveVersion = String(version);
    main.dataset.liveFinal = fresh.dataset.liveFinal;
    main.dataset.liveStatus = fresh.dataset.liveStatus;
    return fresh.dataset.liveFinal === 'true';
  }

  function announce(text) {
    const region = main.querySelector('[data-live-announce]');
    if (region) {
      region.innerHTML = '';
      const p = document.createElement('p');
      p.className = 'notice';
      p.textContent = text;
      region.appendChild(p);
    }
  }

  async function follow() {
    if (main.dataset.liveFinal === 'true') {
      return;
    }

    for (;;) {
      try {
        const response = await fetch('/console/live/instances/' + id + '?version=' + version, {
          credentials: 'same-origin',
          headers: { Accept: 'application/json' },
        });
        if (response.status === 401) {
          window.location.reload();
          return;
        }

        if (!response.ok) {
          throw new Error('live ' + response.status);
        }

        const change = await response.json();
        failures = 0;
        if (change.version > version) {
          const final = await redraw();
          announce('Updated: the instance is now ' + main.dataset.liveStatus + '.');
          if (final) {
            return;
          }
        }
      } catch (e) {
        // The node restarting, the network, a full node: back off (up to 30 s) and ask again.
        failures += 1;
        await pause(Math.min(30000, 500 * 2 ** Math.min(failures, 6)));
      }
    }
  }

  follow();
})();
