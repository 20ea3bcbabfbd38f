// Race preferences kept on this device: whether rivals' news (their crashes, your place) is
// spoken during a race. They are not in the synced settings document, whose shape is the
// server's (Sources/RetroRapidDomain/PlayerSettings.swift refuses fields it does not know), so
// they live in local storage and reach this device's other tabs through the "storage" event.
import { Emitter } from "../app/emitter.js";
import { readJSON, writeJSON } from "../app/storage.js";

export const RACE_SETTINGS_KEY = "retrorapid.raceSettings";
export const RACE_DEFAULTS = Object.freeze({
  rivalAnnouncements: true,  // on: a race is followed by ear too; the player may turn it off
});

export class RaceSettings extends Emitter {
  constructor() {
    super();
    window.addEventListener("storage", (event) => {
      if (event.key === RACE_SETTINGS_KEY) this.emit("change", this.settings);
    });
  }

  get settings() {
    const stored = readJSON(RACE_SETTINGS_KEY);
    const result = { ...RACE_DEFAULTS };
    for (const key of Object.keys(RACE_DEFAULTS)) {
      if (typeof stored?.[key] === typeof RACE_DEFAULTS[key]) result[key] = stored[key];
    }
    return result;
  }

  update(patch) {
    writeJSON(RACE_SETTINGS_KEY, { ...this.settings, ...patch });
    this.emit("change", this.settings);
  }
}
