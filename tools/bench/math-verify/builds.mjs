// CPU time per answer of several builds of @rlvr/math-verify on the same corpus, each in a process of its own, in alternating
// rounds (the order rotates every round) so that load from other work on a shared machine hits every build alike.
// Each build is a checkout whose packages/math-verify/dist is built; it is run with its own corpus profile (the
// options each source's rows are graded with at that commit) unless --profile-from names one checkout for all.
// CPU time is the child's process.cpuUsage() (user + system, every thread of it: the main thread does the grading,
// V8's GC and compiler threads add to it) around a single-threaded in-process loop, divided by the answers graded.
// Prints uptime before and after. Used for the bisect in docs/benchmarks/math-verify.md:
//   git worktree add --detach /tmp/mv-<sha> <sha> && (cd /tmp/mv-<sha> && npm ci && npx tsc -b packages/math-verify)
//   node tools/bench/math-verify/builds.mjs [--rounds 7] [--seconds 1] <label>=<checkout> ...
import { execSync, fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    seconds: { type: 'string', default: '1' },
    rounds: { type: 'string', default: '7' },
    'profile-from': { type: 'string' },
    warmup: { type: 'string', default: '3' },
    child: { type: 'boolean', default: false },
  },
});
const SECONDS = Number(values.seconds);
const here = fileURLToPath(new URL('../../../', import.meta.url));
const corpusPath = resolve(here, 'packages/math-verify/test/fixtures/math-verify-cases.jsonl');

const load = async (dir, file) => {
  const path = resolve(dir, file);
  if (!existsSync(path)) throw new Error(`${path} does not exist (build it first: npx tsc -b packages/math-verify)`);
  return import(pathToFileURL(path).href);
};

/**
 * One build in its own process (so that builds do not share a heap or the JIT's caches): grades the corpus once to
 * count agreement, warms up, then measures one round per message from the parent.
 */
async function child(dir) {
  const api = await load(dir, 'packages/math-verify/dist/index.js');
  const prof = values['profile-from']
    ? await load(values['profile-from'], 'packages/math-verify/test/corpus-profile.mjs')
    : await load(dir, 'packages/math-verify/test/corpus-profile.mjs');
  const items = prof.loadCorpus(corpusPath).map((row) => ({ row, p: prof.profileFor(row) }));
  // The verdicts, once: a build that grades differently is named with its agreement, so a speed-up is not a loss.
  const agree = items.filter((it) => prof.runRow(api, it.row, it.p).got === it.row.expected).length;
  /** Full passes over the corpus for about SECONDS: CPU microseconds per answer and answers per wall-clock second. */
  const measure = () => {
    let n = 0;
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    while (performance.now() - t0 < SECONDS * 1000) {
      for (const it of items) prof.runRow(api, it.row, it.p);
      n += items.length;
    }
    const wall = (performance.now() - t0) / 1000;
    const c = process.cpuUsage(c0);
    return { cpuUs: (c.user + c.system) / n, rate: n / wall };
  };
  process.on('message', (m) => {
    if (m === 'warmup') {
      for (let k = 0; k < Number(values.warmup); k++) measure();
      process.send({ agree, cases: items.length });
    } else if (m === 'round') process.send(measure());
    else process.exit(0);
  });
  process.send('ready');
}

if (values.child) await child(positionals[0]);
else {
  const uptime = () => execSync('uptime').toString().trim();
  console.log(`uptime before: ${uptime()}`);
  if (positionals.length === 0) throw new Error('name at least one build: <label>=<checkout directory>');
  const ask = (b, msg) =>
    new Promise((ok, fail) => {
      const died = (code) => fail(new Error(`build ${b.label} exited with ${code}`));
      b.proc.once('exit', died);
      b.proc.once('message', (m) => {
        b.proc.off('exit', died);
        ok(m);
      });
      if (msg !== undefined) b.proc.send(msg);
    });
  const builds = positionals.map((arg) => {
    const eq = arg.indexOf('=');
    const [label, dir] = eq < 0 ? [arg, arg] : [arg.slice(0, eq), arg.slice(eq + 1)];
    const args = ['--child', '--seconds', String(SECONDS), '--warmup', values.warmup, resolve(dir)];
    if (values['profile-from']) args.push('--profile-from', resolve(values['profile-from']));
    return { label, proc: fork(fileURLToPath(import.meta.url), args), cpuUs: [], rate: [] };
  });
  for (const b of builds) await ask(b);
  // Warm-up one build at a time, so that each has the machine to itself as much as the others do.
  for (const b of builds) Object.assign(b, await ask(b, 'warmup'));
  for (let r = 0; r < Number(values.rounds); r++) {
    for (let k = 0; k < builds.length; k++) {
      const b = builds[(r + k) % builds.length];
      const m = await ask(b, 'round');
      b.cpuUs.push(m.cpuUs);
      b.rate.push(m.rate);
    }
  }
  for (const b of builds) b.proc.send('exit');
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  // overFirst: the median over rounds of this build's CPU per answer over the first build's in the same round (a
  // paired ratio: load that changes between rounds cancels out more than in the ratio of the two medians).
  const first = builds[0].cpuUs;
  const result = builds.map((b) => ({
    build: b.label,
    corpusAgree: `${b.agree}/${b.cases}`,
    cpuMicrosecondsPerAnswer: +median(b.cpuUs).toFixed(1),
    minMax: [+Math.min(...b.cpuUs).toFixed(1), +Math.max(...b.cpuUs).toFixed(1)],
    overFirst: +median(b.cpuUs.map((x, r) => x / first[r])).toFixed(2),
    answersPerSecond: Math.round(median(b.rate)),
  }));
  console.table(result);
  console.log(
    JSON.stringify({ rounds: Number(values.rounds), secondsPerMeasurement: SECONDS, profileFrom: values['profile-from'] ?? 'own', result }),
  );
  console.log(`uptime after: ${uptime()}`);
}
