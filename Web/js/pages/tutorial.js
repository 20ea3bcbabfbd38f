// The tutorial: the game, this player's controls, each audio cue played and explained, and a
// practice road on the server where a crash does not end the run (a new practice game starts).
import { startPage, pageReady } from "../app/page.js";
import { t } from "../app/i18n.js";
import { GameController } from "../game/controller.js";
import { inGame } from "../game/state.js";
import { renderControls } from "../game/controls-help.js";
import { captionFor } from "../game/effects-view.js";

const EXAMPLE_SAFE_LANES = [0, 2];  // middle blocked: left and right are safe
const RESTART_MS = 1500;

const { store, socket, announcer } = await startPage();
const practiceSection = document.getElementById("t-practice").closest("section");
const game = new GameController(practiceSection, { socket, store, announcer });
const caption = document.getElementById("demo-caption");
const crashesOutput = document.getElementById("practice-crashes");
const message = document.getElementById("practice-message");
const startButton = document.getElementById("practice-start");
const stopButton = document.getElementById("practice-stop");
let crashes = 0;
let running = false;

const showControls = () => renderControls(document.getElementById("tutorial-controls"), store.settings, game.inputs.keyboard.helpKey);
showControls();
store.on("change", showControls);
document.addEventListener("i18n", showControls);

// The demos play through the same SoundBoard as the game; the caption shows each sound.
game.sounds.on("sound", (sound) => { caption.textContent = captionFor(sound); });
for (const button of document.querySelectorAll("[data-demo]")) {
  button.addEventListener("click", () => {
    game.audio.unlock();
    const { demo } = button.dataset;
    if (demo === "cue") game.sounds.cue(button.dataset.mode, EXAMPLE_SAFE_LANES, 800);
    if (demo === "lane") game.sounds.laneChange("confirmation", Number(button.dataset.lane), true);
    if (demo === "success") game.sounds.laneChange("success", 1, button.dataset.safe === "true");
    if (demo === "effect") {
      if (button.dataset.effect === "bump") game.sounds.bump("left");
      if (button.dataset.effect === "speedUp") game.sounds.speedUp();
      if (button.dataset.effect === "crash") game.sounds.crash(1);
    }
  });
}

function startPractice() {
  running = true;
  startButton.hidden = true;
  stopButton.hidden = false;
  game.start("cruise", true);
}

startButton.addEventListener("click", () => {
  crashes = 0;
  crashesOutput.textContent = "0";
  message.textContent = "";
  startPractice();
});
function finishPractice(score) {
  running = false;
  startButton.hidden = false;
  stopButton.hidden = true;
  message.textContent = t("tutorial.practiceEnded", { score });
  startButton.focus();
}

stopButton.addEventListener("click", () => {
  running = false;
  // Between two practice roads there is no game to end: stop at once.
  if (inGame(game.state)) game.quit();
  else finishPractice(game.state.score);
});
game.on("wantsStart", () => { if (!running) startButton.click(); });

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

document.getElementById("tutorial-done").addEventListener("click", async () => {
  await store.update({ tutorialDone: true });
  document.getElementById("tutorial-done-message").textContent = t("tutorial.doneSaved");
});
pageReady();
