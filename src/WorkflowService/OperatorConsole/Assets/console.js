// Keeps an open instance page current: it asks /console/live (a long-poll that answers when the instance commits, or
// after Console:LiveWait), then fetches the page again and swaps the parts that show the instance's state. A part the
// person is working in (focus in it, or a field they changed) waits for the next redraw, unless the instance has ended.
// Served from this node; the console fetches nothing from elsewhere.
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

    const final = fresh.dataset.liveFinal === 'true';
    for (const region of fresh.querySelectorAll('[data-live-region]')) {
      const current = main.querySelector('[data-live-region="' + region.dataset.liveRegion + '"]');
      if (current && (final || !busy(current))) {
        current.replaceWith(document.importNode(region, true));
      }
    }

    version = Number(fresh.dataset.liveVersion);
    main.dataset.liveVersion = String(version);
    main.dataset.liveFinal = fresh.dataset.liveFinal;
    main.dataset.liveStatus = fresh.dataset.liveStatus;
    return final;
  }

  // Whether the person is working in this part of the page: the focus is in it, or a field in it holds what they typed.
  function busy(region) {
    if (region.contains(document.activeElement) && document.activeElement !== document.body) {
      return true;
    }

    for (const field of region.querySelectorAll('input, textarea')) {
      if (field.type !== 'hidden' && field.value !== field.defaultValue) {
        return true;
      }
    }

    for (const option of region.querySelectorAll('option')) {
      if (option.selected !== option.defaultSelected) {
        return true;
      }
    }

    return false;
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
        if (change.version > version) {
          const final = await redraw();
          announce('Updated: the instance is now ' + main.dataset.liveStatus + '.');
          if (final) {
            return;
          }
        }

        // Only a poll that ended well resets the back-off: a page that cannot be fetched keeps backing off.
        failures = 0;
      } catch (e) {
        // The node restarting, the network, a full node: back off (up to 30 s) and ask again.
        failures += 1;
        await pause(Math.min(30000, 500 * 2 ** Math.min(failures, 6)));
      }
    }
  }

  follow();
})();
