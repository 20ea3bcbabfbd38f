// Settings changed on another device arrive as one push per save, and that device saves each
// control as it changes (a preset is several saves): saying each one talked over the player.
// This gathers a burst of pushes and says it once, naming what changed, when they stop.
import { t } from "./i18n.js";

const SETTLE_MS = 1000;

// The Settings page's own label for each top-level field, where it has one.
const LABELS = {
  controls: "settings.controlsHeading",
  keyBindings: "settings.keysHeading",
  tutorialDone: "settings.progressHeading",
};

export function fieldName(field) {
  const key = LABELS[field] ?? `settings.${field}`;
  const label = t(key);
  return label === key ? field : label;
}

export class RemoteChangeSummary {
  #fields = new Set();
  #timer = null;
  #say;

  /** `say(fields)` gets the changed top-level field names, in the document's order. */
  constructor(say) {
    this.#say = say;
  }

  add(before, after) {
    for (const field of Object.keys(after)) {
      if (JSON.stringify(before?.[field]) !== JSON.stringify(after[field])) this.#fields.add(field);
    }
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      const fields = [...this.#fields];
      this.#fields.clear();
      if (fields.length > 0) this.#say(fields);
    }, SETTLE_MS);
  }
}
