// One game on screen: server messages in (through the socket), state reduced, then turned
// into sight (road, HUD, effects), sound, vibration and speech as the player's settings say;
// player inputs out as start/move/pause/resume/quit. The server decides every outcome: a move
// is sent, and the car moves only when the server says "moved".
import { t, formatNumber } from "../app/i18n.js";
import { Emitter } from "../app/emitter.js";
import { initialState, reduce, playing, inGame } from "./state.js";
import { RoadView } from "./road-view.js";
import { HudView } from "./hud-view.js";
import { EffectsView } from "./effects-view.js";
import { laneName, statusText, reachesScoreMark } from "./describe.js";
import { renderControls, keyName } from "./controls-help.js";
import { InputHub } from "../input/hub.js";
import { dodgeMoves } from "../input/dodge.js";
import { usable, menuIntervalMs } from "../input/menu-scan.js";
import { AudioEngine } from "../audio/engine.js";
import { SoundBoard } from "../audio/sounds.js";
import { Haptics } from "../feedback/haptics.js";

// Holding the one switch, a player cannot answer a cue: the hold guard pauses this long before
// the next step is due (the pause must reach the server first; a dodge sent with it has the
// server's latency grace as well).
const HOLD_GUARD_MARGIN_MS = 100;
// The first choice (Resume, Play again) stays highlighted longer: time to hear what the scan
// is for, let go of the switch after a hold, and press at once for the likeliest choice.
const FIRST_CHOICE_MS = 2500;

export class GameController extends Emitter {
  state = initialState();
  #frame = 0;
  #holdGuard = null;
  #stepArrivedAt = 0;

  /** `pauseExtras()`: the page's own buttons that the one switch's pause menu steps through
   * after Resume and End game (the play page's "Share a link to watch"). */
  constructor(root, { socket, store, announcer, pauseExtras = () => [] }) {
    super();
    this.pauseExtras = pauseExtras;
    this.root = root;
    this.socket = socket;
    this.store = store;
    this.announcer = announcer;
    this.playArea = root.querySelector("[data-part='play-area']");
    this.road = new RoadView(root.querySelector("[data-part='road']"));
    this.hud = new HudView(root);
    this.effects = new EffectsView(root);
    this.helpPanel = root.querySelector("[data-part='controls-help']");
    this.helpButton = root.querySelector("[data-part='help']");
    this.audio = new AudioEngine();
    this.sounds = new SoundBoard(this.audio);
    this.haptics = new Haptics();
    this.inputs = new InputHub(this.playArea, { active: () => inGame(this.state), racing: () => playing(this.state) });

    this.sounds.on("sound", (sound) => this.effects.showSound(sound));
    this.#wireInputs();
    this.#wireSocket();
    this.#wireButtons();
    store.on("change", ({ settings }) => this.#configure(settings));
    document.addEventListener("i18n", () => {
      this.#describeKeys();
      this.#render(true);
    });
    document.addEventListener("visibilitychange", () => {
      // Auto-pause when the page is hidden: nobody is watching the road.
      if (document.hidden && playing(this.state)) {
        this.autoPaused = true;
        this.socket.pause();
      }
    });
    this.#configure(store.settings);
    this.#render(true);
  }

  get settings() {
    return this.store.settings;
  }

  start(level, practice = false) {
    this.audio.unlock();
    if (!this.socket.start(level, practice)) {
      this.emit("problem", { code: "offline", message: t("errors.offline") });
      return;
    }
    this.state = { ...this.state, phase: "starting" };
    this.#render();
  }

  togglePause() {
    if (this.state.phase === "running") this.socket.pause();
    else if (this.state.phase === "paused") this.socket.resume();
  }

  quit() {
    if (inGame(this.state)) this.socket.quit();
  }

  resumeWaiting() {
    this.audio.unlock();
    this.socket.resume();
  }

  focusRoad() {
    this.playArea.focus({ preventScroll: false });
  }

  #configure(settings) {
    this.audio.configure(settings);
    this.haptics.settings = settings.haptics;
    this.haptics.rumble = settings.controls.gamepad;
    this.inputs.configure(settings.controls);
    this.#describeKeys(settings);
    if (this.inputs.scanning && playing(this.state) && !this.inputs.scanner.running) this.inputs.scanner.start();
    if (settings.controls.oneSwitch && this.state.phase === "paused" && !this.inputs.menu.running) this.#scanPauseMenu(false);
    this.effects.showScan(this.inputs.scanner.highlighted, this.inputs.scanning && playing(this.state));
  }

