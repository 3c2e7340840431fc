/**
 * Stop strings matched on the decoded BYTES of a completion as it grows token by token, so a
 * stop string split across tokens (or a token splitting a multi-byte character) is still found.
 * Each append scans only the bytes a new match could touch: the new bytes plus the longest
 * stop string minus one before them (so a stop string completed while matching is off, as before
 * vLLM's `min_tokens`, is never found later, as in vLLM).
 */
export class StopMatcher {
  private readonly stops: Uint8Array[];
  private readonly strings: string[];
  /** the longest stop string, in bytes */
  private readonly longest: number;
  private buf: Uint8Array;
  private len = 0;
  /** byte offset where the first stop string starts, once found; -1 before */
  matchAt = -1;
  /** the stop string found, once found */
  matched: string | null = null;
  private matchLen = 0;
  /** where `text()` ends once finished, when the caller cuts it elsewhere (`cut`) */
  private end = -1;

  constructor(stops: readonly string[], capacity = 256) {
    const te = new TextEncoder();
    this.strings = stops.filter((s) => s.length > 0);
    this.stops = this.strings.map((s) => te.encode(s));
    this.longest = this.stops.reduce((m, s) => Math.max(m, s.length), 0);
    this.buf = new Uint8Array(capacity);
  }

  /** Bytes so far. */
  get length(): number {
    return this.len;
  }

  /**
   * Append one token's bytes; true when a stop string is now complete (the earliest one wins).
   * With `check` false the bytes are only appended (no stop string may end in them).
   */
  push(bytes: Uint8Array, check = true): boolean {
    if (this.len + bytes.length > this.buf.length) {
      const grown = new Uint8Array(Math.max(this.buf.length * 2, this.len + bytes.length));
      grown.set(this.buf.subarray(0, this.len));
      this.buf = grown;
    }
    const before = this.len;
    this.buf.set(bytes, this.len);
    this.len += bytes.length;
    if (!check || this.matchAt >= 0 || this.stops.length === 0 || bytes.length === 0) return false;
    let best = -1;
    let which = -1;
    this.stops.forEach((s, k) => {
      // a match must end inside the new bytes: start in [before - |s| + 1, len - |s|]
      for (let start = Math.max(0, before - s.length + 1); start + s.length <= this.len; start++) {
        let ok = true;
        for (let j = 0; j < s.length && ok; j++) ok = this.buf[start + j] === s[j];
        if (ok) {
          if (best < 0 || start < best) [best, which] = [start, k];
          break;
        }
      }
    });
    if (best < 0) return false;
    this.matchAt = best;
    this.matched = this.strings[which]!;
    this.matchLen = this.stops[which]!.length;
    return true;
  }

  /** End the text at byte `at` (a stop token's bytes left out). */
  cut(at: number): void {
    this.end = at;
  }

  /**
   * The bytes so far, cut before the stop string when one matched (after it with
   * `includeStop`), or where `cut` says.
   */
  text(includeStop = false): Uint8Array {
    if (this.end >= 0) return this.buf.subarray(0, this.end);
    if (this.matchAt < 0) return this.buf.subarray(0, this.len);
    return this.buf.subarray(0, includeStop ? this.matchAt + this.matchLen : this.matchAt);
  }

  /**
   * How many bytes of a completion still running can be shown (streamed): all but the last
   * `longest - 1`, which a stop string completed by a later token could start in.
   */
  settled(): number {
    return Math.max(0, this.len - Math.max(0, this.longest - 1));
  }
}
