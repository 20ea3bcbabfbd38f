// Holding the one switch pauses a race (docs/GAME_RULES.md, "One-switch play"). The press
// itself still acts at once (a dodge, or the scan's choice), so holding never slows a dodge:
// a press held on past HOLD_MS is, in addition, a request to pause.
export const HOLD_MS = 800;  // well past a quick press (~100–250 ms), short of a wait that feels stuck

/** One press at a time: `down(key)` starts the count, `up(key)` ends it; `onHold` runs once
 * when the same press is still down after `ms`. */
export class SwitchHold {
  #timer = null;
  #key = null;
  /** Whether the press now down (or the last one) reached the hold. */
  held = false;

  constructor(onHold, ms = HOLD_MS) {
    this.onHold = onHold;
    this.ms = ms;
  }

  down(key) {
    this.up();
    this.#key = key;
    this.held = false;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.held = true;
      this.onHold(key);
    }, this.ms);
  }

  /** A press is down and has not reached the hold yet. */
  get counting() {
    return this.#timer !== null;
  }

  /** The hold is reached now, before its time: the press is a pause from here on (its release
   * is no press). Used when waiting for the hold would let a step land that the player,
   * holding their only switch, cannot answer (Web/js/game/controller.js, the hold guard). */
  reachNow() {
    if (this.#timer === null) return;
    clearTimeout(this.#timer);
    this.#timer = null;
    this.held = true;
    this.onHold(this.#key);
  }

  /** The press ended (or was lost: the page lost focus); `key` must be the one pressed, if given. */
  up(key) {
    if (key !== undefined && key !== this.#key) return;
    clearTimeout(this.#timer);
    this.#timer = null;
    this.#key = null;
  }
}
