// The play page: choose a level, start (one action from load), play, and see the result.
import { startPage, pageReady } from "../app/page.js";
import { t, formatTime, formatNumber } from "../app/i18n.js";
import { GameController } from "../game/controller.js";

const context = await startPage();
const { store, socket, announcer } = context;
const main = document.getElementById("main");
const game = new GameController(main, { socket, store, announcer });

const setup = document.getElementById("setup");
const startButton = document.getElementById("start");
const resumeWaiting = document.getElementById("resume-waiting");
const startMessage = document.getElementById("start-message");
const overPanel = document.getElementById("game-over");
const playsLeft = document.getElementById("plays-left");
const playsReset = document.getElementById("plays-reset");
let quota = null;

function chosenLevel() {
  return document.querySelector("input[name='level']:checked")?.value ?? store.settings.speedLevel;
}

function showLevel(level) {
  const radio = document.querySelector(`input[name='level'][value='${level}']`);
  if (radio) radio.checked = true;
}

function showQuota(value) {
  quota = value;
  if (!value) return;
  playsLeft.textContent = value.unlimited ? t("play.unlimited") : formatNumber(value.playsLeft);
  playsReset.textContent = value.unlimited ? "" : t("play.resetsAt", { time: formatTime(value.resetsAt) });
}

function start() {
  startMessage.textContent = "";
  startMessage.className = "message";
  game.start(chosenLevel());
}

// The first visit offers the tutorial (replayable any time from the navigation).
if (!store.settings.tutorialDone) document.getElementById("first-visit").hidden = false;
showLevel(store.settings.speedLevel);

for (const radio of document.querySelectorAll("input[name='level']")) {
  radio.addEventListener("change", () => store.update({ speedLevel: radio.value }));
}
startButton.addEventListener("click", start);
document.getElementById("play-again").addEventListener("click", start);
resumeWaiting.addEventListener("click", () => game.resumeWaiting());
game.on("wantsStart", start);

store.on("change", ({ settings, source }) => {
  if (source !== "local") showLevel(settings.speedLevel);
  document.getElementById("first-visit").hidden = settings.tutorialDone;
});
document.addEventListener("i18n", () => showQuota(quota));

game.on("quota", showQuota);
game.on("welcome", (welcome) => {
  resumeWaiting.hidden = !welcome.resumable;
  if (welcome.resumable) {
    startMessage.textContent = t("play.waitingGame", { score: welcome.resumable.score, level: t(`levels.${welcome.resumable.level}`) });
  }
});

socket.on("started", () => {
  overPanel.hidden = true;
  setup.hidden = true;
  resumeWaiting.hidden = true;
});
socket.on("snapshot", () => {
  overPanel.hidden = true;
  setup.hidden = true;
  resumeWaiting.hidden = true;
  startMessage.textContent = "";
});

game.on("gameOver", (result) => {
  document.getElementById("over-score").textContent = formatNumber(result.score);
  document.getElementById("over-best").textContent = result.personalBest == null ? "—" : formatNumber(result.personalBest);
  const today = result.standings?.today?.rank;
  document.getElementById("over-rank").textContent = today ? t("play.rankValue", { today, allTime: result.rank }) : "—";
  const note = document.getElementById("over-note");
  note.className = result.newBest ? "message good" : "message";
  note.textContent = result.newBest ? t("play.newBest") : result.saved === false ? t("play.notSaved") : "";
  overPanel.hidden = false;
  setup.hidden = false;
  document.getElementById("play-again").focus();
});

game.on("problem", (problem) => {
  setup.hidden = false;
  startMessage.className = "message bad";
  startMessage.replaceChildren(messageFor(problem));
  if (problem.code === "no_plays_left") {
    const link = document.createElement("a");
    link.href = "/unlock.html";
    link.textContent = t("play.unlockLink");
    startMessage.append(" ", link);
  }
});

/** Known refusals in the player's language; otherwise the server's own words. */
function messageFor(problem) {
  switch (problem.code) {
    case "no_plays_left":
      return t("errors.noPlaysLeft", { time: formatTime(problem.resetsAt ?? problem.quota?.resetsAt) });
    case "game_in_progress":
      return t("errors.gameInProgress");
    case "detached":
    case "offline":
      return problem.message;
    default:
      return problem.message ?? t("errors.generic");
  }
}

socket.on("connection", ({ state }) => {
  startButton.disabled = state !== "open";
  if (state === "open") startMessage.textContent = startMessage.textContent === t("play.connecting") ? "" : startMessage.textContent;
});
startButton.disabled = !socket.connected;
pageReady();
