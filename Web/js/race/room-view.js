// The lobby of one room (the server's `room` message): its code, its link and the link to
// watch it, who is in, who is
// ready, the Ready toggle, and Start for the host with why it cannot start yet. Only draws;
// the page sends what the buttons ask for. The buttons are never rebuilt, so focus and the
// one switch's scan stay on them while the room changes.
import { t, formatNumber } from "../app/i18n.js";
import { racerName, racerLabel, nameList } from "./racer-name.js";

/** Why the host cannot start now, in words, or null when they can: 2 racers or more, every
 * one ready but the host (whose Start says they are). */
export function startProblem(room) {
  const racers = room.racers ?? [];
  if (racers.length < 2) return t("race.needTwo");
  const waiting = racers.filter((racer) => !racer.ready && racer.seat !== room.hostSeat).map(racerName);
  if (waiting.length) return t("race.waitingReady", { names: nameList(waiting) });
  return null;
}

/** The absolute address that watches room `code`'s race (Web/watch.html waits for its start). */
export function watchRoomUrl(code) {
  return new URL(`/watch.html?room=${encodeURIComponent(code)}`, location.origin).href;
}

export function me(room) {
  return (room.racers ?? []).find((racer) => racer.seat === room.you) ?? null;
}

export function isHost(room) {
  return room.you !== null && room.you !== undefined && room.you === room.hostSeat;
}

export class RoomView {
  constructor(root) {
    this.heading = root.querySelector("#lobby-heading");
    this.code = root.querySelector("#room-code");
    this.level = root.querySelector("#room-level");
    this.kind = root.querySelector("#room-kind");
    this.watchers = root.querySelector("#room-watchers");
    this.link = root.querySelector("#room-link");
    this.watchLink = root.querySelector("#room-watch-link");
    this.racersHeading = root.querySelector("#racers-heading");
    this.racers = root.querySelector("#racers");
    this.ready = root.querySelector("#ready");
    this.start = root.querySelector("#start-race");
    this.reason = root.querySelector("#start-reason");
    this.readyHint = root.querySelector("#ready-hint");
  }

  render(room) {
    this.heading.textContent = t("race.lobbyHeading", { code: room.code });
    this.code.textContent = room.code;
    this.level.textContent = t(`levels.${room.level}`);
    this.kind.textContent = room.practice ? t("race.kindPractice") : room.quick ? t("race.kindQuick") : t("race.kindScored");
    this.watchers.textContent = formatNumber(room.watchers ?? 0);
    this.link.value = new URL(room.link ?? `/race.html?room=${room.code}`, location.origin).href;
    this.watchLink.value = watchRoomUrl(room.code);
    const racers = room.racers ?? [];
    this.racersHeading.textContent = t("race.racersHeading", { count: racers.length, seats: room.seats });
    this.racers.replaceChildren(...racers.map((racer) => this.#line(racer, room)));

    const mine = me(room);
    this.ready.setAttribute("aria-pressed", String(Boolean(mine?.ready)));
    this.ready.hidden = !mine;
    const host = isHost(room);
    this.readyHint.textContent = host ? t("race.readyHintHost") : t("race.readyHint");
    const problem = startProblem(room);
    const startHadFocus = document.activeElement === this.start;
    this.start.hidden = !host;
    this.start.disabled = !host || problem !== null;
    // A racer left or stopped being ready under the host's focus: a disabled button drops focus
    // to the page's start, so it moves to Ready beside it (the news says why Start waits).
    if (startHadFocus && this.start.disabled) (this.ready.hidden ? this.heading : this.ready).focus();
    if (host) this.reason.textContent = problem ?? t("race.allReady");
    else {
      const hostRacer = racers.find((racer) => racer.seat === room.hostSeat);
      this.reason.textContent = t("race.hostStarts", { name: hostRacer ? racerName(hostRacer) : "?" });
    }
  }

  #line(racer, room) {
    const item = document.createElement("li");
    item.className = racer.ready ? "racer ready" : "racer";
    if (racer.seat === room.you) item.classList.add("me");
    const name = document.createElement("span");
    name.className = "racer-name";
    name.textContent = racerLabel(racer, room.you);
    const facts = [racer.ready ? `✓ ${t("race.isReady")}` : `○ ${t("race.notReady")}`];
    if (racer.seat === room.hostSeat) facts.push(t("race.isHost"));
    if (racer.connected === false) facts.push(t("race.disconnected"));
    const state = document.createElement("span");
    state.className = "racer-state";
    state.textContent = facts.join(" · ");
    item.append(name, " ", state);
    return item;
  }
}
