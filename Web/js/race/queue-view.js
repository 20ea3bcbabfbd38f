// The quick race queue (the server's `queue`): how many wait at the level and, once two or
// more do, how long until the race starts, counted down on screen each second. Only the
// changes that matter are returned for speech (someone came or went, a start time was set),
// never the ticking seconds.
import { t, formatNumber } from "../app/i18n.js";

export class QueueView {
  #timer = null;
  #deadline = null;
  #last = null;

  constructor(element) {
    this.element = element;
  }

  /** Draws `queue`; returns the words to say when something worth saying changed, else "". */
  render(queue) {
    const before = this.#last;
    this.#last = queue;
    this.#deadline = Number.isFinite(queue.startsInMs) ? performance.now() + queue.startsInMs : null;
    this.#draw();
    clearInterval(this.#timer);
    this.#timer = this.#deadline === null ? null : setInterval(() => this.#draw(), 250);
    const changed = !before || before.waiting !== queue.waiting || (before.startsInMs == null) !== (queue.startsInMs == null);
    return changed ? this.text() : "";
  }

  stop() {
    clearInterval(this.#timer);
    this.#timer = null;
    this.#last = null;
    this.element.textContent = "";
  }

  text() {
    const queue = this.#last;
    if (!queue) return "";
    const level = t(`levels.${queue.level}`);
    const waiting = t("race.queueWaiting", { count: formatNumber(queue.waiting ?? 0), level });
    if (this.#deadline === null) return `${waiting} ${t("race.queueNeedsMore")}`;
    const seconds = Math.max(0, Math.ceil((this.#deadline - performance.now()) / 1000));
    return `${waiting} ${t("race.queueStartsIn", { seconds: formatNumber(seconds) })}`;
  }

  #draw() {
    this.element.textContent = this.text();
  }
}
