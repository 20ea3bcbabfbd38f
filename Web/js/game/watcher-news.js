// How many watch the player's game, in words, seldom (the number itself is shown, not said):
// only when it goes from nobody to someone and back, at most once every SPACING_MS, after the
// count has held for SETTLE_MS (a watcher who opens and closes the link at once is no news).
// Low-priority speech, so the player's own words go first (Web/js/feedback/announcer.js);
// news the announcer dropped is tried again a moment later rather than lost.
import { t, formatNumber } from "../app/i18n.js";

export const SPACING_MS = 10000;
const SETTLE_MS = 2000;
const RETRY_MS = 1500;

export class WatcherNews {
  #announcer;
  #allowed;
  #count = 0;
  #said = false;        // whether "watched" is what the player last heard (a game starts unwatched)
  #lastAt = -Infinity;
  #timer = null;

  /** `allowed()` says whether the player wants announcements (settings.announcements). */
  constructor(announcer, allowed = () => true) {
    this.#announcer = announcer;
    this.#allowed = allowed;
  }

  /** A `watchers` message's count. */
  update(count) {
    this.#count = Math.max(0, Number(count) || 0);
    this.#plan(SETTLE_MS);
  }

  /** A game ended or a new one began: nobody watches it, and nothing waits to be said. */
  reset() {
    clearTimeout(this.#timer);
    this.#timer = null;
    this.#count = 0;
    this.#said = false;
  }

  #plan(atLeastMs) {
    if (this.#timer || (this.#count > 0) === this.#said) return;
    const wait = Math.max(atLeastMs, this.#lastAt + SPACING_MS - performance.now());
    this.#timer = setTimeout(() => {
      this.#timer = null;
      const watched = this.#count > 0;
      if (watched === this.#said) return;  // it went back before it was said: no news
      if (!this.#allowed()) {
        this.#said = watched;  // not wanted now: nothing to catch up on later
        return;
      }
      const text = watched ? t("play.sayWatched", { count: formatNumber(this.#count) }) : t("play.sayUnwatched");
      if (!this.#announcer.say(text, { low: true })) {
        this.#plan(RETRY_MS);
        return;
      }
      this.#said = watched;
      this.#lastAt = performance.now();
    }, wait);
  }
}
