// The live standings beside the road (the server's `standings`): one line per racer in place
// order, with score, state and lane in words, the player's own line marked by a symbol and
// "(you)" as well as weight. It only draws; it is not a live region (news of it is spoken by
// the StandingsAnnouncer, rate-limited), and `text()` is the whole list for "Say the standings".
import { t, formatNumber } from "../app/i18n.js";
import { laneName } from "../game/describe.js";
import { racerLabel } from "./racer-name.js";

export function stateName(state) {
  const key = `race.states.${state}`;
  const text = t(key);
  return text === key ? String(state) : text;
}

export class StandingsView {
  racers = [];
  you = null;

  constructor(list) {
    this.list = list;
  }

  clear() {
    this.racers = [];
    this.list.replaceChildren();
  }

  render(racers, you) {
    this.racers = [...racers].sort((a, b) => a.place - b.place || a.seat - b.seat);
    this.you = you;
    this.list.replaceChildren(...this.racers.map((racer) => {
      const item = document.createElement("li");
      item.value = racer.place;
      item.dataset.seat = String(racer.seat);
      item.dataset.state = racer.state;
      if (racer.seat === you) item.className = "me";
      item.textContent = this.#line(racer);
      return item;
    }));
  }

  /** Every line, for speech: "Place 1: Bo, 40 points, racing. Place 2: …". */
  text() {
    if (this.racers.length === 0) return t("race.noStandings");
    return this.racers.map((racer) => t("race.standingsLine", { place: racer.place, line: this.#line(racer) })).join(" ");
  }

  #line(racer) {
    const parts = [racerLabel(racer, this.you), t("race.points", { score: formatNumber(racer.score ?? 0) }), stateName(racer.state)];
    if (racer.state === "racing" && Number.isInteger(racer.lane)) parts.push(t("race.inLane", { lane: laneName(racer.lane) }));
    return parts.join(", ");
  }
}
