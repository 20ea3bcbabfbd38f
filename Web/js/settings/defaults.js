// The settings document's shape and defaults, as in Sources/RetroRapidDomain/PlayerSettings.swift.
// Used before the server's copy arrives, and to reset to defaults; the server stays the
// authority and validates every write. Tests/python/test_client_sync.py holds the defaults, RANGES,
// INTEGER_CHOICES, KEY_ACTIONS and ALLOWED_KEYS to what the real server says and enforces.
export const DEFAULT_SETTINGS = Object.freeze({
  speedLevel: "cruise",
  audioCueMode: "lanePulse",
  laneChangeCue: "confirmation",
  cueVolume: 80,
  effectsVolume: 80,
  mono: false,
  haptics: { enabled: true, crash: true, step: true, move: true },
  announcements: true,
  // Points between scores said during a race; 0: only when the player asks (status key).
  scoreAnnouncementEvery: 25,
  font: "readable",
  theme: "system",
  contrast: "standard",
  reduceMotion: "system",
  textSize: 100,
  language: "en",
  tutorialDone: false,
  controls: {
    keyboard: true,
    letterKeys: true,
    touch: true,
    swipe: true,
    wheel: true,
    gamepad: true,
    inputCooldownMs: 0,
    oneSwitch: false,
    scanIntervalMs: 1500,
    switchMode: "dodge",
    keyBindings: { left: "ArrowLeft", right: "ArrowRight", pause: "KeyP", repeatCue: "KeyC", announceScore: "KeyS" },
  },
});

export const RANGES = Object.freeze({
  cueVolume: [0, 100],
  effectsVolume: [0, 100],
  textSize: [100, 200],
  "controls.inputCooldownMs": [0, 500],
  "controls.scanIntervalMs": [500, 5000],
});

/** The integer fields that take only the values listed, not a range
 * (PlayerSettings.scoreAnnouncementChoices). */
export const INTEGER_CHOICES = Object.freeze({
  scoreAnnouncementEvery: [1, 5, 10, 25, 0],
});

export const KEY_ACTIONS = ["left", "right", "pause", "repeatCue", "announceScore"];

/** The KeyboardEvent.code values a binding may use (PlayerSettings.allowedKeys). */
export const ALLOWED_KEYS = (() => {
  const keys = ["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown", "Space", "Enter", "NumpadEnter", "Escape",
    "Backspace", "Home", "End", "PageUp", "PageDown", "Comma", "Period", "Slash", "Semicolon",
    "Quote", "BracketLeft", "BracketRight", "Minus", "Equal", "Backslash", "Backquote"];
  for (let c = 65; c <= 90; c++) keys.push("Key" + String.fromCharCode(c));
  for (let d = 0; d <= 9; d++) keys.push("Digit" + d);
  for (let d = 0; d <= 9; d++) keys.push("Numpad" + d);
  return keys;
})();

export function clone(value) {
  return JSON.parse(JSON.stringify(value));
}

/** `patch` laid over `base`, objects merged member by member (as the server's PATCH does). */
export function merge(base, patch) {
  const result = clone(base);
  for (const [key, value] of Object.entries(patch ?? {})) {
    result[key] = value && typeof value === "object" && !Array.isArray(value) && result[key] && typeof result[key] === "object"
      ? merge(result[key], value)
      : value;
  }
  return result;
}

export function getPath(object, path) {
  return path.split(".").reduce((node, part) => node?.[part], object);
}

/** `{a: {b: value}}` from "a.b": the smallest patch that sets one field. */
export function patchFor(path, value) {
  return path.split(".").reduceRight((inner, part) => ({ [part]: inner }), value);
}

/** Client-side checks that mirror the server's, so a refusal is explained before sending. */
export function bindingProblems(controls) {
  const problems = [];
  const owners = new Map();
  for (const action of KEY_ACTIONS) {
    const key = controls.keyBindings[action];
    if (owners.has(key)) problems.push({ action, kind: "duplicate", other: owners.get(key), key });
    else if (controls.letterKeys && (key === "KeyA" || key === "KeyD")) problems.push({ action, kind: "letterKey", key });
    owners.set(key, action);
  }
  return problems;
}
