// A ghost race's ghost beside the player's own game: its lane, score and state in the race
// status (words), its car drawn as an outline in its lane on the player's row (a shape of its
// own, not a colour), who leads, and — only if wanted — its voice (GhostVoice). Ghost news
// (it crashed, it passed you) goes through a PacedSpeaker, so it never drowns the player's
// own cues and words.
import { t, formatNumber } from "../app/i18n.js";
import { laneName } from "../game/describe.js";
import { deviceSettings } from "../settings/device-settings.js";
import { GhostVoice } from "./ghost-voice.js";

export class GhostView {
  ghost = null;      // {gameId, name, score} from `started`
  state = null;      // the last `ghost` message
  #lead = 0;         // -1 ghost ahead, 0 level, 1 you ahead

  constructor(root, { game, speaker }) {
    this.root = root;
    this.game = game;          // the GameController of the player's own race
    this.speaker = speaker;
    this.voice = new GhostVoice(game.audio);
    this.lane = root.querySelector("[data-part='ghost-lane']");
    this.score = root.querySelector("[data-part='ghost-score']");
    this.status = root.querySelector("[data-part='ghost-state']");
    this.lead = root.querySelector("[data-part='ghost-lead']");
    this.name = root.querySelector("[data-part='ghost-name']");
    document.addEventListener("i18n", () => this.render());
  }

  start(ghost) {
    this.ghost = ghost ?? null;
    this.state = null;
    this.#lead = 0;
    this.render();
  }

  update(message) {
    const before = this.state;
    this.state = message;
    const hear = deviceSettings.values.ghostAudio;
    if (hear && before && before.lane !== message.lane && message.state === "racing") this.voice.lane(message.lane);
    if (message.state === "crashed" && before?.state !== "crashed") {
      if (hear) this.voice.crash(message.lane);
      this.speaker.say(t("replay.ghostCrashed", { score: formatNumber(message.score) }));
    }
    const mine = this.game.state.score;
    const lead = Math.sign(mine - message.score);
    if (lead !== 0 && lead !== this.#lead && this.#lead !== 0) {
      this.speaker.say(lead > 0 ? t("replay.youPassed") : t("replay.ghostPassed"));
    }
    if (lead !== 0) this.#lead = lead;
    this.render();
  }

  render() {
    const s = this.state;
    this.name.textContent = this.ghost ? t("replay.ghostOf", { name: this.ghost.name, score: formatNumber(this.ghost.score) }) : "—";
    this.lane.textContent = s ? laneName(s.lane) : "—";
    this.score.textContent = s ? formatNumber(s.score) : "—";
    this.status.textContent = s ? t(`replay.ghostStates.${["crashed", "left"].includes(s.state) ? s.state : "racing"}`) : "—";
    const mine = this.game.state.score;
    this.lead.textContent = !s ? "—"
      : mine > s.score ? t("replay.leadYou", { points: formatNumber(mine - s.score) })
        : mine < s.score ? t("replay.leadGhost", { points: formatNumber(s.score - mine) })
          : t("replay.leadLevel");
    this.#mark();
  }

  /** The ghost's car on the player's row: an outline in its lane (Web/css/watch.css). */
  #mark() {
    const rows = this.root.querySelectorAll("[data-part='road'] .road-row");
    const last = rows[rows.length - 1];
    for (const row of rows) for (const cell of row.children) cell.classList.remove("ghost", "ghost-crash");
    if (!last || !this.state) return;
    const cell = last.children[this.state.lane];
    cell?.classList.add(this.state.state === "crashed" ? "ghost-crash" : "ghost");
  }
}
