/**
 * Stop strings matched on the decoded BYTES of a completion as it grows token by token, so a
 * stop string split across tokens (or a token splitting a multi-byte character) is still found.
 * Each append scans only the bytes a new match could touch: the new bytes plus the longest
 * stop string minus one before them.
 */
export class StopMatcher {
  private readonly stops: Uint8Array[];
  private buf: Uint8Array;
  private len = 0;
  /** byte offset where the first stop string starts, once found; -1 before */
  matchAt = -1;

  constructor(stops: readonly string[], capacity = 256) {
    const te = new TextEncoder();
    this.stops = stops.map((s) => te.encode(s)).filter((b) => b.length > 0);
    this.buf = new Uint8Array(capacity);
  }

  /** Append one token's bytes; true when a stop string is now complete (the first one wins). */
  push(bytes: Uint8Array): boolean {
    if (this.len + bytes.length > this.buf.length) {
      const grown = new Uint8Array(Math.max(this.buf.length * 2, this.len + bytes.length));
      grown.set(this.buf.subarray(0, this.len));
      this.buf = grown;
    }
    const before = this.len;
    this.buf.set(bytes, this.len);
    this.len += bytes.length;
    if (this.matchAt >= 0 || this.stops.length === 0 || bytes.length === 0) return false;
    let best = -1;
    for (const s of this.stops) {
      // a match must end inside the new bytes: start in [before - |s| + 1, len - |s|]
      for (let start = Math.max(0, before - s.length + 1); start + s.length <= this.len; start++) {
        let ok = true;
        for (let j = 0; j < s.length && ok; j++) ok = this.buf[start + j] === s[j];
        if (ok) {
          if (best < 0 || start < best) best = start;
          break;
        }
      }
    }
    if (best < 0) return false;
    this.matchAt = best;
    return true;
  }

  /** The bytes so far, cut before the stop string when one matched. */
  text(): Uint8Array {
    return this.buf.subarray(0, this.matchAt >= 0 ? this.matchAt : this.len);
  }
}
