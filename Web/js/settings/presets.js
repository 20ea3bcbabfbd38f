// Presets set several options at once (TLOU2-style); each stays adjustable afterwards.
// A preset is just a settings patch, sent like any other change.
export const PRESETS = {
  audioOnly: {
    audioCueMode: "lanePulse",
    laneChangeCue: "both",
    cueVolume: 100,
    effectsVolume: 80,
    mono: false,
    announcements: true,
    speedLevel: "cruise",
  },
  lowVision: {
    contrast: "high",
    textSize: 150,
    font: "readable",
    reduceMotion: "on",
    announcements: true,
    laneChangeCue: "both",
  },
  oneSwitch: {
    speedLevel: "cruise",
    // Dodge: one press a step moves to the nearest safe lane, so a switch keeps up at Cruise
    // (docs/GAME_RULES.md, "One-switch play"); the timed scan stays a choice in Settings.
    controls: { oneSwitch: true, switchMode: "dodge", inputCooldownMs: 0 },
    announcements: true,
  },
  steadyHands: {
    speedLevel: "cruise",
    controls: { inputCooldownMs: 250 },
  },
};
