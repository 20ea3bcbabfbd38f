// The race page (Web/race.html): open a room, join one by code or by link, or wait in the
// quick race queue; the lobby; the countdown; the race on the player's own road (the play
// page's GameController, so every input, cue and announcement is the same) beside the live
// standings; the results and a rematch. The server decides everything (docs/PROTOCOL.md,
// "Rooms and races"): the page sends what the player asked and draws what comes back. One part
// shows at a time (main[data-phase]: entry, queue, lobby, countdown, racing, results) and
// focus moves to it; with one switch, the existing menu scan steps through its buttons.
import "../game/game-view-element.js";
import { startPage, pageReady } from "../app/page.js";
import { t, formatNumber, formatTime } from "../app/i18n.js";
import { GameController } from "../game/controller.js";
import { usable, menuIntervalMs } from "../input/menu-scan.js";
import { RaceFeed } from "../race/race-feed.js";
import { RoomView, me } from "../race/room-view.js";
import { roomNews } from "../race/room-news.js";
import { QueueView } from "../race/queue-view.js";
import { StandingsView } from "../race/standings-view.js";
import { StandingsAnnouncer } from "../race/standings-announcer.js";
import { ResultsView } from "../race/results-view.js";
import { Countdown } from "../race/countdown.js";
import { nameList } from "../race/racer-name.js";
import { showError, showGood, showNote, clearMessage } from "../race/race-errors.js";
import { deviceSettings } from "../settings/device-settings.js";

const FIRST_CHOICE_MS = 2500;  // as the play page's menu scan: time to hear what the scan is for

const context = await startPage();
const { store, socket, announcer } = context;
const main = document.getElementById("main");
const feed = new RaceFeed(socket);
// Before the controller's own listener: the race's part of the page is shown before the
// controller moves focus to the road in it.
feed.on("message", (message) => roadStarts(message));
const game = new GameController(main, { socket: feed, store, announcer });
const $ = (id) => document.getElementById(id);

const sections = { entry: $("entry"), queue: $("queue"), lobby: $("lobby"), results: $("results"), race: $("race") };
const roomView = new RoomView(main);
const queueView = new QueueView($("queue-status"));
const standings = new StandingsView($("standings"));
const rivals = new StandingsAnnouncer(announcer, () => store.settings.announcements && deviceSettings.values.rivalAnnouncements);
const resultsView = new ResultsView(main);
const countdown = new Countdown(game.audio);

let room = null;          // the last `room`
let lastResult = null;    // the last `raceOver`, drawn again on a language change
let pendingCode = null;   // the code of the joinRoom on its way (for its error's words)
let autoJoin = new URLSearchParams(location.search).get("room");  // a link joins at once
let rejoining = false;    // a reconnect sends joinRoom again; already_in_room is then fine
let welcomes = 0;
let waitingGame = null;   // welcome.resumable: the player's game that waits, if any
let resumingRace = false; // the player asked for their race game back: its snapshot is the race's
let quota = null;

const phase = () => main.dataset.phase;

// ---- Phases and focus ----

/** Shows one part of the page; `focus` is where focus goes (a heading or the road). */
function setPhase(next, focus = null) {
  const changed = phase() !== next;
  main.dataset.phase = next;
  sections.entry.hidden = next !== "entry";
  sections.queue.hidden = next !== "queue";
  sections.lobby.hidden = next !== "lobby";
  sections.results.hidden = next !== "results";
  sections.race.hidden = next !== "countdown" && next !== "racing";
  if (focus) focus.focus();
  if (changed) {
    if (next === "countdown") game.inputs.menu.stop();
    else if (next !== "racing") startScan(true);
  }
}

// ---- One switch: the lobby's (and every other part's) buttons through the existing scan ----

const SCAN = {
  entry: () => [$("resume-race"), $("open-room"), $("quick-race"), $("join-code").value.trim() ? $("join-room") : null],
  queue: () => [$("leave-queue")],
  lobby: () => [$("ready"), $("start-race"), $("copy-link"), $("copy-watch-link"), $("leave-room")],
  results: () => [$("rematch"), $("to-lobby"), $("results-leave")],
  racing: () => [$("say-standings"), $("race-leave")],
};

function choiceName(element) {
  return (element.getAttribute("aria-label") ?? element.textContent).trim();
}

