// Test only: the database worker in a browser whose OPFS refuses to open.
//
// tests/e2e/hardening-fallback.test.mjs starts this module as a worker
// (`new Worker('www/db/opfs-refused.js?storage=opfs', {type: 'module'})`).
// It makes `navigator.storage.getDirectory()` reject with a SecurityError, as
// a private window's does, then runs the real database worker (./worker.js,
// which reads its settings from this module's URL): Rust's OPFS install fails
// for real and the fallback to memory runs, exactly as in such a browser.
//
// No page imports it, so the static build (dist/, bundled from the page's
// entry points by xtask/tools/dist.mjs) holds no test switch; the e2e layer
// checks that (xtask/src/test.rs).

Object.defineProperty(StorageManager.prototype, 'getDirectory', {
  configurable: true,
  value: () => Promise.reject(new DOMException('the browser refused OPFS (opfs-refused.js, a test)', 'SecurityError')),
});

// After the refusal is in place: a static import would run first.
await import('./worker.js');
