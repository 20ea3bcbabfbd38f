// Speech through a polite ARIA live region that is in the page, empty, from load. Screen
// readers drop polite messages that come too fast, so messages are spaced out; low-priority
// ones (score milestones) are dropped rather than queued when others wait. Real-time lane
// information stays in sound: this is for low-rate events.
const GAP_MS = 1200;

export class Announcer {
  #region;
  #queue = [];
  #timer = null;
  #lastAt = 0;

  constructor(region) {
    this.#region = region;
  }

  /** Queues `text`; `{low: true}` drops it when something else is waiting. Returns whether
   * it was queued (a caller whose news must not be lost tries again later). */
  say(text, { low = false } = {}) {
    if (!text || !this.#region) return false;
    if (low && (this.#queue.length > 0 || performance.now() - this.#lastAt < GAP_MS)) return false;
    this.#queue.push(text);
    this.#pump();
    return true;
  }

  /** Drops what waits and says `text` next (a crash makes a queued milestone moot). */
  sayNow(text) {
    this.#queue = [];
    this.say(text);
  }

  #pump() {
    if (this.#timer || this.#queue.length === 0) return;
    const wait = Math.max(0, this.#lastAt + GAP_MS - performance.now());
    this.#timer = setTimeout(() => {
      const text = this.#queue.shift();
      // Clear, then set on the next frame: the same words twice are announced twice.
      this.#region.textContent = "";
      requestAnimationFrame(() => {
        this.#region.textContent = text;
        this.#lastAt = performance.now();
        this.#timer = null;
        this.#pump();
      });
    }, wait);
  }
}
