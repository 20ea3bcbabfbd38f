// The guided drill: one cue pattern at a time, played through the game's SoundBoard in the
// player's own cue mode and drawn on a small road; it says what the pattern means ("you hear
// C only: only the left lane is safe: move left now"), waits for a move by any input the
// player has switched on (Web/js/input/hub.js: keys, tap, swipe, wheel, gamepad, the one
// switch as a dodge) or the on-screen buttons, says why a wrong move was wrong and waits
// again, then goes on to the next pattern and ends with a summary. Nothing is timed unless
// the player chooses a time to answer. Every sentence goes through the announcer once.
//
// Events: "finished" {right, total}.
import { Emitter } from "../app/emitter.js";
import { t } from "../app/i18n.js";
import { InputHub } from "../input/hub.js";
import { dodgeTarget } from "../input/dodge.js";
import { LANE_LETTERS } from "../audio/notes.js";
import { laneName } from "../game/describe.js";
import { notesHeard, meaning } from "./patterns.js";

/** The drill's questions: a start lane and the cue's safe lanes; each of the seven patterns at least once. */
export const DRILL_ITEMS = [
  { start: 1, safe: [0] },
  { start: 1, safe: [2] },
  { start: 0, safe: [1] },
  { start: 1, safe: [0, 2] },
  { start: 0, safe: [1, 2] },
  { start: 2, safe: [0, 1] },
  { start: 1, safe: [1, 2] },
  { start: 1, safe: [0, 1, 2] },
];
const NEXT_MS = 1800;   // after a right answer: time to hear "right" before the next pattern plays
const CUE_INTERVAL_MS = 800;  // the cue played as at Cruise, its notes at their most spread out

/** The answers that are right for `item`: "stay", or the direction(s) of a safe neighbour. */
export function rightAnswers({ start, safe }) {
  if (safe.includes(start)) return ["stay"];
  return [["left", start - 1], ["right", start + 1]].filter(([, lane]) => safe.includes(lane)).map(([answer]) => answer);
}

export class Drill extends Emitter {
  items = DRILL_ITEMS;
  index = -1;
  waiting = false;
  results = [];   // per item: the wrong answers given before the right one
  #timer = null;
  #nextTimer = null;

  /**
   * `root`: the drill's section; `surface`: the road the hub listens to (taps, swipes, wheel);
   * `picture`: a PatternPicture; `sounds`: a SoundBoard; `prepare()`: wakes the audio (run on
   * each press that plays something).
   */
  constructor({ root, surface, picture, sounds, store, announcer, prepare }) {
    super();
    this.root = root;
    this.surface = surface;
    this.picture = picture;
    this.sounds = sounds;
    this.store = store;
    this.announcer = announcer;
    this.prepare = prepare;
    this.prompt = root.querySelector("[data-drill='prompt']");
    this.feedback = root.querySelector("[data-drill='feedback']");
    this.progress = root.querySelector("[data-drill='progress']");
    this.summary = root.querySelector("[data-drill='summary']");
    this.guided = root.querySelector("[data-drill='guided']");
    this.timing = root.querySelector("[data-drill='timing']");
    this.answers = root.querySelector("[data-drill='answers']");

    // Keys act while the drill waits and focus is in it (so the page's other keys stay the page's).
    this.hub = new InputHub(surface, { active: () => this.waiting && root.contains(document.activeElement) });
    this.hub.configure(store.settings.controls);
    store.on("change", ({ settings }) => this.hub.configure(settings.controls));
    this.hub.on("move", ({ direction }) => this.answer(direction));
    this.hub.on("confirm", () => this.answer("stay"));
    this.hub.on("switch", () => this.#dodge());
    this.hub.on("repeatCue", () => this.replay());
    this.hub.on("status", () => { if (this.waiting) this.announcer.sayNow(this.prompt.textContent); });

    for (const button of root.querySelectorAll("[data-answer]")) {
      button.addEventListener("click", () => this.answer(button.dataset.answer));
    }
    root.querySelector("[data-drill='start']").addEventListener("click", () => this.start());
    root.querySelector("[data-drill='replay']").addEventListener("click", () => this.replay());
    root.querySelector("[data-drill='again']").addEventListener("click", () => this.start());
    document.addEventListener("i18n", () => this.#redraw());
    this.#showIdle();
  }

  get item() {
    return this.items[this.index];
  }

  /** The cue mode the drill plays: the player's own, or lane pulse when theirs is off. */
  get mode() {
    const mode = this.store.settings.audioCueMode;
    return mode === "off" ? "lanePulse" : mode;
  }

  start() {
    this.prepare();
    this.stop();
    this.index = 0;
    this.results = this.items.map(() => []);
    this.summary.hidden = true;
    this.answers.hidden = false;
    this.root.dataset.state = "running";
    this.surface.focus();
    this.#present();
  }

  /** Leaves the drill (the lesson was left): nothing waits, nothing plays later. */
  stop() {
    clearTimeout(this.#timer);
    clearTimeout(this.#nextTimer);
    this.waiting = false;
    if (this.root.dataset.state === "running") this.#showIdle();
  }

  replay() {
    if (!this.waiting) return;
    this.prepare();
    this.#playCue();
  }

  /** One answer: "left", "right" or "stay". */
  answer(answer) {
    if (!this.waiting) return;
    const item = this.item;
    const target = answer === "stay" ? item.start : item.start + (answer === "left" ? -1 : 1);
    if (rightAnswers(item).includes(answer)) {
      this.#right(target, answer);
      return;
    }
    this.results[this.index].push(answer);
    let why;
    if (target < 0 || target > 2) why = t("tutorial.drill.whyEdge", { side: laneName(item.start) });
    else if (answer === "stay") why = t("tutorial.drill.whyStay", { lane: laneName(target), note: LANE_LETTERS[target] });
    else why = t("tutorial.drill.whyMove", { lane: laneName(target), note: LANE_LETTERS[target] });
    this.#say(`${why} ${t("tutorial.drill.tryAgain", { action: this.#action(item) })}`, "bad");
    // Shown now: the cars in the blocked lanes, so the reason is also seen.
    this.picture.show(item.safe, item.start, { reveal: true });
  }

  #dodge() {
    if (!this.waiting) return;
    const target = dodgeTarget(this.item.start, this.item.safe);
    this.answer(target === this.item.start ? "stay" : target < this.item.start ? "left" : "right");
  }

  #right(target, answer) {
    this.waiting = false;
    clearTimeout(this.#timer);
    this.picture.show(this.item.safe, target, { reveal: true });
    if (answer !== "stay") this.sounds.laneChange(this.store.settings.laneChangeCue, target, true);
    const last = this.index === this.items.length - 1;
    const words = answer === "stay" ? t("tutorial.drill.rightStay", { lane: laneName(target) })
      : t("tutorial.drill.rightMove", { lane: laneName(target) });
    this.#say(last ? words : `${words} ${t("tutorial.drill.nextComing")}`, "good");
    this.#nextTimer = setTimeout(() => {
      if (last) this.#finish();
      else {
        this.index += 1;
        this.#present();
      }
    }, NEXT_MS);
  }

  #present() {
    const item = this.item;
    this.feedback.textContent = "";
    this.feedback.className = "message";
    this.#redraw();
    this.announcer.say(this.prompt.textContent);
    this.waiting = true;
    this.#playCue();
  }

