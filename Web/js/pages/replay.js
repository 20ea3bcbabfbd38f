// The replay page: /replay.html?game=ID. The server re-plays the stored game (`replay`) at its
// own pace; the page shows it read-only (Web/js/watch/watch-view.js) with Play/Pause, a step
// back and forward and a seek slider (Web/js/watch/replay-controls.js). "Race this ghost"
// ends the replay and starts the player's own practice game on that road (`raceGhost`), played
// through the usual GameController, with the ghost beside it (Web/js/watch/ghost-view.js).
import "../game/game-view-element.js";
import { startPage, pageReady } from "../app/page.js";
import { t, formatNumber } from "../app/i18n.js";
import { GameController } from "../game/controller.js";
import { WatchView } from "../watch/watch-view.js";
import { ReplayControls } from "../watch/replay-controls.js";
import { GhostView } from "../watch/ghost-view.js";
import { PacedSpeaker } from "../watch/paced-speaker.js";
import { PageSwitch } from "../watch/page-switch.js";
import { StartSocket } from "../game/start-socket.js";
import { replayLink } from "../watch/watch-target.js";
import { bindCheckbox } from "../settings/device-settings.js";

const { store, socket, announcer } = await startPage();
const main = document.getElementById("main");
const gameId = new URLSearchParams(location.search).get("game");
const heading = document.getElementById("replay-heading");
const subject = document.getElementById("replay-subject");
const message = document.getElementById("replay-message");
const replayView = document.getElementById("replay-view");
const ghostRace = document.getElementById("ghost-race");
const say = (text) => { if (store.settings.announcements) announcer.say(text); };
const speaker = new PacedSpeaker(announcer, { enabled: () => store.settings.announcements });
const view = new WatchView(document.getElementById("replay-game"), { store, announcer, soundToggle: document.getElementById("watch-sound") });
const controls = new ReplayControls(replayView);
const pageSwitch = new PageSwitch(main, { store, announcer });
bindCheckbox(document.getElementById("ghost-audio"), "ghostAudio");

let mode = "replay";     // "replay" until the player races the ghost, then "ghost"
let replay = null;       // the `replaying` message
let seeking = false;     // a seek was asked: its snapshot and state are not news
let ghostOpen = false;   // the ghost race's `started` has come: its messages go to the controller
let shown = null;

function show(key, values = {}, tone = "") {
  shown = { key, values, tone };
  message.className = tone ? `message ${tone}` : "message";
  message.textContent = key ? t(key, values) : "";
}

function showSubject() {
  if (!replay) return;
  heading.textContent = t("replay.headingName", { name: replay.player?.name ?? "" });
  const words = [t("replay.subject", {
    level: t(`levels.${replay.level}`), score: formatNumber(replay.score), steps: formatNumber(replay.steps),
  })];
  // The road it ran on, as the live game's own page said it: the day's road is everyone's that day.
  if (replay.game?.road === "daily" && replay.game.day) words.push(t("replay.dailyRoad", { day: replay.game.day }));
  subject.textContent = words.join(" ");
  document.title = `${heading.textContent} · ${t("common.brand")}`;
}

function askReplay() {
  if (mode === "replay" && gameId && socket.send({ type: "replay", gameId })) show("replay.loading");
}

socket.on("welcome", (welcome) => {
  if (mode === "replay") askReplay();
  else if (welcome.resumable) game?.resumeWaiting();  // the ghost race waits after a reconnect
});

socket.on("message", (m) => {
  if (mode !== "replay") {
    if (m.type === "ghost" && ghostOpen) ghostView.update(m);
    return;
  }
  switch (m.type) {
    case "replaying":
      if (!replay) requestAnimationFrame(() => replayView.querySelector(".road-section").scrollIntoView({ block: "nearest" }));
      replay = m;
      view.load(m.game, { name: m.player?.name ?? "", phase: m.playing ? "running" : "paused" });
      controls.load({ steps: m.steps, step: m.step, playing: m.playing });
      replayView.hidden = false;
      showSubject();
      show("");
      document.getElementById("back-to-replay").href = replayLink(gameId);
      say(t("replay.sayLoaded", { name: m.player?.name ?? "", score: formatNumber(m.score), steps: formatNumber(m.steps) }));
      break;
    case "replayState": {
      controls.state(m);
      view.setPhase(m.ended ? "over" : m.playing ? "running" : "paused");
      view.quiet = false;
      if (m.ended) say(t("replay.sayEnded", { score: formatNumber(replay?.score ?? view.state.score) }));
      else if (seeking || !m.playing) say(controls.describe());
      else say(t("replay.sayPlaying"));
      seeking = false;
      break;
    }
    case "watchEnded":
      break;
    case "error":
      if (["replay", "replayControl"].includes(m.inReplyTo)) refused(m);
      break;
    default:
      if (view.handle(m) && Number.isInteger(m.step) && m.type !== "snapshot") controls.at(m.step);
      if (m.type === "snapshot") controls.at(m.game?.step);
  }
});

