// One-switch play outside a race (docs/GAME_RULES.md, "One-switch play"): while a game is
// paused and on the game-over panel, a highlight steps through that panel's buttons at the
// player's scan interval and the one switch activates the highlighted one. Focus follows the
// highlight, so a screen reader, a magnifier and the focus ring all stay on it; the class
// `switch-highlight` marks it in every display mode (Web/css/play.css).
import { Emitter } from "../app/emitter.js";

export const HIGHLIGHT_CLASS = "switch-highlight";
// Each choice is said through the announcer, which spaces its messages 1.2 s apart
// (Web/js/feedback/announcer.js): a faster highlight would be heard a choice late, so with
// announcements on it never moves faster than that.
const SPOKEN_CHOICE_MS = 1200;

/** How long the highlight stays on each button: the player's scan interval (controls.scanIntervalMs), never shorter than speech allows. */
export function menuIntervalMs(settings) {
  return Math.max(settings.controls.scanIntervalMs, settings.announcements ? SPOKEN_CHOICE_MS : 0);
}

/** A control the player can see and use now. */
export function usable(element) {
  return Boolean(element?.isConnected) && !element.disabled && !element.closest("[hidden]") && element.getClientRects().length > 0;
}

export class MenuScanner extends Emitter {
  intervalMs = 1500;
  #choices = () => [];
  #current = null;
  #timer = null;

  get running() {
    return this.#timer !== null;
  }

  get highlighted() {
    return this.#current;
  }

  /** Starts on `first` (where focus already is, when it is one of the choices), which stays
   * highlighted for `firstMs`: long enough to hear what the scan is for, and to answer at once. */
  start(choices, { first = null, firstMs = this.intervalMs } = {}) {
    this.stop();
    this.#choices = () => choices().filter(usable);
    const list = this.#choices();
    if (list.length === 0) return;
    this.#show(list.includes(first) ? first : list[0], true);
    this.#schedule(firstMs);
  }

  stop() {
    clearTimeout(this.#timer);
    this.#timer = null;
    this.#current?.classList.remove(HIGHLIGHT_CLASS);
    this.#current = null;
  }

  /** The switch was pressed: the highlighted control acts as if clicked. */
  select() {
    if (!this.running) return;
    const choice = this.#current;
    if (usable(choice)) choice.click();
  }

  #schedule(ms) {
    this.#timer = setTimeout(() => {
      const list = this.#choices();
      if (list.length === 0) {
        this.stop();
        return;
      }
      const index = list.indexOf(this.#current);
      this.#show(list[(index + 1) % list.length], false);
      this.#schedule(this.intervalMs);
    }, ms);
  }

  #show(choice, first) {
    if (!first && this.#current === choice) return;  // a panel with one choice: said once, not every interval
    this.#current?.classList.remove(HIGHLIGHT_CLASS);
    this.#current = choice;
    choice.classList.add(HIGHLIGHT_CLASS);
    if (document.activeElement !== choice) choice.focus();
    this.emit("highlight", { element: choice, first });
  }
}
