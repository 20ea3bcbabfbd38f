// Choices kept on this device only, beside the synced settings document: the server's document
// (Sources/RetroRapidDomain/PlayerSettings.swift) refuses fields it does not know, and these are
// about how this device sounds during a race or a ghost race. One local-storage key holds them
// all; another tab of this browser hears of a change through the "storage" event.
import { Emitter } from "../app/emitter.js";
import { readJSON, writeJSON, remove } from "../app/storage.js";

export const DEVICE_SETTINGS_KEY = "retrorapid.deviceSettings";
export const DEVICE_DEFAULTS = Object.freeze({
  rivalAnnouncements: true,  // rivals' news during a race is spoken; the player may turn it off
  ghostAudio: false,         // a ghost race's ghost is heard (its own voice and pan), only if wanted
});
// Where these choices were kept before they shared one key: read once, then dropped, so a
// choice made there is kept.
const FORMER_KEYS = ["retrorapid.raceSettings", "retrorapid.devicePrefs"];

function valid(stored) {
  const result = {};
  for (const key of Object.keys(DEVICE_DEFAULTS)) {
    if (typeof stored?.[key] === typeof DEVICE_DEFAULTS[key]) result[key] = stored[key];
  }
  return result;
}

function moveFormerKeys() {
  const former = FORMER_KEYS.map((key) => readJSON(key)).filter((stored) => stored !== null && stored !== undefined);
  if (former.length === 0) return;
  const current = readJSON(DEVICE_SETTINGS_KEY);
  writeJSON(DEVICE_SETTINGS_KEY, { ...Object.assign({}, ...former.map(valid)), ...valid(current) });
  for (const key of FORMER_KEYS) remove(key);
}

class DeviceSettings extends Emitter {
  constructor() {
    super();
    moveFormerKeys();
    window.addEventListener("storage", (event) => {
      if (event.key === DEVICE_SETTINGS_KEY) this.emit("change", this.values);
    });
  }

  get values() {
    return { ...DEVICE_DEFAULTS, ...valid(readJSON(DEVICE_SETTINGS_KEY)) };
  }

  /** Sets one choice; an unknown name or a value of the wrong type changes nothing. */
  set(name, value) {
    if (!(name in DEVICE_DEFAULTS) || typeof value !== typeof DEVICE_DEFAULTS[name]) return false;
    writeJSON(DEVICE_SETTINGS_KEY, { ...this.values, [name]: value });
    this.emit("change", this.values);
    return true;
  }
}

export const deviceSettings = new DeviceSettings();

/** Keeps a checkbox and a device choice in step, both ways; `onSaved` runs after a change by the player. */
export function bindCheckbox(checkbox, name, onSaved = () => {}) {
  if (!checkbox) return;
  checkbox.checked = deviceSettings.values[name];
  checkbox.addEventListener("change", () => { if (deviceSettings.set(name, checkbox.checked)) onSaved(); });
  deviceSettings.on("change", (values) => { checkbox.checked = values[name]; });
}
