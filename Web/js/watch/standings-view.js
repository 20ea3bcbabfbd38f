// A race's standings for a watcher (the `standings` message, docs/PROTOCOL.md): a table in
// place order, and a radio group to choose which racer to follow (names only, so the labels
// do not change under a screen reader's focus at every update). A new leader, or the followed
// racer's new place or end, is said through a PacedSpeaker: politely, seldom, newest only.
import { t, formatNumber } from "../app/i18n.js";
import { Emitter } from "../app/emitter.js";
import { laneName } from "../game/describe.js";

export class StandingsView extends Emitter {
  racers = [];
  following = null;  // the followed racer's seat

  constructor(section, speaker) {
    super();
    this.section = section;
    this.speaker = speaker;
    this.body = section.querySelector("tbody");
    this.choices = section.querySelector("[data-part='follow-choices']");
    this.caption = section.querySelector("caption");
    this.choices.addEventListener("change", (event) => {
      const seat = Number(event.target.value);
      if (Number.isInteger(seat) && seat !== this.following) this.emit("follow", { seat });
    });
    document.addEventListener("i18n", () => this.render());
  }

  follow(seat) {
    if (seat === this.following) return;
    this.following = seat;
    this.render();
  }

  update(message) {
    const before = new Map(this.racers.map((racer) => [racer.seat, racer]));
    const leaderBefore = this.racers.find((racer) => racer.place === 1)?.seat;
    this.racers = [...(message.racers ?? [])].sort((a, b) => a.place - b.place);
    this.section.hidden = false;
    this.render();
    if (before.size === 0) return;  // the first standings are the page's, not news
    const leader = this.racers.find((racer) => racer.place === 1);
    const mine = this.racers.find((racer) => racer.seat === this.following);
    const then = mine ? before.get(mine.seat) : null;
    if (mine && then && then.state === "racing" && mine.state !== "racing") {
      this.speaker.say(t("watch.sayRacerEnded", { name: mine.name, state: stateName(mine.state), score: formatNumber(mine.score) }));
    } else if (leader && leaderBefore !== undefined && leader.seat !== leaderBefore) {
      this.speaker.say(t("watch.sayLeader", { name: leader.name, score: formatNumber(leader.score) }));
    } else if (mine && then && then.place !== mine.place) {
      this.speaker.say(t("watch.sayPlace", { name: mine.name, place: formatNumber(mine.place) }));
    }
  }

  render() {
    this.caption.textContent = t("watch.standingsCaption", { count: formatNumber(this.racers.length) });
    this.body.replaceChildren(...this.racers.map((racer) => {
      const row = document.createElement("tr");
      if (racer.seat === this.following) row.className = "me";
      const cells = [
        [formatNumber(racer.place), "number"],
        [racer.seat === this.following ? t("watch.followedName", { name: racer.name }) : racer.name, "name"],
        [formatNumber(racer.score), "number"],
        [racer.lane === undefined || racer.lane === null ? "—" : laneName(racer.lane), ""],
        [stateName(racer.state), ""],
      ];
      for (const [text, cls] of cells) {
        const cell = document.createElement("td");
        cell.textContent = text;
        if (cls) cell.className = cls;
        row.append(cell);
      }
      return row;
    }));
    this.#renderChoices();
  }

  /** The radios change only when the racers do (by seat), so focus and the screen reader's
   * place in the group survive every update. */
  #renderChoices() {
    const seats = [...this.racers].sort((a, b) => a.seat - b.seat);
    const key = seats.map((racer) => `${racer.seat}:${racer.name}`).join("|") + document.documentElement.lang;
    if (this.choices.dataset.key !== key) {
      this.choices.dataset.key = key;
      const focusedSeat = document.activeElement?.closest?.("[data-part='follow-choices']") ? document.activeElement.value : null;
      this.choices.replaceChildren(...seats.map((racer) => {
        const id = `follow-seat-${racer.seat}`;
        const label = document.createElement("label");
        label.className = "choice";
        label.htmlFor = id;
        const radio = document.createElement("input");
        radio.type = "radio";
        radio.name = "follow";
        radio.id = id;
        radio.value = String(racer.seat);
        const text = document.createElement("span");
        text.textContent = racer.name;
        label.append(radio, text);
        return label;
      }));
      if (focusedSeat !== null) this.choices.querySelector(`input[value='${focusedSeat}']`)?.focus();
    }
    this.#markChoice();
  }

  #markChoice() {
    for (const radio of this.choices.querySelectorAll("input")) radio.checked = Number(radio.value) === this.following;
  }
}

export function stateName(state) {
  const key = `watch.racerStates.${state}`;
  const text = t(key);
  return text === key ? state : text;
}
