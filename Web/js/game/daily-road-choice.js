// The road choice on the play page: a new random road, or today's road (one per UTC day and
// level, the same for everyone). For today's road it says whether this player's one scored
// run today is still to come (GET /api/v1/daily/{level}) and that practice on it is free;
// once the scored run is used, a run on it is practice. The play page starts with
// `road: "daily"` through a StartSocket (Web/js/game/start-socket.js).
import { t, formatNumber, formatTime } from "../app/i18n.js";
import * as playTogether from "../net/play-together-api.js";

export class DailyRoadChoice {
  info = null;       // the last answer of GET /daily/{level}
  #level = null;
  #asked = 0;

  constructor(root, { level }) {
    this.root = root;
    this.level = level;  // () => the level chosen on the page
    this.status = root.querySelector("#daily-status");
    this.practiceField = root.querySelector("#daily-practice-field");
    this.practiceBox = root.querySelector("#daily-practice");
    for (const radio of root.querySelectorAll("input[name='road']")) radio.addEventListener("change", () => this.refresh());
    document.addEventListener("i18n", () => this.render());
  }

  get road() {
    return this.root.querySelector("input[name='road']:checked")?.value ?? "random";
  }

  /** Whether a start now is practice: asked for, or today's scored run is used. */
  get practice() {
    return this.road === "daily" && (this.practiceBox.checked || Boolean(this.info?.scoredAttempt));
  }

  /** Reads today's state for the chosen level again (after a game, or a change of level). */
  async refresh() {
    const level = this.level();
    this.render();
    if (this.road !== "daily") return;
    if (level !== this.#level) this.info = null;
    this.#level = level;
    const asked = ++this.#asked;
    try {
      const info = await playTogether.daily(level);
      if (asked !== this.#asked) return;  // a later question is on its way
      this.info = info;
      this.problem = null;
    } catch (error) {
      if (asked !== this.#asked) return;
      this.problem = error;
    }
    this.render();
  }

  render() {
    const daily = this.road === "daily";
    this.practiceField.hidden = !daily;
    this.status.hidden = !daily;
    if (!daily) return;
    const used = this.info?.scoredAttempt;
    this.practiceBox.disabled = Boolean(used);
    if (used) this.practiceBox.checked = true;
    if (this.problem) {
      this.status.textContent = t("daily.failed", { message: this.problem.message });
    } else if (!this.info) {
      this.status.textContent = t("daily.loading");
    } else if (used && used.score === undefined) {
      // Its score and rank come once it ends: it is under way (here or on another device).
      this.status.textContent = t("daily.usedRunning", { day: this.info.day, time: formatTime(this.info.resetsAt) });
    } else if (used) {
      this.status.textContent = t("daily.used", {
        day: this.info.day, score: formatNumber(used.score), rank: used.rank ? formatNumber(used.rank) : "—", time: formatTime(this.info.resetsAt),
      });
    } else {
      this.status.textContent = t("daily.open", { day: this.info.day, time: formatTime(this.info.resetsAt) });
    }
  }
}
