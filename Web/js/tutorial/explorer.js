// "Hear every pattern": the player picks one of the seven cue patterns and a cue mode; the
// pattern is drawn at once (a small road and the C/E/G strip) and described in words, and Play
// sounds it through the game's SoundBoard, its caption showing what was played.
import { t } from "../app/i18n.js";
import { captionFor } from "../game/effects-view.js";
import { PATTERNS, patternById, describePattern } from "./patterns.js";
import { PatternPicture } from "./pattern-picture.js";

const INTERVAL_MS = 800;  // a Cruise step: the cue's notes at their most spread out

export class Explorer {
  constructor(root, { sounds, store, prepare }) {
    this.root = root;
    this.sounds = sounds;
    this.prepare = prepare;
    this.picture = new PatternPicture(root.querySelector("#explorer-picture"));
    this.description = root.querySelector("#explorer-description");
    this.caption = root.querySelector("#explorer-caption");
    this.lastSound = null;
    // Starts on the player's own mode, so the first thing heard is what a race plays.
    const own = root.querySelector(`input[name='explore-mode'][value='${store.settings.audioCueMode}']`);
    (own ?? root.querySelector("input[name='explore-mode']")).checked = true;
    for (const input of root.querySelectorAll("input[name='pattern'], input[name='explore-mode']")) {
      input.addEventListener("change", () => this.render());
    }
    root.querySelector("#explorer-play").addEventListener("click", () => this.play());
    document.addEventListener("i18n", () => this.render());
    this.render();
  }

  get pattern() {
    return patternById(this.root.querySelector("input[name='pattern']:checked")?.value) ?? PATTERNS[0];
  }

  get mode() {
    return this.root.querySelector("input[name='explore-mode']:checked")?.value ?? "lanePulse";
  }

  /** The picture and the words for the chosen pattern and mode (no sound until Play). */
  render() {
    const { safe } = this.pattern;
    this.picture.show(safe, 1);
    this.description.textContent = describePattern(this.mode, safe);
    this.caption.textContent = this.lastSound ? captionFor(this.lastSound) || t("tutorial.explorerSilent") : "";
  }

  play() {
    this.prepare();
    const { id, safe } = this.pattern;
    const stop = this.sounds.on("sound", (sound) => { this.lastSound = sound; });
    this.sounds.cue(this.mode, safe, INTERVAL_MS);
    stop();
    this.root.dataset.played = `${id}:${this.mode}`;
    this.render();
  }
}
