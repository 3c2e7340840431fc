/**
 * `rlvr report` / `rlvr-report`: the command-line face of `writeReport`, a core `Command` that
 * the `rlvr` CLI composes. The charting libraries load only when a chart is drawn.
 */
import { formatBytes } from './html.js';
import type { Command } from '@rlvr/core';
import { intFlag, schemaUsageError, usageError } from '@rlvr/core';
import { ReportOptionsSchema } from './options.js';
import { writeReport } from './report.js';

export const REPORT_USAGE = `usage: rlvr report RUN_DIR [options]      (also installed as rlvr-report RUN_DIR [options])

Write one self-contained HTML file (inline SVG charts, no scripts, no network) for a run
directory holding metrics.jsonl, and optionally config.json, samples.jsonl and evals.jsonl;
or for a comparison directory (rlvr compare --out) holding compare.json: its table and
verdicts, and the learning-rate tuning of --tune (tables and curves).

options:
  --out FILE          output file (default RUN_DIR/report.html); its directory must exist
  --bins N            position bins of the U-shape figure (default 20)
  --hist-bins N       bins of the token-weight histogram (default 40)
  --samples N         sample completions shown as heatmaps (default 12)
  --sample-step N     show samples of this step only (default: the latest steps)
  --weights-from N    token-weight figures use samples from step N on (default: all)
  --weights-to N      ... and up to step N (inclusive)
  --max-points N      average longer metric curves into N points (default 1000)
  --title TEXT        page title (default: the run directory's name)
  -q, --quiet         print nothing on success
  -h, --help          this help`;

/** Option field -> flag, for messages. */
const FLAGS = {
  out: '--out',
  positionBins: '--bins',
  histogramBins: '--hist-bins',
  maxSamples: '--samples',
  sampleStep: '--sample-step',
  weightsFromStep: '--weights-from',
  weightsToStep: '--weights-to',
  maxPoints: '--max-points',
  title: '--title',
} as const;

export const reportCommand: Command = {
  summary: 'write a self-contained HTML report of a run directory',
  usage: REPORT_USAGE,
  positionals: true,
  options: {
    out: { type: 'string', short: 'o' },
    bins: { type: 'string' },
    'hist-bins': { type: 'string' },
    samples: { type: 'string' },
    'sample-step': { type: 'string' },
    'max-points': { type: 'string' },
    'weights-from': { type: 'string' },
    'weights-to': { type: 'string' },
    title: { type: 'string' },
    quiet: { type: 'boolean', short: 'q' },
  },
  async run({ values, positionals, io, prog }) {
    if (positionals.length !== 1)
      throw usageError(
        `expected one RUN_DIR, got ${positionals.length === 0 ? 'none' : positionals.map((p) => JSON.stringify(p)).join(' ')}`,
      );
    const input: Record<string, unknown> = { out: values.out, title: values.title };
    for (const [field, flag] of Object.entries(FLAGS)) {
      if (field !== 'out' && field !== 'title') input[field] = intFlag(values, flag.slice(2));
    }
    for (const k of Object.keys(input)) if (input[k] === undefined) delete input[k];
    const parsed = ReportOptionsSchema.safeParse(input);
    if (!parsed.success) throw schemaUsageError(parsed.error.issues, input, FLAGS);
    const result = await writeReport(positionals[0]!, parsed.data);
    if (values.quiet === true) return 0;
    for (const w of result.warnings) io.stderr.write(`${prog}: warning: ${w.replace(/\s*\n\s*/g, ' ')}\n`);
    io.stdout.write(`wrote ${result.path} (${formatBytes(result.bytes)}, ${result.charts} charts)\n`);
    return 0;
  },
};
