// Vibration for crash, step and move (bumps count as moves), each with its own toggle, where
// navigator.vibrate exists (Chromium on Android); gamepad rumble where the pad has it. Never
// the only channel: every moment also has a sound, a visual and, where it matters, words.
const PATTERNS = {
  crash: [180, 80, 260],
  step: [12],
  move: [35],
  bump: [15, 40, 15],
};
const RUMBLE = {
  crash: { duration: 400, strongMagnitude: 1.0, weakMagnitude: 0.6 },
  step: { duration: 30, strongMagnitude: 0.0, weakMagnitude: 0.25 },
  move: { duration: 60, strongMagnitude: 0.3, weakMagnitude: 0.4 },
  bump: { duration: 80, strongMagnitude: 0.6, weakMagnitude: 0.2 },
};

export class Haptics {
  settings = { enabled: true, crash: true, step: true, move: true };
  rumble = true;
  held = false;  // paused: no vibration, so a pause is a real rest

  play(kind) {
    const toggle = kind === "bump" ? "move" : kind;
    if (this.held || !this.settings.enabled || !this.settings[toggle]) return;
    if (typeof navigator.vibrate === "function") navigator.vibrate(PATTERNS[kind]);
    if (!this.rumble || !navigator.getGamepads) return;
    for (const pad of navigator.getGamepads()) {
      pad?.vibrationActuator?.playEffect?.("dual-rumble", RUMBLE[kind])?.catch?.(() => {});
    }
  }

  stop() {
    if (typeof navigator.vibrate === "function") navigator.vibrate(0);
  }
}
