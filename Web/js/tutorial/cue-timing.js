// How much of a step is left to move once a cue has told you about your own lane, in each cue
// mode at each level. The timings are not copied here: the game's own SoundBoard
// (Web/js/audio/sounds.js) schedules the cue against a recording engine, and the notes it asks
// for are read back, so these numbers follow the game's sounds if they ever change.
//
// Lane pulse plays left, middle, right in fixed slots, and a blocked lane is a silence: you know
// your lane is blocked only when its slot has passed. For the right lane that is the end of the
// third slot, late in a short step. Arpeggio and chord start every safe note at once or back to
// back from the start; chord tells everything at the first instant.
import { SoundBoard } from "../audio/sounds.js";

/** The step intervals of each level, start and top speed (docs/GAME_RULES.md, "Road"). */
export const LEVEL_STEPS = {
  cruise: { start: 800, floor: 400 },
  fast: { start: 600, floor: 300 },
  rapid: { start: 420, floor: 210 },
};

/** The notes the SoundBoard would play for `safe` in `mode` at `intervalMs`: [{lane, at, duration}] in ms from the step. */
export function scheduledNotes(mode, safe, intervalMs) {
  const notes = [];
  const recorder = { now: 0, tone: (note) => { notes.push(note); return true; } };
  new SoundBoard(recorder).cue(mode, safe, intervalMs);
  const lanes = [...safe].sort();
  return notes.map((note, index) => ({
    lane: lanes[index],
    at: note.at * 1000,
    duration: note.duration * 1000,
  }));
}

/**
 * When, in ms after the step, a player in the right lane (the one heard last) knows whether
 * it is safe, in the worst case: its lane blocked. Lane pulse: the end of the right lane's slot
 * (the slot length read from the spacing of an all-safe pulse). Arpeggio: the end of the
 * arpeggio when the other two lanes are safe (the longest it can be while the right lane is
 * blocked). Chord: when the chord starts.
 */
export function knownAfter(mode, intervalMs) {
  if (mode === "lanePulse") {
    const pulse = scheduledNotes(mode, [0, 1, 2], intervalMs);
    const slot = pulse[1].at - pulse[0].at;
    return pulse[2].at + slot;
  }
  if (mode === "arpeggio") {
    const arpeggio = scheduledNotes(mode, [0, 1], intervalMs);
    const slot = arpeggio[1].at - arpeggio[0].at;
    return arpeggio[1].at + slot;
  }
  return scheduledNotes(mode, [0, 1], intervalMs)[0].at;
}

/** The ms left to move after that moment, in each mode, at each level's start and top speed. */
export function timeLeftTable(modes = ["lanePulse", "arpeggio", "chord"]) {
  return Object.entries(LEVEL_STEPS).map(([level, { start, floor }]) => ({
    level,
    start,
    floor,
    left: Object.fromEntries(modes.map((mode) => [mode, {
      start: Math.round(start - knownAfter(mode, start)),
      floor: Math.round(floor - knownAfter(mode, floor)),
    }])),
  }));
}
