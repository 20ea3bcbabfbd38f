// The score in 7-segment digits (with the unlit "8"s behind, as on the LCD), the lane, the
// speed and the game's state. Reads state only.
import { t, formatNumber } from "../app/i18n.js";
import { laneName, speedText } from "./describe.js";

const DIGITS = 4;

export class HudView {
  constructor(root) {
    this.digits = root.querySelector("[data-part='score-digits']");
    this.score = root.querySelector("[data-part='score']");
    this.lane = root.querySelector("[data-part='lane']");
    this.speed = root.querySelector("[data-part='speed']");
    this.state = root.querySelector("[data-part='state']");
    // Only on the player's own road: a watched game has neither.
    this.pause = root.querySelector("[data-part='pause']");
    this.quit = root.querySelector("[data-part='quit']");
    // On the road itself, so a paused road does not look like a frozen one (the state line
    // and the live region say it in words too).
    this.pausedSign = root.querySelector("[data-part='paused-sign']");
  }

  render(state) {
    const padded = String(state.score).padStart(DIGITS, "0");
    this.digits.textContent = padded;
    this.digits.dataset.ghost = "8".repeat(padded.length);
    this.score.textContent = formatNumber(state.score);
    this.lane.textContent = state.grid ? laneName(state.lane) : "—";
    this.speed.textContent = speedText(state);
    this.state.textContent = t(`phases.${state.phase}`);
    const onRoad = state.phase === "running" || state.phase === "paused";
    if (this.pause) {
      this.pause.hidden = !onRoad;
      this.pause.textContent = state.phase === "paused" ? t("play.resume") : t("play.pause");
    }
    if (this.quit) this.quit.hidden = !onRoad;
    if (this.pausedSign) {
      this.pausedSign.hidden = state.phase !== "paused";
      this.pausedSign.textContent = state.phase === "paused" ? t("banners.paused") : "";
    }
  }
}
