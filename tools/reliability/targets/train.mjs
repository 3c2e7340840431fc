// Probes of rlvr train: kill -9 at random moments of a micro run (mid-step, mid-checkpoint, mid-export), resume
// each time, and compare the final model byte for byte with the uninterrupted run's; then flip one random bit of
// a random file of the last checkpoint, resume, and check that the damage is named and passed over.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../lib.mjs';

const BIN = join(ROOT, 'packages/reference-trainer/bin/rlvr.js');
const MICRO = {
  steps: 6,
  rollout: { prompts: 2, groupSize: 4, maxNewTokens: 24 },
  eval: { every: 3, problems: 4, n: 2, maxNewTokens: 24 },
  checkpointEvery: 1,
  keepCheckpoints: 3,
  sampleEvery: 2,
  samples: 2,
  backend: 'wasm',
};

/** Runs `rlvr train` (quiet unless `quiet` is false: warnings print only then); with `killAfterMs`, SIGKILLs it then. Resolves {code, signal, stderr}. */
function train(args, killAfterMs, quiet = true) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, 'train', ...args, ...(quiet ? ['-q'] : [])], {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (c) => (stderr += c));
    const timer = killAfterMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stderr });
    });
  });
}

/** sha256 of every file of the run's exported model, by name. */
function modelHash(runDir) {
  const dir = join(runDir, 'model');
  const h = createHash('sha256');
  for (const f of readdirSync(dir).sort()) h.update(f).update(readFileSync(join(dir, f)));
  return h.digest('hex');
}

export default {
  name: 'train',
  async run({ scale, log, rng }) {
    const root = mkdtempSync(join(tmpdir(), 'rlvr-reliability-train-'));
    try {
      const cfg = join(root, 'micro.json');
      writeFileSync(cfg, JSON.stringify(MICRO));
      log('uninterrupted micro run');
      const t0 = performance.now();
      const clean = await train(['--config', cfg, '--out', join(root, 'clean')]);
      if (clean.code !== 0) throw new Error(`the uninterrupted run failed: ${clean.stderr}`);
      const runMs = performance.now() - t0;
      const want = modelHash(join(root, 'clean'));
      const runs = Math.max(1, Math.round(4 * scale));
      const results = [];
      for (let r = 0; r < runs; r++) {
        const out = join(root, `killed-${r}`);
        let kills = 0;
        // kill at random moments until a run gets through; resume once the run directory has its config, a plain
        // re-run before that (a kill that early leaves nothing to resume)
        for (let attempt = 0; attempt < 20; attempt++) {
          const args = existsSync(join(out, 'config.json')) ? ['--out', out, '--resume'] : ['--config', cfg, '--out', out];
          const killAt = kills < 3 ? 1500 + rng() * Math.max(1, runMs - 1500) : undefined;
          const x = await train(args, killAt);
          if (x.code === 0) break;
          if (x.signal !== 'SIGKILL') throw new Error(`run ${r} (${args.join(' ')}): exit ${x.code}: ${x.stderr}`);
          kills++;
        }
        const same = modelHash(out) === want;
        log(`run ${r}: ${kills} kills, final model ${same ? 'bit-identical' : 'DIFFERENT'}`);
        results.push({ kills, bitIdentical: same });
      }
      // one flipped bit per resume, anywhere in the last checkpoint (tensor data, headers, meta, sums)
      const last = join('checkpoints', `step-${String(MICRO.steps).padStart(6, '0')}`);
      const files = readdirSync(join(root, 'clean', last), { recursive: true })
        .filter((f) => statSync(join(root, 'clean', last, f)).isFile())
        .sort();
      const flips = Math.max(1, Math.round(12 * scale));
      let named = 0;
      const silent = [];
      for (let k = 0; k < flips; k++) {
        const out = join(root, `flipped-${k}`);
        cpSync(join(root, 'clean'), out, { recursive: true });
        const file = files[Math.floor(rng() * files.length)];
        const path = join(out, last, file);
        const bytes = readFileSync(path);
        const at = Math.floor(rng() * bytes.length);
        bytes[at] ^= 1 << Math.floor(rng() * 8);
        writeFileSync(path, bytes);
        const x = await train(['--out', out, '--resume', '--steps', String(MICRO.steps)], undefined, false);
        // the damaged checkpoint named in a warning (a flip in SHA256SUMS may name the file whose line it broke)
        const seen = x.stderr.includes(`checkpoint ${join(out, last)} is damaged`) && (file === 'SHA256SUMS' || x.stderr.includes(path));
        if (seen && x.code === 0 && modelHash(out) === want) named++;
        else silent.push(`${file} byte ${at}: exit ${x.code}${seen ? ', named' : ', not named'}`);
        rmSync(out, { recursive: true, force: true });
      }
      log(`${flips} flipped bits in ${files.join(', ')}: ${named} named, passed over, and resumed to the same model`);
      return {
        runs,
        kills: results.reduce((a, r) => a + r.kills, 0),
        bitIdentical: results.filter((r) => r.bitIdentical).length,
        uninterruptedSeconds: Number((runMs / 1000).toFixed(1)),
        flips,
        flipsNamed: named,
        flipsNotNamed: silent,
      };
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  },
  failures(r) {
    return [
      ...(r.bitIdentical === r.runs ? [] : [`${r.runs - r.bitIdentical} of ${r.runs} killed runs ended with a different model`]),
      ...r.flipsNotNamed.map((f) => `a flipped bit not named and passed over: ${f}`),
    ];
  },
};
