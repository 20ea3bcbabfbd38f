// The watch page: /watch.html?game=ID or ?room=CODE[&seat=N]. Sends `watch` once connected
// (again after a reconnect), shows the watched game read-only (Web/js/watch/watch-view.js),
// a race's standings with the racer to follow, the number watching, and a clear end with the
// way to its replay. Without a game in the address it asks for a room code or a watch link.
import "../game/game-view-element.js";
import { startPage, pageReady } from "../app/page.js";
import { t, formatNumber } from "../app/i18n.js";
import { WatchView } from "../watch/watch-view.js";
import { StandingsView } from "../watch/standings-view.js";
import { PacedSpeaker } from "../watch/paced-speaker.js";
import { PageSwitch } from "../watch/page-switch.js";
import { watchTarget, replayLink, endReason } from "../watch/watch-target.js";
import { LobbyWait } from "../watch/lobby-wait.js";

const { store, socket, announcer } = await startPage();
const main = document.getElementById("main");
const heading = document.getElementById("watch-heading");
const subject = document.getElementById("watch-subject");
const message = document.getElementById("watch-message");
const options = document.getElementById("watch-options");
const gameArea = document.getElementById("watch-game");
const ended = document.getElementById("watch-ended");
const count = document.getElementById("watch-count");
const speaker = new PacedSpeaker(announcer, { enabled: () => store.settings.announcements });
const view = new WatchView(gameArea, { store, announcer, soundToggle: document.getElementById("watch-sound") });
const standings = new StandingsView(document.getElementById("standings"), speaker);
new PageSwitch(main, { store, announcer });
const lobbyWait = new LobbyWait();

let target = watchTarget(new URLSearchParams(location.search));
let watched = null;  // {gameId, name, room} once the server says `watching`
let shown = null;    // what the message line says, as a key, to say it again in another language

function show(key, values = {}, tone = "") {
  shown = { key, values, tone };
  message.className = tone ? `message ${tone}` : "message";
  message.textContent = key ? t(key, values) : "";
}

function sendWatch(extra = {}) {
  if (!target) return;
  const request = target.gameId ? { type: "watch", gameId: target.gameId } : { type: "watch", room: target.room, ...(target.seat !== undefined ? { seat: target.seat } : {}) };
  if (socket.send({ ...request, ...extra })) show("watch.connecting");
}

function showSubject() {
  if (!watched) return;
  heading.textContent = t("watch.headingName", { name: watched.name });
  subject.textContent = watched.room
    ? t("watch.subjectRace", { room: watched.room, level: t(`levels.${view.state.level}`) })
    : t("watch.subjectGame", { level: t(`levels.${view.state.level}`) });
  document.title = `${heading.textContent} · ${t("common.brand")}`;
}

socket.on("welcome", () => { if (!lobbyWait.waiting) sendWatch(); });

socket.on("message", (m) => {
  switch (m.type) {
    case "watching": {
      // The first picture: the road scrolls into view (on a phone it starts below the fold).
      if (!watched) requestAnimationFrame(() => gameArea.querySelector(".road-section").scrollIntoView({ block: "nearest" }));
      watched = { gameId: m.gameId, name: m.player?.name ?? "", room: m.room ?? null };
      view.load(m.game, { name: watched.name });
      gameArea.hidden = false;
      options.hidden = false;
      ended.hidden = true;
      count.textContent = formatNumber(m.watchers ?? 1);
      showSubject();
      show("");
      standings.follow(standings.racers.find((racer) => racer.gameId === m.gameId)?.seat ?? target?.seat ?? null);
      if (store.settings.announcements) {
        announcer.say(t("watch.sayWatching", { name: watched.name, level: t(`levels.${view.state.level}`), score: formatNumber(view.state.score) }));
      }
      break;
    }
    case "standings":
      standings.update(m);
      if (watched) standings.follow(standings.racers.find((racer) => racer.gameId === watched.gameId)?.seat ?? standings.following);
      break;
    case "countdown":
      show("watch.countdown", { seconds: formatNumber(Math.ceil((m.startsInMs ?? 0) / 1000)) });
      if (store.settings.announcements) announcer.say(message.textContent);
      break;
    case "watchers":
      if (!watched || m.gameId === watched.gameId) count.textContent = formatNumber(m.count);
      break;
    case "raceOver": {
      const winner = (m.results ?? []).find((result) => result.place === 1);
      if (winner) speaker.say(t("watch.sayRaceOver", { name: winner.name, score: formatNumber(winner.score) }));
      break;
    }
    case "watchEnded":
      if (!watched || m.gameId !== watched.gameId || m.reason === "stopped") break;
      if (m.reason === "moved") sendWatch();  // the game went to another node: find it again
      else showEnd(m);
      break;
    case "error":
      if (m.inReplyTo === "watch") refused(m);
      break;
    default:
      if (watched) view.handle(m);
  }
});

