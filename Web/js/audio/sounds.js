// What each game moment sounds like (docs/PROTOCOL.md): the safe-lane cue in its four modes, the
// lane-change cue in its four styles, and short distinct effects. Every sound is also emitted
// as a "sound" event so something on screen shows it: everything heard is also seen.
import { Emitter } from "../app/emitter.js";
import { LANE_FREQUENCIES, LANE_PANS } from "./notes.js";

export class SoundBoard extends Emitter {
  constructor(engine) {
    super();
    this.engine = engine;
  }

  /**
   * The safe-lane cue for the next decision, fitted into one step `intervalMs`:
   * lanePulse: left, middle, right slots, a note for a safe lane and equal silence for an unsafe one;
   * arpeggio: the safe notes one after another; chord: the safe notes together; off: nothing.
   */
  cue(mode, safeLanes, intervalMs = 600) {
    const lanes = [...safeLanes].sort((a, b) => a - b);
    this.emit("sound", { kind: "cue", mode, lanes });
    if (mode === "off") return;
    const slot = Math.min(0.16, Math.max(0.06, (intervalMs / 1000) * 0.75 / 3));
    const at = this.engine.now + 0.01;
    const note = (lane, when, duration, peak, exact = false) => this.engine.tone({
      frequency: LANE_FREQUENCIES[lane], pan: LANE_PANS[lane], at: when, duration, peak, bus: "cue", exact,
    });
    if (mode === "lanePulse") {
      for (const lane of [0, 1, 2]) if (lanes.includes(lane)) note(lane, at + lane * slot, slot * 0.8, 0.5);
    } else if (mode === "arpeggio") {
      lanes.forEach((lane, index) => note(lane, at + index * slot, slot * 0.8, 0.5));
    } else if (mode === "chord") {
      // Quieter per note so three together are no louder than one. One start for all, taken
      // once: on a busy page the audio clock can pass `at` between two notes.
      const together = Math.max(at, this.engine.now);
      lanes.forEach((lane) => note(lane, together, slot * 2, 0.5 / Math.max(1, lanes.length), true));
    }
  }

  /** After a move: the new lane's note (confirmation), a safe/unsafe sound (success), both, or nothing. */
  laneChange(style, lane, safe) {
    this.emit("sound", { kind: "laneChange", style, lane, safe });
    if (style === "off") return;
    const at = this.engine.now + 0.01;
    if (style === "confirmation" || style === "both") {
      this.engine.tone({ frequency: LANE_FREQUENCIES[lane], pan: LANE_PANS[lane], at, duration: 0.12, bus: "cue", wave: "triangle", peak: 0.55 });
    }
    if (style === "success" || style === "both") {
      const later = style === "both" ? at + 0.14 : at;
      this.verdict(safe, later, LANE_PANS[lane]);
    }
  }

  /** Short earcons under 200 ms: rising for safe, low and falling for unsafe. */
  verdict(safe, at = this.engine.now + 0.01, pan = 0) {
    if (safe) {
      this.engine.tone({ frequency: 660, at, duration: 0.07, pan, bus: "cue", wave: "sine", peak: 0.4 });
      this.engine.tone({ frequency: 880, at: at + 0.08, duration: 0.08, pan, bus: "cue", wave: "sine", peak: 0.4 });
    } else {
      this.engine.tone({ frequency: 180, glideTo: 120, at, duration: 0.18, pan, bus: "cue", wave: "square", peak: 0.25 });
    }
  }

  bump(direction) {
    this.emit("sound", { kind: "bump", direction });
    const pan = direction === "left" ? -1 : 1;
    this.engine.tone({ frequency: 110, at: this.engine.now + 0.01, duration: 0.07, pan, bus: "effects", wave: "square", peak: 0.35 });
  }

  crash(lane = 1) {
    this.emit("sound", { kind: "crash", lane });
    const at = this.engine.now + 0.01;
    const pan = LANE_PANS[lane] ?? 0;
    this.engine.tone({ frequency: 220, glideTo: 55, at, duration: 0.45, pan, bus: "effects", wave: "sawtooth", peak: 0.4 });
    this.engine.tone({ frequency: 233, glideTo: 50, at, duration: 0.45, pan, bus: "effects", wave: "square", peak: 0.2 });
  }

  speedUpSoon() {
    this.emit("sound", { kind: "speedUpSoon" });
    const at = this.engine.now + 0.01;
    this.engine.tone({ frequency: 587.33, at, duration: 0.06, bus: "effects", wave: "triangle", peak: 0.3 });
    this.engine.tone({ frequency: 587.33, at: at + 0.1, duration: 0.06, bus: "effects", wave: "triangle", peak: 0.3 });
  }

  speedUp() {
    this.emit("sound", { kind: "speedUp" });
    const at = this.engine.now + 0.01;
    [523.25, 659.25, 783.99].forEach((frequency, index) =>
      this.engine.tone({ frequency, at: at + index * 0.07, duration: 0.07, bus: "effects", wave: "triangle", peak: 0.35 }));
  }

  /** The one-switch scan's tick, panned toward the option it highlights. */
  scanTick(option) {
    const pan = option === "left" ? -1 : option === "right" ? 1 : 0;
    this.engine.tone({ frequency: 1046.5, at: this.engine.now + 0.005, duration: 0.03, pan, bus: "effects", peak: 0.15 });
  }
}
