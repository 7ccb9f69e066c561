// The database's ops: what each one is, said once, read by both sides.
//
// An op is a call of the console API and a request to the database worker of
// the same name: `inboxLab.race.step(1)` sends `{op: "race.step", args:
// {delivery: 1}}` (www/lib/rpc.js's shape). client.js builds `inboxLab` from
// this table; worker.js answers each op with its handler of the same name
// (`handlersFor` checks that there is exactly one). README.md ("The console
// API") says what each call answers. Adding an op: one entry here, one
// handler in worker.js.
//
//   args        the call's positional arguments, by the names they are sent under
//   options     the names read from the options object after them; with `strict`,
//               options that are not an object are refused (bad_options)
//   reads       it changes no table the page shows: after any other op, every tab
//               refreshes its tables
//   repeatable  running it twice changes nothing, so a follower tab sends it again
//               to a new owner tab when the old one took it and went away before
//               answering (tabs.js)
//   background  the requests after it do not wait for its reply: foreign work,
//               run in a worker of its own (foreign.js)
//   tab         answered by the tab that runs the worker, not by the worker
//   full        run by the page's full module (www/pkg-full/), which the worker
//               loads and hands the database to the first time such an op
//               comes (worker.js, `handOver`); so does a delivery by a mistaken
//               handler. Until then every op runs in the start module (www/pkg/).

const DELIVERY = { options: ['fault', 'handler'], strict: true };
const READ = { reads: true, repeatable: true };
const FULL = { full: true };

export const OPS = {
  deliver: { args: ['event'], ...DELIVERY },
  checkDelivery: { args: ['event'], ...DELIVERY, reads: true },
  deliverMany: { args: ['events'], options: ['handler'], strict: true },
  deliverJson: { args: ['text'], options: ['fault'], strict: true, ...FULL },
  tables: { options: ['newest'], strict: true, ...READ },
  reset: {},
  exportRaw: { ...READ, ...FULL },
  salvage: FULL,
  addAccount: { args: ['account_id'] },
  killWorker: { tab: true },
  query: { args: ['sql'], ...READ, background: true },
  cancel: { args: ['tickets'], ...READ },
  exportDatabase: READ,
  importDatabase: { args: ['bytes'], background: true, ...FULL },
  applySource: READ,
  runScenario: { reads: true, ...FULL },
  'step.start': { args: ['event'], options: ['fault'], ...FULL },
  'step.next': FULL,
  'step.throw': FULL,
  'race.reset': { args: ['deliveries'], reads: true, ...FULL },
  'race.start': { args: ['handler'], reads: true, ...FULL },
  'race.step': { args: ['delivery'], reads: true, ...FULL },
  'race.explore': { args: ['handler'], reads: true, ...FULL },
  'judge.run': { args: ['text', 'deliveries'], options: ['seconds', 'seed'], reads: true, background: true },
  'judge.runWorkshop': { args: ['deliveries'], options: ['seconds', 'seed'], reads: true, background: true },
  'judge.replay': { args: ['text', 'deliveries', 'schedule', 'seed'], reads: true, background: true },
  'judge.replayWorkshop': { args: ['deliveries', 'schedule', 'seed'], reads: true, background: true },
  'judge.builtin': { args: ['name'], reads: true },
  'judge.handlers': { reads: true },
  'scheme.deliver': { args: ['event'], options: ['strategy', 'crash'], ...FULL },
  'scheme.dispatchOne': { options: ['crash'], ...FULL },
  'scheme.dispatch': { options: ['crash'], ...FULL },
  'scheme.redeliver': { args: ['event'], ...FULL },
  'scheme.effects': { reads: true, ...FULL },
  'scheme.receivedAt': { args: ['source', 'event_id'], reads: true, ...FULL },
  'scheme.resetReceiver': { options: ['dedup'], ...FULL },
  'scheme.shown': { reads: true, ...FULL },
  'scheme.outbox': { reads: true },
  'scheme.activate': { args: ['source', 'event_id', 'order_id'], ...FULL },
  'scheme.clock': { reads: true, ...FULL },
  'scheme.advanceClock': { args: ['ms'], ...FULL },
  'scheme.purge': { args: ['keep_ms'], ...FULL },
  'hooks.secret': { args: ['source'], ...FULL },
  'hooks.rotate': { args: ['source'], ...FULL },
  'hooks.sign': { args: ['source', 'id', 'timestamp', 'body'], ...FULL },
  'hooks.receive': { args: ['relayed'], options: ['verify'], ...FULL },
  'hooks.forget': FULL,
};

/**
 * The worker's `handlers` (op name → function) as rpc.js's `serve` takes
 * them; throws, naming it, if an op of the table has no handler or a handler
 * no op.
 */
export function handlersFor(handlers) {
  const ops = Object.keys(OPS).filter((op) => !OPS[op].tab);
  const odd = [...ops.filter((op) => !(op in handlers)), ...Object.keys(handlers).filter((op) => !ops.includes(op))];
  if (odd.length > 0) {
    throw new Error(`ops.js and worker.js disagree about: ${odd.join(', ')}`);
  }
  return new Map(Object.entries(handlers));
}