function showEnd(end) {
  view.end(end.score);
  speaker.clear();
  const score = formatNumber(end.score ?? view.state.score);
  const stillRacing = standings.racers.some((racer) => racer.state === "racing" && racer.gameId !== watched.gameId);
  document.getElementById("ended-text").textContent = [
    t("watch.endedText", { name: watched.name, reason: endReason(end.reason), score }),
    stillRacing ? t("watch.othersRacing") : "",
  ].filter(Boolean).join(" ");
  document.getElementById("ended-replay").href = replayLink(watched.gameId);
  ended.hidden = false;
  // Focus goes to the end unless the watcher is choosing another racer in the standings.
  const focusWasOnGame = [document.body, main].includes(document.activeElement) || gameArea.contains(document.activeElement) || options.contains(document.activeElement);
  if (focusWasOnGame) document.getElementById("ended-heading").focus();
  if (store.settings.announcements) announcer.say(t("watch.sayEnded", { name: watched.name, score }));
}

/** A refused `watch`: in words, with the replay when the game has ended. A room's link opened
 * while the room is in its lobby waits for its race instead (Web/js/watch/lobby-wait.js). */
function refused(error) {
  if (error.code === "game_not_found" && target?.room && !watched && !lobbyWait.waiting) {
    const room = target.room;
    lobbyWait.check(room, {
      onLobby: () => {
        show("watch.waitingForRace", { room });
        if (store.settings.announcements) announcer.say(message.textContent);
      },
      onStart: () => sendWatch(),
      onNotLobby: () => showRefusal(error),
    });
    return;
  }
  showRefusal(error);
}

function showRefusal(error) {
  const known = ["game_not_found", "game_over", "watchers_full", "game_in_progress", "room_not_found", "not_watching", "watch_elsewhere", "room_elsewhere", "unavailable"];
  const key = known.includes(error.code) ? `watch.errors.${error.code}` : null;
  show(key ?? "watch.errors.generic", { message: error.message ?? "" }, "bad");
  if (error.code === "game_over" && target?.gameId) {
    const link = document.createElement("a");
    link.href = replayLink(target.gameId);
    link.textContent = t("watch.watchReplay");
    message.append(" ", link);
  }
  if (store.settings.announcements) announcer.say(message.textContent);
}

standings.on("follow", ({ seat }) => {
  const room = watched?.room ?? target?.room;
  if (!room) return;
  target = { room, seat };
  const url = new URL(location.href);
  url.searchParams.set("seat", String(seat));
  history.replaceState(null, "", url);
  sendWatch();
});

// No game in the address: ask for one (a room code or a watch link).
const pick = document.getElementById("watch-pick");
document.getElementById("pick-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const input = document.getElementById("pick-target");
  const chosen = watchTarget(input.value);
  if (!chosen) {
    input.setAttribute("aria-invalid", "true");
    show("watch.pickInvalid", {}, "bad");
    // The refusal describes the field: back on it, a screen reader says why it is marked
    // invalid, not only that it is.
    input.setAttribute("aria-describedby", "pick-hint watch-message");
    announcer.say(message.textContent);
    input.focus();
    return;
  }
  location.search = chosen.gameId ? `?game=${encodeURIComponent(chosen.gameId)}` : `?room=${encodeURIComponent(chosen.room)}`;
});
// Once the player changes what they typed, it is no longer the text that was refused.
document.getElementById("pick-target").addEventListener("input", (event) => {
  event.target.removeAttribute("aria-invalid");
  event.target.setAttribute("aria-describedby", "pick-hint");
});
if (!target) pick.hidden = false;
else if (socket.connected) sendWatch();
else show("watch.connecting");

document.addEventListener("i18n", () => {
  showSubject();
  if (shown) show(shown.key, shown.values, shown.tone);
  standings.render();
});
pageReady();