  #playCue() {
    this.sounds.cue(this.mode, this.item.safe, CUE_INTERVAL_MS);
    clearTimeout(this.#timer);
    const limit = Number(this.timing.value);
    // Timed only on request; the clock restarts with each playing of the cue.
    if (limit > 0) this.#timer = setTimeout(() => this.#late(), limit);
  }

  #late() {
    if (!this.waiting) return;
    this.results[this.index].push("late");
    this.#say(`${t("tutorial.drill.whyLate")} ${t("tutorial.drill.tryAgain", { action: this.#action(this.item) })}`, "bad");
    this.picture.show(this.item.safe, this.item.start, { reveal: true });
  }

  /** "move left now", "move left or right now", "stay in the middle lane". */
  #action(item) {
    const answers = rightAnswers(item);
    if (answers[0] === "stay") return t("tutorial.drill.actionStay", { lane: laneName(item.start) });
    if (answers.length === 2) return t("tutorial.drill.actionEither");
    return t(answers[0] === "left" ? "tutorial.drill.actionLeft" : "tutorial.drill.actionRight");
  }

  #promptText(item) {
    const heard = t("tutorial.drill.heard", { notes: notesHeard(item.safe) });
    const lane = t("tutorial.drill.youAre", { lane: laneName(item.start) });
    if (!this.guided.checked) return `${heard} ${lane} ${t("tutorial.drill.which")}`;
    return `${heard} ${t("tutorial.drill.means", { meaning: meaning(item.safe) })} ${lane} ${this.#action(item)}.`;
  }

  #say(text, kind) {
    this.feedback.textContent = text;
    this.feedback.className = `message ${kind}`;
    this.announcer.sayNow(text);
  }

  #finish() {
    this.waiting = false;
    this.root.dataset.state = "finished";
    const right = this.results.filter((wrong) => wrong.length === 0).length;
    this.answers.hidden = true;
    this.summary.hidden = false;
    this.#renderSummary();
    this.summary.querySelector("h3").focus();
    this.announcer.sayNow(this.summary.querySelector("[data-drill='score']").textContent);
    this.emit("finished", { right, total: this.items.length });
  }

  #renderSummary() {
    const right = this.results.filter((wrong) => wrong.length === 0).length;
    this.summary.querySelector("[data-drill='score']").textContent = t("tutorial.drill.score", { right, total: this.items.length });
    const rows = this.items.map((item, index) => {
      const li = document.createElement("li");
      const wrong = this.results[index].length;
      li.dataset.wrong = String(wrong);
      li.textContent = t(wrong === 0 ? "tutorial.drill.itemRight" : "tutorial.drill.itemWrong", {
        notes: notesHeard(item.safe), lane: laneName(item.start), count: wrong,
      });
      return li;
    });
    this.summary.querySelector("[data-drill='list']").replaceChildren(...rows);
  }

  #showIdle() {
    this.root.dataset.state = "idle";
    this.answers.hidden = true;
    this.prompt.textContent = t("tutorial.drill.idle");
    this.progress.textContent = "";
    this.feedback.textContent = "";
    this.picture.show([0, 1, 2], 1, { reveal: false });
  }

  /** The current question's words and picture, in the page's language. */
  #redraw() {
    const state = this.root.dataset.state;
    if (state === "idle") {
      this.#showIdle();
      return;
    }
    if (state === "finished") {
      this.#renderSummary();
      return;
    }
    const item = this.item;
    this.progress.textContent = t("tutorial.drill.progress", { number: this.index + 1, total: this.items.length });
    this.prompt.textContent = this.#promptText(item);
    if (this.waiting || this.feedback.textContent === "") this.picture.show(item.safe, item.start, { reveal: this.guided.checked });
  }
}
