import { AdvantagesError } from '../errors.js';

/** What the command line asks for. */
export interface CliArgs {
  estimator: string;
  /** input file; undefined or `-` reads stdin */
  input: string | undefined;
  weights: boolean;
  configFile: string | undefined;
  /** estimator options from flags (`--sigma-w 0.5` -> sigmaW: 0.5) */
  options: Record<string, unknown>;
  help: boolean;
  list: boolean;
}

const OWN = new Set(['estimator', 'in', 'weights', 'config', 'help', 'list']);

/** `sigma-w` -> `sigmaW`. */
export function camelCase(flag: string): string {
  return flag.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** `sigmaW` -> `sigma-w`. */
export function kebabCase(key: string): string {
  return key.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase());
}

/** `0.5` -> 0.5, `true` -> true, anything else stays a string (zod then names the field if it is wrong). */
function optionValue(text: string): unknown {
  if (text === 'true') return true;
  if (text === 'false') return false;
  if (text.trim() !== '' && Number.isFinite(Number(text))) return Number(text);
  return text;
}

/** Parse argv (without node and the script). Throws `AdvantagesError('invalid_argument')`. */
export function parseArgs(argv: readonly string[]): CliArgs {
  const args: CliArgs = { estimator: 'grail', input: undefined, weights: false, configFile: undefined, options: {}, help: false, list: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '-h') {
      args.help = true;
      continue;
    }
    if (!arg.startsWith('--') || arg === '--') throw new AdvantagesError('invalid_argument', `unexpected argument "${arg}" (options start with --; the input file is --in FILE)`);
    const eq = arg.indexOf('=');
    const flag = eq > 0 ? arg.slice(2, eq) : arg.slice(2);
    const inline = eq > 0 ? arg.slice(eq + 1) : undefined;
    const value = (): string => {
      if (inline !== undefined) return inline;
      const next = argv[i + 1];
      if (next === undefined || (next.startsWith('--') && next.length > 2)) throw new AdvantagesError('invalid_argument', `--${flag} needs a value`);
      i++;
      return next;
    };
    if (flag === 'weights' || flag === 'help' || flag === 'list') {
      if (inline !== undefined) throw new AdvantagesError('invalid_argument', `--${flag} takes no value`);
      if (flag === 'weights') args.weights = true;
      else if (flag === 'help') args.help = true;
      else args.list = true;
    } else if (flag === 'estimator') args.estimator = value();
    else if (flag === 'in') args.input = value();
    else if (flag === 'config') args.configFile = value();
    else {
      const key = camelCase(flag);
      if (OWN.has(key)) throw new AdvantagesError('invalid_argument', `--${flag} is not an estimator option`);
      if (key in args.options) throw new AdvantagesError('invalid_argument', `--${flag} given twice`);
      args.options[key] = optionValue(value());
    }
  }
  return args;
}
