// The tutorial as short lessons, one on screen at a time: Back and Next (native buttons that
// name the lesson they lead to), a list to open any lesson directly (for replaying one), and
// "Step 2 of 7" shown and said politely. A change of lesson moves focus to the new lesson's
// heading, so keyboard, switch and screen-reader users start reading at its top. Nothing is
// timed: a lesson stays until the player moves on.
//
// Events: "change" {from, to} with the lessons' element ids.
import { Emitter } from "../app/emitter.js";
import { t } from "../app/i18n.js";

export class Lessons extends Emitter {
  #index = -1;

  /**
   * `sections`: the lesson <section>s in order, each with an id and an <h2 tabindex="-1">;
   * `list`: buttons with data-goto="<lesson id>"; `progress`, `back`, `next`: elements.
   */
  constructor({ sections, list, progress, back, next, announcer }) {
    super();
    this.sections = sections;
    this.listButtons = [...list.querySelectorAll("button[data-goto]")];
    this.progress = progress;
    this.back = back;
    this.next = next;
    this.announcer = announcer;

    back.addEventListener("click", () => this.show(this.#index - 1));
    next.addEventListener("click", () => this.show(this.#index + 1));
    for (const button of this.listButtons) {
      button.addEventListener("click", () => this.show(this.indexOf(button.dataset.goto)));
    }
    // A link to #lesson-… (from another page, or a bookmark) opens that lesson.
    window.addEventListener("hashchange", () => {
      const index = this.indexOf(location.hash.slice(1));
      if (index >= 0 && index !== this.#index) this.show(index);
    });
    document.addEventListener("i18n", () => this.#label());
  }

  get current() {
    return this.sections[this.#index];
  }

  get total() {
    return this.sections.length;
  }

  indexOf(id) {
    return this.sections.findIndex((section) => section.id === id);
  }

  /** The first lesson, or the one the address names (#lesson-practice); no focus move at load. */
  open() {
    const fromHash = this.indexOf(location.hash.slice(1));
    this.show(fromHash >= 0 ? fromHash : 0, { quiet: true });
  }

  /** Shows lesson `index`; unless `quiet`, focuses its heading and says the step. */
  show(index, { quiet = false } = {}) {
    if (index < 0 || index >= this.total) return;
    const from = this.current?.id ?? null;
    this.#index = index;
    this.sections.forEach((section, i) => { section.hidden = i !== index; });
    for (const button of this.listButtons) {
      if (button.dataset.goto === this.current.id) button.setAttribute("aria-current", "step");
      else button.removeAttribute("aria-current");
    }
    this.#label();
    if (location.hash !== `#${this.current.id}`) history.replaceState(null, "", `#${this.current.id}`);
    if (!quiet) {
      this.current.querySelector("h2").focus();
      this.announcer.sayNow(this.#stepText());  // a newer step makes a waiting one moot
    }
    if (from !== this.current.id) this.emit("change", { from, to: this.current.id });
  }

  #stepText() {
    return t("tutorial.progress", { step: this.#index + 1, total: this.total });
  }

  #title(index) {
    return this.sections[index]?.querySelector("h2").textContent ?? "";
  }

  /** Progress and the Back/Next names, in the page's language. */
  #label() {
    if (this.#index < 0) return;
    this.progress.textContent = this.#stepText();
    this.back.hidden = this.#index === 0;
    this.next.hidden = this.#index === this.total - 1;
    this.back.textContent = t("tutorial.back", { title: this.#title(this.#index - 1) });
    this.next.textContent = t("tutorial.next", { title: this.#title(this.#index + 1) });
  }
}
