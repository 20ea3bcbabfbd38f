// The optional input cool-down (0–500 ms, for tremor): a move closer than this to the one
// before is ignored, whichever input it came from, so a shaky double press is one move.
export class Cooldown {
  ms = 0;
  #last = -Infinity;

  allow(now = performance.now()) {
    if (this.ms > 0 && now - this.#last < this.ms) return false;
    this.#last = now;
    return true;
  }
}
