// The tutorial, lesson by lesson (js/tutorial/lessons.js): the game; a labelled picture of the
// road; the controls this player has switched on, from their settings; the safe-lane cue
// modes and every cue pattern in each of them, heard, drawn and described (js/tutorial/
// explorer.js); a guided drill that waits for the right move (js/tutorial/drill.js); which
// cue mode suits fast levels, with a switch to it (js/tutorial/fast-cues.js); the lane-change
// cues and the other sounds; a practice road on the server at the level the player picks,
// where a crash does not end the run (a new practice game starts); and "done", which stops
// the play page offering the tutorial. Replayable at any time from the navigation.
import "../game/game-view-element.js";
import { startPage, pageReady } from "../app/page.js";
import { t } from "../app/i18n.js";
import { GameController } from "../game/controller.js";
import { inGame } from "../game/state.js";
import { movementInputs, raceKeys, renderLines } from "../game/controls-help.js";
import { Lessons } from "../tutorial/lessons.js";
import { wireDemos } from "../tutorial/demos.js";
import { SoundBoard } from "../audio/sounds.js";
import { captionFor } from "../game/effects-view.js";
import { RoadView } from "../game/road-view.js";
import { EffectsView } from "../game/effects-view.js";
import { Explorer } from "../tutorial/explorer.js";
import { Drill } from "../tutorial/drill.js";
import { FastCues } from "../tutorial/fast-cues.js";
import { PatternPicture } from "../tutorial/pattern-picture.js";

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
let practiceLevel = "cruise";

// The example road of "The road at a glance": cars in three rows, the middle blocked in the
// row about to reach the player's car (so left and right are safe).
const PICTURE_STATE = {
  grid: [[0, 1, 0], [0, 0, 0], [1, 0, 0], [0, 0, 1], [0, 0, 0], [0, 1, 0], [0, 0, 0]],
  lane: 1, safeLanes: [0, 2], crash: null, step: 0,
};
const roadPicture = document.getElementById("lesson-road");
const pictureRoad = new RoadView(roadPicture.querySelector("[data-part='road']"));
const pictureStrip = new EffectsView(roadPicture);
function drawRoadPicture() {
  pictureRoad.render(PICTURE_STATE);
  pictureStrip.renderSafeLanes(PICTURE_STATE.safeLanes, true);
}
drawRoadPicture();
document.addEventListener("i18n", drawRoadPicture);

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
  if (from === "lesson-drill") drill.stop();
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
function wakeAudio() {
  // A press is a user gesture: the audio may start now. Outside a race nothing holds it
  // (a practice road paused and then left would otherwise keep the examples silent).
  if (!inGame(game.state)) game.audio.release();
  game.audio.unlock();
}
const demoSounds = new SoundBoard(game.audio);
wireDemos(document.getElementById("main"), demoSounds, wakeAudio);
new Explorer(document.querySelector("#lesson-cues .explorer"), { sounds: demoSounds, store, prepare: wakeAudio });

// ---- The drill: a board of its own, captioned under the drill's road ----
const drillSection = document.getElementById("lesson-drill");
const drillSounds = new SoundBoard(game.audio);
const drillCaption = drillSection.querySelector("[data-drill='caption']");
drillSounds.on("sound", (sound) => { drillCaption.textContent = captionFor(sound); });
const drill = new Drill({
  root: drillSection,
  surface: drillSection.querySelector("[data-drill='surface']"),
  picture: new PatternPicture(drillSection.querySelector(".pattern-picture")),
  sounds: drillSounds, store, announcer, prepare: wakeAudio,
});

new FastCues(document.getElementById("lesson-fast-cues"), { store, announcer });

// ---- Practice ----
const levelChoice = document.getElementById("practice-levels");
function chosenLevel() {
  return levelChoice.querySelector("input[name='practice-level']:checked")?.value ?? "cruise";
}

function startPractice() {
  running = true;
  practiceLevel = chosenLevel();
  // The level is fixed for the run (its restarts after a crash too); stopping frees it again.
  levelChoice.disabled = true;
  startButton.hidden = true;
  stopButton.hidden = false;
  game.start(practiceLevel, true);
}

function finishPractice(score) {
  running = false;
  levelChoice.disabled = false;
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
    setTimeout(() => { if (running) game.start(practiceLevel, true); }, RESTART_MS);
    return;
  }
  finishPractice(result.score);
});
// The crash notice belongs to the run that crashed: the next run starts with it gone.
socket.on("message", (m) => {
  if (m.type === "started" && running && message.textContent === t("tutorial.crashContinue")) message.textContent = "";
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
