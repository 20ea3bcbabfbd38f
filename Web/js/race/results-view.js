// A race's results (the server's `raceOver`): the finish order with each racer's score and how
// their race ended, as a table with a caption, and a sentence with the player's own place.
import { t, formatNumber } from "../app/i18n.js";
import { racerLabel, racerName } from "./racer-name.js";
import { stateName } from "./standings-view.js";

export class ResultsView {
  constructor(root) {
    this.heading = root.querySelector("#results-heading");
    this.caption = root.querySelector("#results-caption");
    this.rows = root.querySelector("#results-rows");
    this.note = root.querySelector("#results-note");
  }

  /** Draws `result` (raceOver) for the racer in seat `you`; returns the words to say. */
  render(result, you, raceNumber) {
    const results = [...(result.results ?? [])].sort((a, b) => a.place - b.place);
    this.heading.textContent = raceNumber ? t("race.resultsHeadingNumber", { race: raceNumber }) : t("race.resultsHeading");
    this.caption.textContent = t("race.resultsCaption", { count: results.length });
    this.rows.replaceChildren(...results.map((entry) => {
      const row = document.createElement("tr");
      if (entry.seat === you) row.className = "me";
      const cells = [formatNumber(entry.place), racerLabel(entry, you), formatNumber(entry.score ?? 0), stateName(entry.reason)];
      cells.forEach((text, index) => {
        const cell = document.createElement(index === 1 ? "th" : "td");
        if (index === 1) cell.scope = "row";
        if (index === 0 || index === 2) cell.className = "number";
        if (index === 1) cell.className = "name";
        cell.textContent = text;
        row.append(cell);
      });
      return row;
    }));
    const mine = results.find((entry) => entry.seat === you);
    const winner = results[0];
    this.note.textContent = mine
      ? t("race.yourResult", { place: mine.place, count: results.length, score: formatNumber(mine.score ?? 0) })
      : "";
    const won = !winner ? "" : winner.seat === you ? t("race.sayYouWon", { score: winner.score ?? 0 })
      : t("race.sayWinner", { name: racerName(winner), score: winner.score ?? 0 });
    const said = [won, this.note.textContent];
    return said.filter(Boolean).join(" ");
  }
}
