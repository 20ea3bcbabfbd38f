// The ghost heard, only if the player wants it (device choice `ghostAudio`): a voice unlike
// the player's own cues (a soft triangle two octaves above the lane notes, panned only half
// way toward the ghost's lane, on the effects bus) when the ghost changes lane, and a short
// falling blip when it crashes. The player's cues keep the full pan and the lane notes.
import { LANE_FREQUENCIES } from "../audio/notes.js";

const GHOST_PANS = [-0.5, 0, 0.5];
const PEAK = 0.16;

export class GhostVoice {
  constructor(engine) {
    this.engine = engine;
  }

  lane(lane) {
    return this.engine.tone({
      frequency: LANE_FREQUENCIES[lane] * 4, pan: GHOST_PANS[lane], at: this.engine.now + 0.02,
      duration: 0.06, bus: "effects", wave: "triangle", peak: PEAK,
    });
  }

  crash(lane) {
    return this.engine.tone({
      frequency: 880, glideTo: 440, pan: GHOST_PANS[lane] ?? 0, at: this.engine.now + 0.02,
      duration: 0.2, bus: "effects", wave: "triangle", peak: PEAK,
    });
  }
}
