// The tutorial's sound examples: each button plays one cue through the game's own SoundBoard
// (the same notes, pans and timings as in a race), and the example's caption shows what was
// played, so every sound is also seen, as in a race. The audio starts on the press
// itself, a user gesture, never before.
import { captionFor } from "../game/effects-view.js";

/** The examples' safe lanes: the middle lane blocked, left and right safe. */
export const EXAMPLE_SAFE_LANES = [0, 2];
const EXAMPLE_INTERVAL_MS = 800;  // a Cruise step: the cue's notes at their most spread out

/** Plays what `button`'s data attributes name (data-demo and its details). */
export function playDemo(sounds, button) {
  const { demo } = button.dataset;
  const lane = Number(button.dataset.lane);
  const safe = button.dataset.safe === "true";
  if (demo === "cue") {
    // data-lanes and data-interval: another pattern or another speed than the first examples'.
    const lanes = button.dataset.lanes ? button.dataset.lanes.split(",").map(Number) : EXAMPLE_SAFE_LANES;
    sounds.cue(button.dataset.mode, lanes, Number(button.dataset.interval ?? EXAMPLE_INTERVAL_MS));
  }
  else if (demo === "lane") sounds.laneChange("confirmation", lane, true);
  else if (demo === "success") sounds.laneChange("success", 1, safe);
  else if (demo === "both") sounds.laneChange("both", lane, safe);
  else if (demo === "effect") {
    const effect = button.dataset.effect;
    if (effect === "bump") sounds.bump("left");
    else if (effect === "speedUpSoon") sounds.speedUpSoon();
    else if (effect === "speedUp") sounds.speedUp();
    else if (effect === "crash") sounds.crash(1);
  }
}

/**
 * Wires every [data-demo] button under `root`: `prepare()` runs first (wakes the audio), then
 * the sound plays and the caption in the button's .demo box says what it was.
 */
export function wireDemos(root, sounds, prepare) {
  const shown = new Map();  // caption element -> the sound it describes (redrawn on a language change)
  let caption = null;
  sounds.on("sound", (sound) => {
    if (!caption) return;
    shown.set(caption, sound);
    caption.textContent = captionFor(sound);
  });
  document.addEventListener("i18n", () => {
    for (const [element, sound] of shown) element.textContent = captionFor(sound);
  });
  for (const button of root.querySelectorAll("[data-demo]")) {
    button.addEventListener("click", () => {
      prepare();
      caption = button.closest(".demo")?.querySelector("[data-caption]") ?? null;
      playDemo(sounds, button);
      caption = null;
    });
  }
}