/** With one switch on, steps through this part's buttons (the play page's menu scan). */
function startScan(announce) {
  const list = SCAN[phase()];
  if (!store.settings.controls.oneSwitch || !list) return;
  if (phase() === "racing" && game.state.phase !== "over") return;  // the road has the switch
  const menu = game.inputs.menu;
  const choices = () => list().filter(Boolean);
  menu.intervalMs = menuIntervalMs(store.settings);
  menu.start(choices, { first: document.activeElement, firstMs: Math.max(FIRST_CHOICE_MS, 2 * menu.intervalMs) });
  if (!menu.running || !announce || !store.settings.announcements) return;
  const names = choices().filter(usable).map(choiceName);
  announcer.say(`${t("say.switchChoices", { choices: nameList(names) })} ${t("say.switchNow", { choice: choiceName(menu.highlighted) })}`);
}
// The switch pressed while nothing is scanned (before the first scan, or after a race): scan.
game.on("wantsStart", () => startScan(true));

// ---- Plays ----

function showQuota(value) {
  if (value) quota = value;
  if (!quota) return;
  $("plays-left").textContent = quota.unlimited ? t("play.unlimited") : formatNumber(quota.playsLeft);
  $("plays-reset").textContent = quota.unlimited ? "" : t("play.resetsAt", { time: formatTime(quota.resetsAt) });
}
game.on("quota", showQuota);

// ---- Sending, with the refusal shown where the player asked ----

function send(message, target) {
  if (socket.send(message)) return true;
  showError(target, { code: "offline" });
  return false;
}

function chosen(name) {
  return document.querySelector(`input[name='${name}']:checked`)?.value ?? store.settings.speedLevel;
}

function showLevel(level) {
  for (const name of ["open-level", "quick-level"]) {
    const radio = document.querySelector(`input[name='${name}'][value='${level}']`);
    if (radio && !document.querySelector(`input[name='${name}']:checked`)) radio.checked = true;
  }
}

$("open-room").addEventListener("click", () => {
  clearMessage($("open-message"));
  game.audio.unlock();
  send({ type: "openRoom", level: chosen("open-level"), seats: Number($("open-seats").value), practice: $("open-practice").checked }, $("open-message"));
});

function join(code, { auto = false } = {}) {
  const field = $("join-code");
  const message = $("join-message");
  clearMessage(message);
  field.removeAttribute("aria-invalid");
  const typed = String(code ?? "").trim();
  if (!typed) {
    field.setAttribute("aria-invalid", "true");
    showError(message, { code: "code_empty" });
    field.focus();
    return;
  }
  pendingCode = typed;
  autoJoinFailedFocus = auto;
  send({ type: "joinRoom", code: typed }, message);
}
let autoJoinFailedFocus = false;
$("join-room").addEventListener("click", () => { game.audio.unlock(); join($("join-code").value); });
$("join-code").addEventListener("keydown", (event) => {
  if (event.key === "Enter") { event.preventDefault(); join($("join-code").value); }
});

$("quick-race").addEventListener("click", () => {
  clearMessage($("quick-message"));
  game.audio.unlock();
  send({ type: "quickRace", level: chosen("quick-level") }, $("quick-message"));
});
$("leave-queue").addEventListener("click", () => send({ type: "leaveQueue" }, $("queue-message")));

$("ready").addEventListener("click", () => {
  clearMessage($("lobby-message"));
  game.audio.unlock();
  send({ type: "ready", ready: !me(room ?? {})?.ready }, $("lobby-message"));
});
$("start-race").addEventListener("click", () => {
  clearMessage($("lobby-message"));
  game.audio.unlock();
  send({ type: "startRace" }, $("lobby-message"));
});
for (const [id, target] of [["leave-room", "lobby-message"], ["results-leave", "results-message"], ["race-leave", "race-message"]]) {
  $(id).addEventListener("click", () => send({ type: "leaveRoom" }, $(target)));
}

/** Copies the link in `field`, saying so in `message` (`done`: the key of the good news). */
async function copyLink(field, message, done) {
  try {
    await navigator.clipboard.writeText(field.value);
    showGood(message, done);
  } catch {
    // No clipboard here (permissions, an old browser): select it so the player can copy it.
    field.focus();
    field.select();
    const copied = document.execCommand?.("copy");
    if (copied) showGood(message, done);
    else showError(message, { code: "copy_failed" });
  }
}
// The invite link (joins the room) and the watch link (watches its race), each with its Copy.
$("copy-link").addEventListener("click", () => copyLink($("room-link"), $("copy-message"), "race.linkCopied"));
$("copy-watch-link").addEventListener("click", () => copyLink($("room-watch-link"), $("copy-watch-message"), "race.watchLinkCopied"));

