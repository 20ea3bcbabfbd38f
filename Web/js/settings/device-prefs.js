// Choices kept on this device only, beside the settings document: the server's document
// (Sources/RetroRapidDomain/PlayerSettings.swift) refuses fields it does not know, and these
// are about how this device sounds while watching or racing a ghost. Another tab of this
// browser hears of a change through the storage event.
import { Emitter } from "../app/emitter.js";
import { readJSON, writeJSON } from "../app/storage.js";

const KEY = "retrorapid.devicePrefs";
export const DEVICE_DEFAULTS = Object.freeze({
  ghostAudio: false,   // a ghost race's ghost is heard (its own voice and pan), only if wanted
});

class DevicePrefs extends Emitter {
  get values() {
    return { ...DEVICE_DEFAULTS, ...(readJSON(KEY) ?? {}) };
  }

  set(name, value) {
    if (!(name in DEVICE_DEFAULTS) || typeof value !== typeof DEVICE_DEFAULTS[name]) return;
    writeJSON(KEY, { ...this.values, [name]: value });
    this.emit("change", this.values);
  }
}

export const devicePrefs = new DevicePrefs();
window.addEventListener("storage", (event) => {
  if (event.key === KEY) devicePrefs.emit("change", devicePrefs.values);
});

/** Keeps a checkbox and a device choice in step, both ways. */
export function bindCheckbox(checkbox, name) {
  checkbox.checked = devicePrefs.values[name];
  checkbox.addEventListener("change", () => devicePrefs.set(name, checkbox.checked));
  devicePrefs.on("change", (values) => { checkbox.checked = values[name]; });
}
