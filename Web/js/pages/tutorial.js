// The tutorial, lesson by lesson (js/tutorial/lessons.js): the game; the controls this player
// has switched on, from their settings; the safe-lane cue modes, the lane-change cues and the
// other sounds, each played on request and described in words; a practice road on the server
// where a crash does not end the run (a new practice game starts); and "done", which stops
// the play page offering the tutorial. Replayable at any time from the navigation.
import { startPage, pageReady } from "../app/page.js";
import { t } from "../app/i18n.js";
import { GameController } from "../game/controller.js";
import { inGame } from "../game/state.js";
import { movementInputs, raceKeys, renderLines } from "../game/controls-help.js";
import { Lessons } from "../tutorial/lessons.js";
import { wireDemos } from "../tutorial/demos.js";
import { SoundBoard } from "../audio/sounds.js";

const RESTART_MS = 1500;

const { store, socket, announcer } = await startPage();
const practiceSection = document.getElementById("lesson-practice");
const game = new GameController(practiceSection, { socket, store, announcer });
const crashesOutput = document.getElementById("practice-crashes");
const message = document.getElementById("practice-message");
const startButton = document.getElementById("practice-start");
const stopButton = document.getElementById("practice-stop");
let crashes = 0;
let running = false;
let doneHere = false;

// ---- Lessons ----
const lessons = new Lessons({
  sections: [...document.querySelectorAll("section.lesson")],
  list: document.getElementById("lesson-list"),
  progress: document.getElementById("lesson-progress"),
  back: document.getElementById("lesson-back"),
  next: document.getElementById("lesson-next"),
  announcer,
});
// A practice road runs only while its lesson is open: leaving it stops the road.
lessons.on("change", ({ from }) => {
  if (from === "lesson-practice" && running) stopPractice();
});

// ---- Your controls, and which sound settings are this player's ----
function showSettings() {
  const settings = store.settings;
  const inputs = movementInputs(settings);
  renderLines(document.getElementById("tutorial-inputs"), inputs.map(({ text }) => text), inputs.map(({ input }) => input));
  document.getElementById("tutorial-no-inputs").hidden = inputs.length > 0;
  renderLines(document.getElementById("tutorial-keys"), raceKeys(settings, game.inputs.keyboard.helpKey));
  for (const demo of document.querySelectorAll(".demo[data-setting]")) {
    demo.querySelector(".your-setting").hidden = settings[demo.dataset.setting] !== demo.dataset.value;
  }
  // "Done before" is for a replay; right after pressing "done" here, the saved message says it.
  document.getElementById("tutorial-done-before").hidden = !settings.tutorialDone || doneHere;
}
showSettings();
store.on("change", showSettings);
document.addEventListener("i18n", showSettings);

// ---- The sounds: the game's own SoundBoard on the game's audio engine (same notes, pans,
// volumes and mono), a board of their own so the examples do not caption the practice road.
wireDemos(document.getElementById("main"), new SoundBoard(game.audio), () => {
  // A press is a user gesture: the audio may start now. Outside a race nothing holds it
  // (a practice road paused and then left would otherwise keep the examples silent).
  if (!inGame(game.state)) game.audio.release();
  game.audio.unlock();
});

// ---- Practice ----
function startPractice() {
  running = true;
  startButton.hidden = true;
  stopButton.hidden = false;
  game.start("cruise", true);
}

function finishPractice(score) {
  running = false;
  startButton.hidden = false;
  stopButton.hidden = true;
  message.textContent = t("tutorial.practiceEnded", { score });
  if (lessons.current.id === "lesson-practice") startButton.focus();
}

function stopPractice() {
  running = false;
  // Between two practice roads there is no game to end: stop at once.
  if (inGame(game.state)) game.quit();
  else finishPractice(game.state.score);
}

startButton.addEventListener("click", () => {
  crashes = 0;
  crashesOutput.textContent = "0";
  message.textContent = "";
  startPractice();
});
stopButton.addEventListener("click", stopPractice);
game.on("wantsStart", () => { if (!running && lessons.current.id === "lesson-practice") startButton.click(); });

game.on("gameOver", (result) => {
  if (running && result.reason === "crash") {
    // Practice: the run goes on after a crash.
    crashes += 1;
    crashesOutput.textContent = String(crashes);
    message.textContent = t("tutorial.crashContinue");
    setTimeout(() => { if (running) game.start("cruise", true); }, RESTART_MS);
    return;
  }
  finishPractice(result.score);
});
game.on("problem", (problem) => {
  message.textContent = problem.message ?? t("errors.generic");
});

// ---- Done ----
document.getElementById("tutorial-done").addEventListener("click", async () => {
  const result = document.getElementById("tutorial-done-message");
  doneHere = true;
  await store.update({ tutorialDone: true });
  // A refused or failed save leaves the stored document (tutorialDone still false) in place.
  const saved = store.settings.tutorialDone === true;
  result.className = saved ? "message good" : "message bad";
  result.textContent = saved ? t("tutorial.doneSaved") : t("errors.generic");
});

lessons.open();
pageReady();
