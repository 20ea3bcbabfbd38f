// One-switch play, for players who can press only one switch: a highlight steps through left,
// stay and right at the player's scan interval; the one switch ("select") acts on what is
// highlighted. After each choice the scan starts again from "stay", the choice that changes
// nothing.
import { Emitter } from "../app/emitter.js";

export const SCAN_OPTIONS = ["left", "stay", "right"];

export class SwitchScanner extends Emitter {
  intervalMs = 1500;
  #index = 1;
  #timer = null;

  get running() {
    return this.#timer !== null;
  }

  get highlighted() {
    return SCAN_OPTIONS[this.#index];
  }

  start() {
    this.stop();
    this.#index = 1;
    this.emit("scan", { option: this.highlighted });
    this.#timer = setInterval(() => {
      this.#index = (this.#index + 1) % SCAN_OPTIONS.length;
      this.emit("scan", { option: this.highlighted });
    }, this.intervalMs);
  }

  stop() {
    clearInterval(this.#timer);
    this.#timer = null;
  }

  /** The switch was pressed: a move for left or right, nothing for stay; then scan afresh. */
  select() {
    if (!this.running) return;
    const option = this.highlighted;
    if (option !== "stay") this.emit("move", { direction: option, source: "switch" });
    this.start();
  }
}