controls.on("control", (request) => {
  if (request.action === "seek") {
    seeking = true;
    view.quiet = true;  // the seek's snapshot is not a crash or a speed-up happening now
  }
  if (!socket.send({ type: "replayControl", ...request })) show("errors.offline", {}, "bad");
});

function refused(error) {
  const known = ["game_not_found", "replay_hidden", "game_in_progress", "step_out_of_range", "not_watching", "not_replayable", "start_pending", "unavailable"];
  show(known.includes(error.code) ? `replay.errors.${error.code}` : "watch.errors.generic", { message: error.message ?? "" }, "bad");
  seeking = false;
  view.quiet = false;
  say(message.textContent);
}

// The ghost race: the player's own game, through the usual controller, on the ghost's road.
let game = null;
let ghostView = null;

function raceGhost() {
  if (!replay) return;
  if (!game) {
    const ghostSocket = new StartSocket(socket, {
      start: () => socket.send({ type: "raceGhost", gameId }),
      pass: (m) => {
        if (mode !== "ghost") return null;
        if (m.type === "started") ghostOpen = true;
        // A refused raceGhost is the controller's refused start: it goes back to "ready".
        if (m.type === "error" && m.inReplyTo === "raceGhost") return { ...m, inReplyTo: "start" };
        return ghostOpen ? m : null;
      },
    });
    game = new GameController(ghostRace, { socket: ghostSocket, store, announcer });
    ghostView = new GhostView(ghostRace, { game, speaker });
    game.on("wantsStart", startGhost);
    game.on("gameOver", ghostOver);
    game.on("problem", (problem) => {
      const ghostMessage = document.getElementById("ghost-message");
      ghostMessage.className = "message bad";
      const known = ["game_not_found", "replay_hidden", "game_in_progress", "not_replayable", "start_pending", "unavailable"];
      ghostMessage.textContent = known.includes(problem.code) ? t(`replay.errors.${problem.code}`) : problem.message ?? t("errors.generic");
      say(ghostMessage.textContent);
    });
    socket.on("started", (m) => {
      if (mode !== "ghost") return;
      ghostView.start(m.game?.ghost);
      // As on the play page: the road and the strip under it in view, on a phone too.
      requestAnimationFrame(() => ghostRace.querySelector(".road-section").scrollIntoView({ block: "nearest" }));
    });
    socket.on("step", () => { if (mode === "ghost") requestAnimationFrame(() => ghostView.render()); });
  }
  if (mode === "replay") {
    mode = "ghost";
    pageSwitch.pause(true);  // the controller's own inputs take the switch now
    socket.send({ type: "stopWatching" });
    view.end();
    replayView.hidden = true;
    ghostRace.hidden = false;
    heading.textContent = t("replay.ghostHeadingName", { name: replay.player?.name ?? "" });
    subject.textContent = t("replay.ghostSubject", { level: t(`levels.${replay.level}`), score: formatNumber(replay.score) });
  }
  startGhost();
}

function startGhost() {
  // The button pressed (Race this ghost, Race again) is about to be hidden: focus waits on the
  // race's heading, where a refusal is shown, until the road takes it when the race starts.
  const over = document.getElementById("game-over");
  if ([document.body, main].includes(document.activeElement) || replayView.contains(document.activeElement) || over.contains(document.activeElement)) {
    document.getElementById("ghost-race-heading").focus();
  }
  over.hidden = true;
  document.getElementById("ghost-message").textContent = "";
  ghostOpen = false;
  game.start(replay.level, true);
}

function ghostOver(result) {
  const ghostScore = replay.score;
  const mine = result.score;
  const verdict = mine > ghostScore ? "replay.overWon" : mine < ghostScore ? "replay.overLost" : "replay.overLevel";
  document.getElementById("over-text").textContent = t(verdict, { mine: formatNumber(mine), ghost: formatNumber(ghostScore), name: replay.player?.name ?? "" });
  document.getElementById("game-over").hidden = false;
  document.getElementById("play-again").focus();
  speaker.clear();
  say(document.getElementById("over-text").textContent);
}

document.getElementById("race-ghost").addEventListener("click", raceGhost);

if (!gameId) {
  document.getElementById("replay-none").hidden = false;
} else if (socket.connected) {
  askReplay();
} else {
  show("watch.connecting");
}

document.addEventListener("i18n", () => {
  if (mode === "replay") showSubject();
  if (shown) show(shown.key, shown.values, shown.tone);
});
pageReady();
