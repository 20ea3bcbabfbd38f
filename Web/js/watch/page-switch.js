// The one switch on a page without a race of its own (watching, a replay): a press starts a
// highlight that steps through the page's buttons, links, checkboxes and radios at the
// player's scan interval (the same MenuScanner as the pause and game-over menus), and the
// next press activates the highlighted one. It rests after three rounds without a press, so
// it never keeps moving focus by itself; the next press starts it again.
import { t } from "../app/i18n.js";
import { KeyboardInput } from "../input/keyboard.js";
import { GamepadInput } from "../input/gamepad.js";
import { MenuScanner, menuIntervalMs, usable } from "../input/menu-scan.js";

const ROUNDS = 3;
const CHOICES = "button, a[href], input[type='checkbox'], input[type='radio']";

/** A control's accessible name as the page shows it. */
export function controlName(element) {
  const label = element.getAttribute("aria-label") ?? element.labels?.[0]?.textContent ?? element.textContent;
  return (label ?? "").trim();
}

export class PageSwitch {
  #highlights = 0;
  paused = false;  // while a race of the page's own has its own switch handling

  constructor(root, { store, announcer }) {
    this.root = root;
    this.store = store;
    this.announcer = announcer;
    this.menu = new MenuScanner();
    this.keyboard = new KeyboardInput(window);
    this.gamepad = new GamepadInput();
    this.keyboard.enabled = false;    // no moves here: only the switch
    this.keyboard.letterKeys = false;
    this.keyboard.takesButtons = () => this.menu.running;
    for (const source of [this.keyboard, this.gamepad]) source.on("select", () => this.#press());
    this.menu.on("highlight", ({ element }) => {
      if (++this.#highlights > ROUNDS * Math.max(1, this.#choices().length)) {
        this.menu.stop();
        return;
      }
      if (this.store.settings.announcements) this.announcer.sayNow(controlName(element));
    });
    store.on("change", ({ settings }) => this.#configure(settings));
    this.#configure(store.settings);
  }

  #configure(settings) {
    const on = settings.controls.oneSwitch && !this.paused;
    this.keyboard.oneSwitch = on;
    this.keyboard.bindings = {};
    this.gamepad.enabled = settings.controls.gamepad;
    this.gamepad.oneSwitch = on;
    this.menu.intervalMs = menuIntervalMs(settings);
    if (!on) this.menu.stop();
  }

  pause(paused) {
    this.paused = paused;
    this.#configure(this.store.settings);
  }

  #choices() {
    return [...this.root.querySelectorAll(CHOICES)].filter(usable);
  }

  #press() {
    if (this.paused) return;
    this.#highlights = 0;
    if (this.menu.running) {
      this.menu.select();
      return;
    }
    const choices = this.#choices();
    if (choices.length === 0) return;
    this.menu.start(() => this.#choices(), { first: document.activeElement });
    if (this.store.settings.announcements) {
      this.announcer.sayNow(t("watch.switchScan", { count: choices.length, choice: controlName(this.menu.highlighted) }));
    }
  }
}
