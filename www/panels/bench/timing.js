// The measuring both benchmark workers share: this page's (benchworker.js) and the official
// build's peer (bench/official-worker.mjs, which `cargo xtask bench` serves as
// /www/official/worker.mjs beside this folder). One loop, one percentile rule, one tally check,
// so the two engines are timed and judged alike; the panel's burst (bench.js) reports its
// percentiles by the same rule.

const PROGRESS_STEPS = 50;

// Delivers events 0..n-1 through `deliver(i)`, timing each. Every answer must be `expected`
// ("applied" or "duplicate"); otherwise `fail(detail)` makes the error thrown.
export function timed(deliver, n, expected, progress, fail) {
  const latencies = new Float64Array(n);
  const every = Math.max(1, Math.floor(n / PROGRESS_STEPS));
  const t0 = performance.now();
  for (let i = 0; i < n; i += 1) {
    const start = performance.now();
    const outcome = deliver(i);
    latencies[i] = performance.now() - start;
    if (outcome !== expected) {
      throw fail(`event ${i} was ${outcome}, expected ${expected}`);
    }
    if ((i + 1) % every === 0) {
      progress(i + 1);
    }
  }
  return summary(latencies, performance.now() - t0);
}

// Nearest-rank percentiles, as `inbox_lab_bench`'s `Summary::of` computes them natively.
export function summary(latencies, totalMs) {
  const sorted = Float64Array.from(latencies).sort();
  const rank = (p) =>
    sorted.length === 0 ? 0 : sorted[Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length))) - 1];
  return {
    events: sorted.length,
    total_ms: totalMs,
    events_per_s: totalMs > 0 ? (sorted.length * 1000) / totalMs : 0,
    p50_ms: rank(50),
    p99_ms: rank(99),
    max_ms: sorted.length === 0 ? 0 : sorted[sorted.length - 1],
  };
}

// After `events` distinct events of 1 unit each: the balance, the inbox and the receipt counter
// all equal `events`, or the run is wrong (`fail(detail)` makes the error thrown).
export function checkTally(tally, events, fail) {
  if (tally.balance !== events || tally.inbox !== events || tally.last_receipt !== events) {
    throw fail(`after ${events} distinct events the database holds ${JSON.stringify(tally)}`);
  }
}
