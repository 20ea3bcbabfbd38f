// The play page: choose a level, start (one action from load), play, and see the result.
import "../game/game-view-element.js";
import { startPage, pageReady, newPlayerLimitedText } from "../app/page.js";
import { newPlayerWait } from "../net/identity.js";
import { t, formatTime, formatNumber } from "../app/i18n.js";
import { GameController } from "../game/controller.js";
import { DailyRoadChoice } from "../game/daily-road-choice.js";
import { StartSocket } from "../game/start-socket.js";
import { WatchShare } from "../game/watch-share.js";
import { WatcherNews } from "../game/watcher-news.js";

const context = await startPage();
const { store, socket, announcer } = context;
const main = document.getElementById("main");
// The road choice (random or today's road): a daily start names its road; a random one is sent as before.
const roads = new DailyRoadChoice(document.getElementById("setup"), { level: () => chosenLevel() });
const roadSocket = new StartSocket(socket, {
  start: (level, practice) => (roads.road === "daily"
    ? socket.send({ type: "start", level, road: "daily", practice })
    : socket.start(level, practice)),
});
// "Share a link to watch" sits with Pause and End game; the one switch's pause menu reaches it too.
const shareButton = main.querySelector("[data-part='share-watch']");
const game = new GameController(main, { socket: roadSocket, store, announcer, pauseExtras: () => [shareButton] });
const share = new WatchShare(main, { announcer });

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

const playAgain = document.getElementById("play-again");
const overMessage = document.getElementById("over-message");

function noPlaysLeft() {
  return Boolean(quota && !quota.unlimited && quota.playsLeft <= 0);
}

/** While a limit on new players makes this browser wait, Start stays enabled and says why it
 * cannot start yet, rather than sit disabled without a word. */
function waitingForNewPlayer() {
  return newPlayerWait() > 0;
}

/** Start and Play again only when a game can start: connected, with a play left. */
function updateButtons() {
  startButton.disabled = (!socket.connected && !waitingForNewPlayer()) || noPlaysLeft();
  playAgain.disabled = noPlaysLeft();
}

/** Says why no game can start, next to the button the player is at, with the way to unlock. */
function showRefusal(target, problem) {
  target.className = "message bad";
  target.replaceChildren(messageFor(problem));
  if (problem.code === "no_plays_left") {
    const link = document.createElement("a");
    link.href = "/unlock.html";
    link.textContent = t("play.unlockLink");
    target.append(" ", link);
  }
}

function showQuota(value) {
  quota = value;
  if (!value) return;
  playsLeft.textContent = value.unlimited ? t("play.unlimited") : formatNumber(value.playsLeft);
  playsReset.textContent = value.unlimited ? "" : t("play.resetsAt", { time: formatTime(value.resetsAt) });
  const focusWasOnPlayAgain = document.activeElement === playAgain;
  updateButtons();
  const refusal = { code: "no_plays_left", resetsAt: value.resetsAt };
  if (noPlaysLeft()) {
    showRefusal(startMessage, refusal);
    if (!overPanel.hidden) {
      showRefusal(overMessage, refusal);
      // Play again is now disabled: focus moves beside it, to the way to unlock.
      if (focusWasOnPlayAgain || document.activeElement === document.body) overMessage.querySelector("a")?.focus();
    }
  } else {
    overMessage.textContent = "";
  }
}

function start() {
  if (!socket.connected && waitingForNewPlayer()) {
    startMessage.className = "message bad";
    startMessage.textContent = newPlayerLimitedText(newPlayerWait());
    return;
  }
  startMessage.textContent = "";
  startMessage.className = "message";
  game.start(chosenLevel(), roads.practice);
}

// The first visit offers the tutorial (replayable any time from the navigation).
if (!store.settings.tutorialDone) document.getElementById("first-visit").hidden = false;
showLevel(store.settings.speedLevel);

for (const radio of document.querySelectorAll("input[name='level']")) {
  radio.addEventListener("change", () => {
    store.update({ speedLevel: radio.value });
    roads.refresh();
  });
}
startButton.addEventListener("click", start);
playAgain.addEventListener("click", start);
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

