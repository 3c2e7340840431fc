/**
 * A small, fast, seeded PRNG (sfc32, 128-bit state) whose state can be saved
 * and restored, so that a resumed run draws exactly what an uninterrupted one
 * would. Not for cryptography.
 */
export class Rng {
  #a: number;
  #b: number;
  #c: number;
  #d: number;

  /** Seed from an integer or a string; equal seeds give equal streams. */
  constructor(seed: number | string = 0) {
    let h = typeof seed === 'number' ? hashString(`n:${seed}`) : hashString(`s:${seed}`);
    const next = (): number => {
      // splitmix32 spreads the seed over the four state words
      h = (h + 0x9e3779b9) | 0;
      let z = h;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.#a = next();
    this.#b = next();
    this.#c = next();
    this.#d = next();
    for (let i = 0; i < 12; i++) this.uint32();
  }

  /** A uniform 32-bit unsigned integer. */
  uint32(): number {
    const t = (((this.#a + this.#b) | 0) + this.#d) | 0;
    this.#d = (this.#d + 1) | 0;
    this.#a = this.#b ^ (this.#b >>> 9);
    this.#b = (this.#c + (this.#c << 3)) | 0;
    this.#c = (this.#c << 21) | (this.#c >>> 11);
    this.#c = (this.#c + t) | 0;
    return t >>> 0;
  }

  /** Uniform in [0, 1) with 53 bits of precision. */
  float(): number {
    return (this.uint32() * 2 ** 21 + (this.uint32() >>> 11)) / 2 ** 53;
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    if (!(Number.isInteger(n) && n > 0)) throw new RangeError(`Rng.int needs a positive integer bound, got ${n}`);
    return Math.floor(this.float() * n);
  }

  /** Standard normal draw (Box-Muller; no cached spare, so the state stays four words). */
  normal(): number {
    let u = 0;
    while (u === 0) u = this.float();
    const v = this.float();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }

  /** Shuffle in place (Fisher-Yates) and return the array. */
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      const tmp = items[i]!;
      items[i] = items[j]!;
      items[j] = tmp;
    }
    return items;
  }

  /** A new generator seeded from this one's next draws (for independent sub-streams). */
  fork(): Rng {
    return new Rng(`${this.uint32()}:${this.uint32()}`);
  }

  /** The state as four unsigned 32-bit integers (JSON-safe). */
  getState(): [number, number, number, number] {
    return [this.#a >>> 0, this.#b >>> 0, this.#c >>> 0, this.#d >>> 0];
  }

  setState(state: readonly number[]): this {
    if (state.length !== 4 || !state.every((x) => Number.isInteger(x) && x >= 0 && x <= 0xffffffff)) {
      throw new RangeError('Rng state must be four unsigned 32-bit integers');
    }
    [this.#a, this.#b, this.#c, this.#d] = state.map((x) => x | 0) as [number, number, number, number];
    return this;
  }

  static fromState(state: readonly number[]): Rng {
    return new Rng(0).setState(state);
  }
}

/** FNV-1a over UTF-16 code units: a stable 32-bit hash for seeding. */
function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** The sampling seed of training step `step` of a run seeded `seed`: distinct per step, the same for every estimator (a uint32). */
export function stepSeed(seed: number, step: number): number {
  return (Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) + step) >>> 0;
}