  /** The short key hint under the road and the full list behind the Controls button. */
  #describeKeys(settings = this.settings) {
    const keys = settings.controls.keyBindings;
    this.root.querySelector("[data-part='keys-short']").textContent = t("play.keysShort", {
      left: keyName(keys.left), right: keyName(keys.right), pause: keyName(keys.pause),
      status: keyName(keys.announceScore), help: keyName(this.inputs.keyboard.helpKey),
    });
    renderControls(this.root.querySelector("[data-part='controls-list']"), settings, this.inputs.keyboard.helpKey);
  }

  #wireInputs() {
    this.inputs.on("move", ({ direction }) => {
      if (playing(this.state)) this.socket.move(direction, this.state.step);
    });
    this.inputs.on("switch", () => {
      if (playing(this.state)) { if (this.inputs.switchMode === "dodge") this.dodge(); }
      else if (this.state.phase === "paused") this.socket.resume();
      else if (!inGame(this.state) && this.state.phase !== "starting") this.emit("wantsStart");
    });
    // Held in a race, the one switch pauses (its press has already dodged: docs/GAME_RULES.md).
    this.inputs.on("switchHold", () => {
      clearTimeout(this.#holdGuard);
      if (playing(this.state)) this.socket.pause();
    });
    this.inputs.on("holdStarted", () => this.#armHoldGuard());
    this.inputs.on("pause", () => this.togglePause());
    this.inputs.on("confirm", () => {
      if (this.state.phase === "paused") this.socket.resume();
      else if (!inGame(this.state) && this.state.phase !== "starting") this.emit("wantsStart");
    });
    this.inputs.on("repeatCue", () => {
      if (playing(this.state)) this.sounds.cue(this.settings.audioCueMode === "off" ? "lanePulse" : this.settings.audioCueMode, this.state.safeLanes, this.state.interval);
    });
    this.inputs.on("status", () => this.announcer.sayNow(statusText(this.state)));
    this.inputs.on("help", () => this.toggleHelp());
    this.inputs.on("scan", ({ option }) => {
      this.effects.showScan(option, true);
      this.sounds.scanTick(option);
    });
    // Each choice of the menu scan once, as it is highlighted; the first is said with the
    // words that start the scan (the pause, the result), so neither cuts the other off.
    this.inputs.menu.on("highlight", ({ element, first }) => {
      if (!first && this.settings.announcements) this.announcer.sayNow(choiceName(element));
    });
  }

  /** The one switch outside a race: a scan over `choices` (buttons). Returns what to say:
   * `words`, then how the switch works now (`how`, a function of the choices' names) and the
   * first choice. */
  #scanMenu(choices, words, how) {
    const menu = this.inputs.menu;
    menu.intervalMs = menuIntervalMs(this.settings);
    menu.start(choices, { first: document.activeElement, firstMs: Math.max(FIRST_CHOICE_MS, 2 * menu.intervalMs) });
    if (!menu.running) return words;
    const names = choices().filter(usable).map(choiceName);
    return [words, how(listOf(names)), t("say.switchNow", { choice: choiceName(menu.highlighted) })].filter(Boolean).join(" ");
  }

  /** Paused with one switch: Resume and End game, Resume first (the HUD's buttons, drawn now
   * so they already say "Resume"), then the page's extras. */
  #scanPauseMenu(announce, words = "") {
    this.#render(true);
    const text = this.#scanMenu(() => [this.hud.pause, this.hud.quit, ...this.pauseExtras()], words,
      (choices) => t("say.switchResume", { resume: choiceName(this.hud.pause), choices }));
    if (announce && this.settings.announcements) this.announcer.say(text);
  }

  /** The race goes on (or a new one starts): the menu scan ends, and focus goes back to the
   * road if the scan had moved it to a button. */
  #endMenuScan() {
    const menu = this.inputs.menu;
    const wasOnChoice = menu.running && document.activeElement === menu.highlighted;
    menu.stop();
    if (wasOnChoice) this.focusRoad();
  }

  /** While a press of the one switch that may become a pause is down, the player has no way
   * to answer a cue. If the last cue calls their lane unsafe and no dodge is on its way, the
   * hold is reached early, just before the next step (`HOLD_GUARD_MARGIN_MS`), with the dodge
   * the cue asks for in dodge mode: the car is paused where it is safe to be, at every speed
   * (docs/GAME_RULES.md, "Hold to pause"). A release before then leaves the player to answer
   * the cue with their next press, as always. Armed on each step and on each press. */
  #armHoldGuard() {
    clearTimeout(this.#holdGuard);
    if (!this.inputs.holdingInRace || !playing(this.state)) return;
    const step = this.state.step;
    const unanswered = () => this.dodgedStep !== step && dodgeMoves(this.state.lane, this.state.safeLanes).length > 0;
    if (!unanswered()) return;
    const due = this.#stepArrivedAt + this.state.interval - HOLD_GUARD_MARGIN_MS;
    this.#holdGuard = setTimeout(() => {
      if (!this.inputs.holdingInRace || !playing(this.state) || this.state.step !== step || !unanswered()) return;
      if (this.inputs.switchMode === "dodge") this.dodge();
      this.inputs.hold.reachNow();
    }, Math.max(0, due - performance.now()));
  }

  /** The one switch in "dodge": to the nearest lane the last cue called safe (both moves at
   * once when it is two lanes away: the cue only names lanes reachable through free cells).
   * Already safe: a short tick, nothing sent. */
  dodge() {
    if (!playing(this.state)) return;
    // One dodge a step: a second press before the server's "moved" arrives must not send the
    // same moves again.
    const directions = this.dodgedStep === this.state.step ? [] : dodgeMoves(this.state.lane, this.state.safeLanes);
    if (directions.length) this.dodgedStep = this.state.step;
    if (directions.length === 0) this.sounds.scanTick("stay");
    for (const direction of directions) this.socket.move(direction, this.state.step);
  }

  toggleHelp(open = this.helpPanel.hidden) {
    this.helpPanel.hidden = !open;
    this.helpButton.setAttribute("aria-expanded", String(open));
    if (open) this.announcer.sayNow(t("say.helpOpened", { count: this.helpPanel.querySelectorAll("li").length }));
  }

  #wireButtons() {
    this.hud.pause.addEventListener("click", () => this.togglePause());
    this.hud.quit.addEventListener("click", () => this.quit());
    this.helpButton.addEventListener("click", () => this.toggleHelp());
  }

  #wireSocket() {
    // One connection has at most one game, so every message is about this one.
    this.socket.on("message", (message) => {
      const before = this.state;
      this.state = reduce(this.state, message);
      if (message.type === "step") this.#stepArrivedAt = performance.now();
      this.#react(message, before);
      this.#render();
      if (message.type === "step" || message.type === "moved") this.#armHoldGuard();
    });
  }

  /** Sound, vibration, speech and focus for each server event. */
  #react(message, before) {
    const s = this.settings;
    const say = (text, options) => { if (s.announcements) this.announcer.say(text, options); };
    switch (message.type) {
      case "started":
      case "snapshot":
        this.inputs.menu.stop();
        this.audio.release();
        this.haptics.held = false;
        this.effects.clearBanner();
        this.focusRoad();
        if (this.inputs.scanning && this.state.phase === "running") this.inputs.scanner.start();
        if (message.type === "started") say(t("say.started", { level: t(`levels.${message.game.level}`) }));
        // A game taken back is resumed by the server at once: a paused snapshot is followed by
        // "resumed", so it is announced then, as running (never "press P to go on", which
        // would tell the player to pause a game that already runs).
        else if (message.game.paused) this.backAtScore = message.game.score;
        else say(t("say.resumedGame", { score: message.game.score }));
        break;
      case "step":
        this.sounds.cue(s.audioCueMode, message.safeLanes ?? [], message.interval);
        if (message.haptic) this.haptics.play("step");
        // As often as the player chose (every 25 points unless changed). Low priority: the
        // announcer drops it rather than queue it while other words wait or the last ones
        // were said under its gap ago, so even every point at Rapid builds no backlog, and
        // the score heard is always the score of that moment, never a late one.
        if (reachesScoreMark(before.score, message.score, s.scoreAnnouncementEvery)) {
          say(t("say.score", { score: formatNumber(message.score) }), { low: true });
        }
        break;
      case "moved":
        this.sounds.laneChange(s.laneChangeCue, message.lane, message.safe);
        if (message.haptic) this.haptics.play("move");
        break;
      case "bump":
        this.sounds.bump(message.direction);
        this.haptics.play("bump");
        this.effects.showBanner(t("banners.bump", { side: laneName(message.direction === "left" ? 0 : 2) }), "bump");
        break;
      case "speedUpSoon":
        this.sounds.speedUpSoon();
        this.effects.showBanner(t("banners.speedUpSoon", { score: message.atScore }), "speed");
        say(t("say.speedUpSoon", { score: message.atScore }));
        break;
      case "speedUp":
        this.sounds.speedUp();
        this.effects.showBanner(t("banners.speedUp"), "speed");
        say(t("say.speedUp", { stage: message.stage }));
        break;
      case "crash":
        this.sounds.crash(message.lane);
        this.haptics.play("crash");
        this.inputs.scanner.stop();
        this.effects.showBanner(t("banners.crash"), "crash");
        if (s.announcements) this.announcer.sayNow(t("say.crash", { lane: laneName(message.lane), score: message.score }));
        break;
      case "gameOver": {
        this.inputs.scanner.stop();
        this.inputs.menu.stop();
        this.emit("gameOver", message);  // the page shows its result panel and focuses Play again
        // One switch: it steps through that panel's buttons (Play again first).
        const panel = this.root.querySelector("#game-over");
        const words = this.#gameOverWords(message);
        const choices = () => [...panel.querySelectorAll("button, a[href]")];
        say(s.controls.oneSwitch && panel && !panel.hidden ? this.#scanMenu(choices, words, (names) => t("say.switchChoices", { choices: names })) : words);
        break;
      }
      case "paused": {
        this.audio.hold();
        this.haptics.held = true;
        this.haptics.stop();
        this.inputs.scanner.stop();
        const words = this.autoPaused ? t("say.autoPaused") : t("say.paused");
        // One switch: it steps through Resume and End game, and the words say how to go on.
        if (s.controls.oneSwitch) this.#scanPauseMenu(true, words);
        else say(words);
        this.autoPaused = false;
        break;
      }
      case "resumed":
        this.#endMenuScan();
        this.audio.release();
        this.haptics.held = false;
        if (this.inputs.scanning) this.inputs.scanner.start();
        say(this.backAtScore !== undefined ? t("say.resumedGame", { score: this.backAtScore }) : t("say.resumed"));
        this.backAtScore = undefined;
        break;
      case "detached":
        this.inputs.scanner.stop();
        this.inputs.menu.stop();
        this.audio.hold();
        this.emit("problem", { code: "detached", message: t("errors.detached") });
        break;
      case "error":
        this.emit("problem", message);
        break;
      case "welcome":
        this.emit("welcome", message);
        break;
      default:
        break;
    }
    if (message.quota !== undefined && message.quota !== null) this.emit("quota", message.quota);
  }

  #gameOverWords(result) {
    if (result.practice) return t("say.practiceOver", { score: result.score });
    const parts = [t("say.gameOver", { score: result.score })];
    if (result.personalBest !== null && result.personalBest !== undefined) {
      parts.push(result.newBest ? t("say.newBest") : t("say.best", { best: result.personalBest }));
    }
    if (result.standings?.today?.rank) parts.push(t("say.rankToday", { rank: result.standings.today.rank }));
    return parts.join(" ");
  }

  /** Drawing happens once per animation frame, reading the latest state only. */
  #render(now = false) {
    if (now) {
      this.#draw();
      return;
    }
    if (this.#frame) return;
    this.#frame = requestAnimationFrame(() => {
      this.#frame = 0;
      this.#draw();
    });
  }

  #draw() {
    this.road.render(this.state);
    this.hud.render(this.state);
    this.effects.renderSafeLanes(this.state.safeLanes, inGame(this.state) && this.state.grid !== null);
    this.playArea.dataset.phase = this.state.phase;
    this.effects.showScan(this.inputs.scanner.highlighted, this.inputs.scanning && playing(this.state));
  }
}

/** What a button says (its accessible name is its text in this page). */
function choiceName(element) {
  return (element.getAttribute("aria-label") ?? element.textContent).trim();
}

/** "Resume and End game", in the page's language. */
function listOf(names) {
  try {
    return new Intl.ListFormat(document.documentElement.lang || undefined, { type: "conjunction" }).format(names);
  } catch {
    return names.join(", ");
  }
}
