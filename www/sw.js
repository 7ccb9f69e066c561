// The service worker of the built site (dist/sw.js): the page works offline
// after the first visit. Only the build registers it (`cargo xtask dist` fills
// in the two constants below and names it in dist/index.html, which
// www/panels/notices/update.js reads); the source tree runs without it.
//
// What it does, and why:
//
// * install: caches every file of this build (FILES: the page, "./", and the
//   content-hashed assets/) in a cache of its own, `inbox-lab-<VERSION>`.
// * the page itself (a navigation): network first, so a new deployment is
//   picked up on the next load; from the cache when the network fails or
//   takes longer than NAVIGATION_TIMEOUT_MS (a workshop's bad Wi-Fi).
// * the assets: from the cache (their names change with their bytes, so a
//   cached one is never stale), else from the network.
// * everything else passes through untouched: relay.json, the webhook relay
//   (/hooks/...), POSTs.
// * activate: deletes the caches of older builds. It never touches OPFS,
//   where the reader's database lives: an update replaces files, not data.
//
// A new build is noticed by the browser itself: it fetches sw.js again on a
// navigation and compares the bytes (the version inside changes with every
// build). The new worker installs beside the old one and takes over once no
// tab runs the old build; until then the old one keeps serving its own files,
// so a tab that is still open never loses a worker script or wasm it needs.

const VERSION = 'source';
const FILES = [];

const CACHE = `inbox-lab-${VERSION}`;
const NAVIGATION_TIMEOUT_MS = 3000;

self.addEventListener('install', (event) => {
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(FILES)));
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    caches.keys().then((names) =>
      Promise.all(names.filter((name) => name.startsWith('inbox-lab-') && name !== CACHE).map((name) => caches.delete(name))),
    ),
  );
});

self.addEventListener('fetch', (event) => {
  const { request } = event;
  if (request.method !== 'GET') {
    return;
  }
  const scope = new URL(self.registration.scope);
  const url = new URL(request.url);
  if (url.origin !== scope.origin || !url.pathname.startsWith(scope.pathname)) {
    return;
  }
  if (request.mode === 'navigate') {
    event.respondWith(page(request));
  } else if (FILES.includes(url.pathname.slice(scope.pathname.length))) {
    event.respondWith(asset(request));
  }
});

/** The page: the network's if it answers in time, else this build's copy. */
async function page(request) {
  const fromNetwork = fetch(request);
  const late = new Promise((resolve) => setTimeout(resolve, NAVIGATION_TIMEOUT_MS, null));
  try {
    const response = await Promise.race([fromNetwork, late]);
    if (response !== null) {
      return response;
    }
  } catch {
    // Offline, or the host is down: the copy below.
  }
  const copy = await caches.match(new URL('./', self.registration.scope), { cacheName: CACHE });
  return copy ?? fromNetwork;
}

/**
 * An asset: this build's copy, else the network. The query is ignored when
 * looking it up: the name alone says which bytes (the database worker is
 * started as `worker-<hash>.js?storage=opfs`). But a worker takes its
 * `location` from the response's URL, and reads its settings from that
 * query: so a copy answering a request with a query is handed over as a new
 * response, which has no URL of its own and so keeps the request's.
 */
async function asset(request) {
  const copy = await caches.match(request, { cacheName: CACHE, ignoreSearch: true });
  if (copy === undefined) {
    return fetch(request);
  }
  if (new URL(request.url).search === '') {
    return copy;
  }
  return new Response(copy.body, { status: copy.status, statusText: copy.statusText, headers: copy.headers });
}
