// Everything heard, also seen, so a player who cannot hear misses nothing: the safe lanes
// under the road (note name, tick or cross: shape and words, not colour), a caption of the last
// sound, a banner for bump, crash and speed-ups, and the one-switch highlight. Banners change at
// most a few times a second and never flash the whole screen (WCAG 2.3.1).
import { t } from "../app/i18n.js";
import { LANE_LETTERS } from "../audio/notes.js";
import { laneName, laneList } from "./describe.js";

const BANNER_MS = 1500;

export class EffectsView {
  #bannerTimer = null;

  constructor(root) {
    this.strip = root.querySelector("[data-part='cue-strip']");
    this.caption = root.querySelector("[data-part='caption']");
    this.banner = root.querySelector("[data-part='banner']");
    this.scan = root.querySelector("[data-part='scan']");
  }

  renderSafeLanes(safeLanes, visible) {
    for (const item of this.strip.querySelectorAll("li")) {
      const lane = Number(item.dataset.lane);
      const safe = visible && safeLanes.includes(lane);
      item.classList.toggle("safe", safe);
      item.classList.toggle("unsafe", visible && !safe);
      item.querySelector(".mark").textContent = !visible ? "" : safe ? `✓ ${t("play.safe")}` : `✗ ${t("play.blocked")}`;
    }
  }

  /** A caption for each sound the SoundBoard plays. */
  showSound(sound) {
    this.caption.textContent = captionFor(sound);
  }

  showBanner(text, kind) {
    clearTimeout(this.#bannerTimer);
    this.banner.textContent = text;
    this.banner.dataset.kind = kind;
    if (kind !== "crash") {
      this.#bannerTimer = setTimeout(() => { this.banner.textContent = ""; delete this.banner.dataset.kind; }, BANNER_MS);
    }
  }

  clearBanner() {
    clearTimeout(this.#bannerTimer);
    this.banner.textContent = "";
    delete this.banner.dataset.kind;
  }

  showScan(option, on) {
    this.scan.hidden = !on;
    for (const item of this.scan.querySelectorAll("li")) item.classList.toggle("highlighted", on && item.dataset.option === option);
  }
}

export function captionFor(sound) {
  switch (sound.kind) {
    case "cue":
      if (sound.mode === "off") return "";
      return `♪ ${t(`cueModes.${sound.mode}`)}: ${[0, 1, 2].map((lane) => (sound.lanes.includes(lane) ? LANE_LETTERS[lane] : "·")).join(" ")} (${laneList(sound.lanes)})`;
    case "laneChange": {
      if (sound.style === "off") return "";
      const parts = [];
      if (sound.style !== "success") parts.push(`♪ ${LANE_LETTERS[sound.lane]} ${laneName(sound.lane)}`);
      if (sound.style !== "confirmation") parts.push(sound.safe ? `✓ ${t("play.safe")}` : `✗ ${t("play.unsafe")}`);
      return parts.join(" · ");
    }
    case "bump": return `◆ ${t("sounds.bump")}`;
    case "crash": return `✸ ${t("sounds.crash")}`;
    case "speedUpSoon": return `» ${t("sounds.speedUpSoon")}`;
    case "speedUp": return `»» ${t("sounds.speedUp")}`;
    default: return "";
  }
}