$("rematch").addEventListener("click", () => {
  game.audio.unlock();
  setPhase("lobby", $("lobby-heading"));
  if (!me(room ?? {})?.ready) send({ type: "ready", ready: true }, $("lobby-message"));
});
$("to-lobby").addEventListener("click", () => setPhase("lobby", $("lobby-heading")));
$("say-standings").addEventListener("click", () => announcer.sayNow(standings.text()));
$("resume-race").addEventListener("click", () => {
  $("resume-box").hidden = true;
  resumingRace = true;
  game.resumeWaiting();
});

/** A game of the player's waits (after a reload) and their room races: offer it back, first. */
function offerRace() {
  const code = waitingGame?.race ?? (room && room.state !== "lobby" && me(room) ? room.code : null);
  if (!waitingGame || !code) return;
  $("resume-text").textContent = t("race.waitingRace", { code, score: formatNumber(waitingGame.score ?? 0) });
  $("resume-box").hidden = false;
  if (phase() === "entry") $("resume-race").focus();
}

// ---- The server's answers ----

socket.on("welcome", (welcome) => {
  welcomes += 1;
  showQuota(welcome.quota);
  waitingGame = welcome.resumable ?? null;
  if (waitingGame && welcomes > 1 && (phase() === "racing" || phase() === "countdown")) {
    resumingRace = true;
    game.resumeWaiting();  // back after a dropped connection: the race goes on, take the road back
  } else {
    offerRace();
  }
  if (autoJoin) {
    $("join-code").value = autoJoin;
    const code = autoJoin;
    autoJoin = null;
    join(code, { auto: true });
  } else if (welcomes > 1 && room && (phase() === "lobby" || phase() === "results")) {
    rejoining = true;
    socket.send({ type: "joinRoom", code: room.code });
  }
});

socket.on("room", ({ room: next }) => {
  if (!next) return;
  const before = room;
  room = next;
  pendingCode = null;
  rejoining = false;
  roomView.render(room);
  showRaceWithoutYou();
  if (before?.code !== room.code) {
    history.replaceState(null, "", `/race.html?room=${encodeURIComponent(room.code)}`);
    clearMessage($("join-message"));
    $("join-code").removeAttribute("aria-invalid");
    queueView.stop();
  }
  if (phase() === "lobby" && store.settings.announcements) for (const news of roomNews(before, room)) announcer.say(news);
  if (room.state !== "lobby" && phase() === "entry") offerRace();
  if (room.state === "lobby" && (phase() === "entry" || phase() === "queue")) {
    setPhase("lobby", $("lobby-heading"));
    if (store.settings.announcements) announcer.say(t("race.sayInLobby", { code: room.code, count: room.racers.length, seats: room.seats }));
  }
});

/** The room races without this player (set not ready for want of a play): say so, and how to watch. */
let withoutYouShown = false;
function showRaceWithoutYou() {
  const note = $("lobby-message");
  if (room.state !== "lobby" && phase() === "lobby") {
    const code = room.code;
    showNote(note, "race.raceWithoutYou", {}, () => {
      const link = document.createElement("a");
      link.href = `/watch.html?room=${encodeURIComponent(code)}`;
      link.textContent = t("race.watchLink");
      return [" ", link];
    });
    withoutYouShown = true;
  } else if (withoutYouShown && room.state === "lobby") {
    clearMessage(note);
    withoutYouShown = false;
  }
}

socket.on("roomLeft", (message) => {
  const code = room?.code ?? message.code;
  leaveToEntry(message.reason === "closed" ? "race.roomClosed" : "race.youLeft", { code });
});

function leaveToEntry(key, values) {
  room = null;
  countdown.stop();
  history.replaceState(null, "", "/race.html");
  const notice = $("entry-notice");
  showNote(notice, key, values);
  setPhase("entry", notice);
}

socket.on("queue", (queue) => {
  if (queue.left) {
    queueView.stop();
    showGood($("quick-message"), "race.queueLeft");
    setPhase("entry", $("quick-race"));
    return;
  }
  const words = queueView.render(queue);
  if (phase() !== "queue" && phase() === "entry") setPhase("queue", $("queue-heading"));
  if (words && store.settings.announcements) announcer.say(words);
});

socket.on("countdown", (message) => {
  if (room && message.code !== room.code) return;
  standings.clear();
  rivals.reset();
  lastResult = null;
  $("race-over-note").hidden = true;
  clearMessage($("race-message"));
  queueView.stop();
  setPhase("countdown");
  game.focusRoad();  // the keys work on the road the moment it starts
  countdown.start(Number(message.startsInMs) || 0);
  if (store.settings.announcements) announcer.sayNow(t("race.sayCountdown", { seconds: countdown.seconds }));
});

