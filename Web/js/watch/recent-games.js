// Your recent games (GET /api/v1/me/games), newest first, ten at a time, each with its replay.
import { t, formatNumber, formatTime } from "../app/i18n.js";
import * as playTogether from "../net/play-together-api.js";
import { replayLink } from "./watch-target.js";

export class RecentGames {
  games = [];
  #nextBefore = null;  // the page after this one starts before this game (nextBefore)
  problem = null;

  constructor(section) {
    this.section = section;
    this.body = section.querySelector("tbody");
    this.status = section.querySelector("#recent-status");
    this.moreButton = section.querySelector("#recent-more");
    this.moreButton.addEventListener("click", () => this.#more());
  }

  /** The next ten: focus goes to the first of them, since the button may be gone (no more after
   * them) and a screen reader would not know the table grew. */
  async #more() {
    const before = this.games.length;
    await this.load(true);
    if (this.games.length > before) (this.body.rows[before].querySelector("a") ?? this.section.querySelector(".table-wrap")).focus();
  }

  async load(append = false) {
    try {
      const page = await playTogether.myGames({ limit: 10, before: append ? this.#nextBefore ?? undefined : undefined });
      const games = page.games ?? [];
      this.games = append ? [...this.games, ...games] : games;
      this.#nextBefore = page.nextBefore ?? null;
      this.problem = null;
    } catch (error) {
      this.problem = error;
    }
    this.render();
  }

  render() {
    this.status.textContent = this.problem ? t("replay.recentFailed", { message: this.problem.message }) : "";
    this.body.replaceChildren(...this.games.map((game) => this.#row(game)));
    this.section.querySelector("#recent-empty").hidden = this.games.length > 0 || Boolean(this.problem);
    this.moreButton.hidden = !this.#nextBefore || Boolean(this.problem);
  }

  #row(game) {
    const row = document.createElement("tr");
    const road = game.road === "daily" ? t("replay.roads.daily", { day: game.day ?? "" })
      : game.road === "ghost" ? t("replay.roads.ghost") : game.race ? t("replay.roads.race") : t("replay.roads.random");
    const kind = game.practice ? `${road} (${t("replay.practice")})` : road;
    const cells = [
      [formatTime(game.endedAt ?? game.startedAt), "when"],
      [t(`levels.${game.level}`), ""],
      [formatNumber(game.score), "number"],
      [kind, ""],
    ];
    for (const [text, cls] of cells) {
      const cell = document.createElement("td");
      cell.textContent = text;
      if (cls) cell.className = cls;
      row.append(cell);
    }
    const cell = document.createElement("td");
    if (!game.endedAt) {
      cell.textContent = t("replay.stillRunning");
    } else {
      const link = document.createElement("a");
      link.href = replayLink(game.gameId);
      link.textContent = t("replay.link");
      link.setAttribute("aria-label", t("replay.recentLinkLabel", { level: t(`levels.${game.level}`), score: formatNumber(game.score) }));
      cell.append(link);
    }
    row.append(cell);
    return row;
  }
}
