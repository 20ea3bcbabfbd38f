// The safe-lane cue's patterns (docs/GAME_RULES.md, "Safe-lane cue") and the words for them.
// A cue names one, two or three safe lanes, never none (the road never sets a trap), so there
// are seven: each lane alone safe, each lane alone blocked (the other two safe), and all safe.
// The words say what is heard in each cue mode, slot by slot, so a screen-reader user reads
// exactly what a hearing player hears (Web/js/audio/sounds.js plays them).
import { t } from "../app/i18n.js";
import { LANE_LETTERS } from "../audio/notes.js";
import { laneName } from "../game/describe.js";

export const PATTERNS = [
  { id: "leftOnly", safe: [0] },
  { id: "middleOnly", safe: [1] },
  { id: "rightOnly", safe: [2] },
  { id: "leftBlocked", safe: [1, 2] },
  { id: "middleBlocked", safe: [0, 2] },
  { id: "rightBlocked", safe: [0, 1] },
  { id: "allSafe", safe: [0, 1, 2] },
];

/** The modes the game plays a cue in (the audioCueMode setting); "off" plays nothing. */
export const CUE_MODES = ["lanePulse", "arpeggio", "chord", "off"];

export const patternById = (id) => PATTERNS.find((pattern) => pattern.id === id);

const SIDES = ["fromLeft", "fromCentre", "fromRight"];

function list(items) {
  return new Intl.ListFormat(document.documentElement.lang || "en", { type: "conjunction" }).format(items);
}

/** "C from the left" */
function noteFrom(lane) {
  return t(`tutorial.sound.${SIDES[lane]}`, { note: LANE_LETTERS[lane] });
}

/** The notes heard, short: "C only", "C and G", "C, E and G". */
export function notesHeard(safe) {
  const letters = [...safe].sort().map((lane) => LANE_LETTERS[lane]);
  return letters.length === 1 ? t("tutorial.sound.only", { note: letters[0] }) : list(letters);
}

/** What the pattern means: "only the left lane is safe", "the left and right lanes are safe". */
export function meaning(safe) {
  if (safe.length === 3) return t("tutorial.sound.allSafe");
  const lanes = [...safe].sort().map(laneName);
  return safe.length === 1 ? t("tutorial.sound.oneSafe", { lane: lanes[0] }) : t("tutorial.sound.twoSafe", { lanes: list(lanes) });
}

/** The blocked lanes in words: "Blocked: middle." (nothing when all are safe). */
export function blockedText(safe) {
  const blocked = [0, 1, 2].filter((lane) => !safe.includes(lane));
  return blocked.length ? t("tutorial.sound.blocked", { lanes: list(blocked.map(laneName)) }) : t("tutorial.sound.noneBlocked");
}

/** What is heard in `mode`, in order, e.g. lane pulse: "C from the left, then a silence where E would be, then G from the right". */
export function soundText(mode, safe) {
  const lanes = [...safe].sort();
  if (mode === "off") return t("tutorial.sound.off");
  if (mode === "lanePulse") {
    return [0, 1, 2].map((lane) => (lanes.includes(lane) ? noteFrom(lane) : t("tutorial.sound.silence", { note: LANE_LETTERS[lane] })))
      .join(t("tutorial.sound.then"));
  }
  if (mode === "arpeggio") {
    return lanes.length === 1 ? t("tutorial.sound.alone", { note: noteFrom(lanes[0]) })
      : lanes.map(noteFrom).join(t("tutorial.sound.then"));
  }
  return lanes.length === 1 ? t("tutorial.sound.alone", { note: noteFrom(lanes[0]) })
    : t("tutorial.sound.together", { notes: list(lanes.map(noteFrom)) });
}

/** The full text alternative of one pattern in one mode. */
export function describePattern(mode, safe) {
  return [
    t("tutorial.sound.modeHeard", { mode: t(`cueModes.${mode}`), heard: soundText(mode, safe) }),
    `${meaning(safe)[0].toUpperCase()}${meaning(safe).slice(1)}.`,
    blockedText(safe),
  ].join(" ");
}