countdown.on("tick", ({ seconds }) => {
  $("countdown-text").textContent = t("race.startsIn", { seconds: formatNumber(seconds) });
  const sign = $("countdown-sign");
  sign.textContent = formatNumber(seconds);
  sign.hidden = false;
});
countdown.on("go", () => {
  $("countdown-text").textContent = t("race.go");
  $("countdown-sign").hidden = true;
});

/** The race's road starts (the held `started` released at the deadline) or comes back. */
function roadStarts(message) {
  const race = message.game?.race || (message.type === "snapshot" && resumingRace);
  if ((message.type === "started" || message.type === "snapshot") && race) {
    resumingRace = false;
    waitingGame = null;
    $("resume-box").hidden = true;
    $("countdown-sign").hidden = true;
    countdown.stop();
    if (phase() !== "racing") setPhase("racing");
    $("countdown-text").textContent = "";
  }
}

/** The player's seat: the room's `you`, or (taken back after a reload) their game's line. */
function mySeat(racers = []) {
  if (room?.you !== undefined && room?.you !== null) return room.you;
  return racers.find((racer) => racer.gameId && racer.gameId === game.state.gameId)?.seat ?? null;
}

socket.on("standings", (message) => {
  if (room && message.code !== room.code) return;
  const you = mySeat(message.racers);
  standings.render(message.racers ?? [], you);
  rivals.update(message.racers ?? [], you);
});

socket.on("watchers", (message) => {
  $("race-watchers").textContent = message.count ? t("race.watchingYou", { count: formatNumber(message.count) }) : "";
});

// The player's own road ended; the others may race on.
game.on("gameOver", (result) => {
  if (phase() !== "racing") return;
  const note = $("race-over-note");
  note.textContent = t("race.yourRaceOver", { score: formatNumber(result.score) });
  note.hidden = false;
  $("standings-heading").focus();
  if (result.quota) showQuota(result.quota);
  setTimeout(() => startScan(true), 0);  // after the controller's own words
});

socket.on("raceOver", (message) => {
  if (room && message.code !== room.code) return;
  lastResult = message;
  countdown.stop();
  const words = resultsView.render(message, mySeat(message.results), room?.race);
  clearMessage($("results-message"));
  setPhase("results", $("results-heading"));
  if (store.settings.announcements) announcer.say(words);
});

// ---- Refusals, each next to what caused it ----

const TARGETS = {
  openRoom: "open-message", joinRoom: "join-message", quickRace: "quick-message", leaveQueue: "queue-message",
  ready: "lobby-message", startRace: "lobby-message",
};
const PHASE_TARGETS = { entry: "entry-notice", queue: "queue-message", lobby: "lobby-message", results: "results-message", countdown: "race-message", racing: "race-message" };

socket.on("error", (error) => {
  const about = error.inReplyTo;
  if (about === "joinRoom" && rejoining) {
    rejoining = false;
    if (error.code === "already_in_room") return;  // still in it: the room comes as it changes
  }
  if (!(about in TARGETS) && about !== "leaveRoom" && !(about === undefined && room)) return;  // the game's: the controller's
  if (["not_in_room"].includes(error.code) && room) {
    leaveToEntry("race.errors.not_in_room");
    return;
  }
  const target = $(TARGETS[about] ?? PHASE_TARGETS[phase()]);
  showError(target, error, { code: about === "joinRoom" ? pendingCode : room?.code });
  if (about === "joinRoom") {
    const field = $("join-code");
    if (["room_not_found", "bad_message"].includes(error.code)) field.setAttribute("aria-invalid", "true");
    if (autoJoinFailedFocus) field.focus();  // the link's code failed: the field to fix it
    autoJoinFailedFocus = false;
    pendingCode = null;
  }
  if (error.quota) showQuota(error.quota);
});

// The game's own refusals and losses (another tab took it, offline) beside the road.
game.on("problem", (problem) => {
  const target = $(PHASE_TARGETS[phase()] ?? "entry-notice");
  showError(target, problem);
});

// ---- Language, settings, start ----

document.addEventListener("i18n", () => {
  if (room) roomView.render(room);
  if (standings.racers.length) standings.render(standings.racers, standings.you);
  if (lastResult) resultsView.render(lastResult, mySeat(lastResult.results), room?.race);
  showQuota(null);
});
store.on("change", ({ settings }) => showLevel(settings.speedLevel));
showLevel(store.settings.speedLevel);
pageReady();