// Hiding the setup moves the road up and switches to the racing layout (Web/css/play.css), after
// focus has already scrolled to the road: scroll again so the road and the strip under it are in view.
function keepRoadInView() {
  requestAnimationFrame(() => document.querySelector(".play-layout .road-section").scrollIntoView({ block: "nearest" }));
}

socket.on("started", () => {
  overPanel.hidden = true;
  setup.hidden = true;
  resumeWaiting.hidden = true;
  keepRoadInView();
});
socket.on("snapshot", () => {
  overPanel.hidden = true;
  setup.hidden = true;
  resumeWaiting.hidden = true;
  startMessage.textContent = "";
  keepRoadInView();
});

game.on("gameOver", (result) => {
  document.getElementById("over-level").textContent = game.state.level ? t(`levels.${game.state.level}`) : "—";
  document.getElementById("over-score").textContent = formatNumber(result.score);
  document.getElementById("over-best").textContent = result.personalBest == null ? "—" : formatNumber(result.personalBest);
  const today = result.standings?.today?.rank;
  document.getElementById("over-rank").textContent = today ? t("play.rankValue", { today, allTime: result.rank }) : "—";
  const note = document.getElementById("over-note");
  note.className = result.newBest ? "message good" : "message";
  note.textContent = result.newBest ? t("play.newBest") : result.saved === false ? t("play.notSaved") : "";
  overPanel.hidden = false;
  setup.hidden = false;
  if (result.quota) showQuota(result.quota);
  showDaily(result.daily);
  // At 0 plays Play again is disabled: focus goes to the way to unlock, beside it.
  if (noPlaysLeft()) overMessage.querySelector("a")?.focus();
  else playAgain.focus();
});

game.on("problem", (problem) => {
  setup.hidden = false;
  showRefusal(startMessage, problem);
  if (!overPanel.hidden) showRefusal(overMessage, problem);
});

/** Known refusals in the player's language; otherwise the server's own words. */
function messageFor(problem) {
  switch (problem.code) {
    case "no_plays_left":
      return t("errors.noPlaysLeft", { time: formatTime(problem.resetsAt ?? problem.quota?.resetsAt) });
    case "game_in_progress":
      return t("errors.gameInProgress");
    case "daily_played":
      return t("daily.played", { time: formatTime(problem.resetsAt) });
    case "detached":
    case "offline":
      return problem.message;
    case "game_taken":  // a newer resume of this game, from another tab or device, took it
      return t("errors.detached");
    default:
      return problem.message ?? t("errors.generic");
  }
}

/** After a scored run on today's road: its day, the best there and the rank (gameOver.daily). */
function showDaily(daily) {
  const line = document.getElementById("over-daily");
  line.hidden = !daily;
  if (daily) {
    line.textContent = t("daily.result", { day: daily.day, best: formatNumber(daily.best), rank: daily.rank ? formatNumber(daily.rank) : "—" });
  }
  roads.refresh();  // the scored run of today may now be used
}

// How many watch this game (sent when it changes): shown beside the keys; said only when it
// goes from nobody to someone and back, seldom (Web/js/game/watcher-news.js).
const watcherCount = document.getElementById("watcher-count");
const watcherNews = new WatcherNews(announcer, () => store.settings.announcements);
socket.on("watchers", (message) => {
  if (game.state.gameId && message.gameId && message.gameId !== game.state.gameId) return;
  watcherCount.hidden = !(message.count > 0);
  watcherCount.textContent = t("watch.watchingYou", { count: formatNumber(message.count) });
  watcherNews.update(message.count);
});
// The link to watch is offered from the game's first picture to its end.
roadSocket.on("message", (message) => {
  if (message.type === "started" || message.type === "snapshot") {
    if (message.type === "started") watcherNews.reset();
    share.show(message.game?.gameId);
  } else if (message.type === "gameOver") {
    watcherCount.hidden = true;
    watcherNews.reset();
    share.hide();
  }
});

socket.on("connection", ({ state }) => {
  updateButtons();
  if (state === "open") startMessage.textContent = startMessage.textContent === t("play.connecting") ? "" : startMessage.textContent;
});
updateButtons();
pageReady();
