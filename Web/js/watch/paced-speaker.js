// Words about other people's games (standings, a ghost, a watched player) through the page's
// announcer, politely and seldom: at most one message every `gapMs`; what comes in between
// replaces what waits (only the newest news is said), and every message is low priority, so
// the announcer drops it when the player's own words are queued (Web/js/feedback/announcer.js).
const DEFAULT_GAP_MS = 6000;

export class PacedSpeaker {
  #announcer;
  #enabled;
  #gapMs;
  #lastAt = -Infinity;
  #waiting = null;
  #timer = null;

  /** `enabled()` says whether the player wants announcements at all (settings.announcements). */
  constructor(announcer, { enabled = () => true, gapMs = DEFAULT_GAP_MS } = {}) {
    this.#announcer = announcer;
    this.#enabled = enabled;
    this.#gapMs = gapMs;
  }

  say(text) {
    if (!text || !this.#enabled()) return;
    this.#waiting = text;
    this.#pump();
  }

  /** Forgets what waits (the game it was about has ended or is no longer followed). */
  clear() {
    this.#waiting = null;
    clearTimeout(this.#timer);
    this.#timer = null;
  }

  #pump() {
    if (this.#timer) return;
    const wait = Math.max(0, this.#lastAt + this.#gapMs - performance.now());
    this.#timer = setTimeout(() => {
      this.#timer = null;
      const text = this.#waiting;
      this.#waiting = null;
      if (!text || !this.#enabled()) return;
      this.#lastAt = performance.now();
      this.#announcer.say(text, { low: true });
    }, wait);
  }
}
