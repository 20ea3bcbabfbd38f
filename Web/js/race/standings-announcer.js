// Rivals heard, politely: from each `standings` it notes the player's own place when it
// changes and the other racers who crashed, and says them together at most once every
// SPACING_MS, as low-priority speech (Web/js/feedback/announcer.js drops it when the
// player's own words wait or were just said, so it never talks over the player's cues).
// Nothing is said when the player turned announcements or rival announcements off.
import { t } from "../app/i18n.js";

export const SPACING_MS = 5000;

export class StandingsAnnouncer {
  #lastSaidAt = -Infinity;
  #saidPlace = null;       // the place last said (or the first seen)
  #place = null;           // the place now
  #count = 0;
  #states = new Map();     // seat → state last seen
  #crashed = [];           // names not yet said
  #timer = null;

  /** `allowed()` says whether rival news may be spoken now (settings). */
  constructor(announcer, allowed) {
    this.announcer = announcer;
    this.allowed = allowed;
  }

  /** A new race: forget everything heard so far. */
  reset() {
    clearTimeout(this.#timer);
    this.#timer = null;
    this.#saidPlace = null;
    this.#place = null;
    this.#states.clear();
    this.#crashed = [];
  }

  /** One `standings` message; `you` is the player's seat (null for none). */
  update(racers, you) {
    this.#count = racers.length;
    for (const racer of racers) {
      const before = this.#states.get(racer.seat);
      if (racer.seat !== you && racer.state === "crashed" && before !== undefined && before !== "crashed") {
        this.#crashed.push({ name: racer.name, score: racer.score });
      }
      this.#states.set(racer.seat, racer.state);
      if (racer.seat === you) {
        this.#place = racer.place;
        if (this.#saidPlace === null) this.#saidPlace = racer.place;  // the start is no news
      }
    }
    this.#plan();
  }

  /** What would be said now, or "" (for tests of the wording and for the page). */
  pendingText() {
    const parts = this.#crashed.map((rival) => t("race.sayRivalCrashed", { name: rival.name, score: rival.score }));
    if (this.#place !== null && this.#place !== this.#saidPlace) {
      parts.push(t("race.sayYourPlace", { place: this.#place, count: this.#count }));
    }
    return parts.join(" ");
  }

  #plan() {
    if (this.#timer || !this.pendingText()) return;
    const wait = Math.max(0, this.#lastSaidAt + SPACING_MS - performance.now());
    this.#timer = setTimeout(() => {
      this.#timer = null;
      const text = this.pendingText();
      this.#crashed = [];
      this.#saidPlace = this.#place;
      if (!text || !this.allowed()) return;
      this.#lastSaidAt = performance.now();
      this.announcer.say(text, { low: true });
    }, wait);
  }
}
