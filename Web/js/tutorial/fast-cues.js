// "Sounds for fast levels": how long each cue mode leaves to move at each level (measured from
// the game's own SoundBoard, js/tutorial/cue-timing.js), the advice that follows (lane pulse
// tells you about the right lane late in the step; chord tells everything at once), and
// buttons that switch the player's audioCueMode through the settings store, which saves it on
// the server like the Settings page does.
import { t, formatNumber } from "../app/i18n.js";
import { timeLeftTable } from "./cue-timing.js";

export class FastCues {
  constructor(root, { store, announcer }) {
    this.root = root;
    this.store = store;
    this.announcer = announcer;
    this.list = root.querySelector("#fast-timings");
    this.current = root.querySelector("#fast-current");
    this.message = root.querySelector("#fast-message");
    this.table = timeLeftTable();
    for (const button of root.querySelectorAll("[data-cue-mode]")) {
      button.addEventListener("click", () => this.use(button.dataset.cueMode));
    }
    store.on("change", () => this.#showCurrent());
    document.addEventListener("i18n", () => this.render());
    this.render();
  }

  render() {
    const ms = (value) => t("tutorial.fastMs", { ms: formatNumber(Math.max(0, value)) });
    this.list.replaceChildren(...this.table.map(({ level, start, floor, left }) => {
      const li = document.createElement("li");
      li.dataset.level = level;
      li.dataset.pulseFloor = String(left.lanePulse.floor);
      li.dataset.chordFloor = String(left.chord.floor);
      const name = document.createElement("strong");
      name.textContent = t(`levels.${level}`);
      li.append(name, " ", t("tutorial.fastRow", {
        start: ms(start), floor: ms(floor),
        pulse: ms(left.lanePulse.start), pulseFloor: ms(left.lanePulse.floor),
        arpeggio: ms(left.arpeggio.start), arpeggioFloor: ms(left.arpeggio.floor),
        chord: ms(left.chord.start), chordFloor: ms(left.chord.floor),
      }));
      return li;
    }));
    this.#showCurrent();
  }

  #showCurrent() {
    const mode = this.store.settings.audioCueMode;
    this.current.textContent = t("tutorial.fastCurrent", { mode: t(`cueModes.${mode}`) });
    for (const button of this.root.querySelectorAll("[data-cue-mode]")) {
      button.setAttribute("aria-pressed", String(button.dataset.cueMode === mode));
    }
  }

  async use(mode) {
    if (this.store.settings.audioCueMode === mode) {
      this.#tell(t("tutorial.fastAlready", { mode: t(`cueModes.${mode}`) }), "good");
      return;
    }
    let failed = false;
    const stop = this.store.on("error", () => { failed = true; });
    await this.store.update({ audioCueMode: mode });
    stop();
    // A refused or failed save leaves the stored setting as it was: say so rather than "saved".
    const saved = !failed && !this.store.conflict && this.store.settings.audioCueMode === mode;
    this.#tell(saved ? t("tutorial.fastSaved", { mode: t(`cueModes.${mode}`) }) : t("errors.generic"), saved ? "good" : "bad");
  }

  #tell(text, kind) {
    this.message.textContent = text;
    this.message.className = `message ${kind}`;
    this.announcer.sayNow(text);
  }
}
