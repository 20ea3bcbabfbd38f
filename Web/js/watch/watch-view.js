// Someone else's game on screen, read-only: the same road, score, lane, safe-lane strip,
// banners and words a player has (Web/js/game/*), reduced from the frames the server forwards
// to a watcher or a replay (docs/PROTOCOL.md). Sound only once the watcher turns it on (the
// page's checkbox), in their own cue mode and volumes. Nothing here sends anything: the page
// owns the socket.
import { t, formatNumber } from "../app/i18n.js";
import { initialState, reduce } from "../game/state.js";
import { RoadView } from "../game/road-view.js";
import { HudView } from "../game/hud-view.js";
import { EffectsView } from "../game/effects-view.js";
import { laneName, statusText, reachesScoreMark } from "../game/describe.js";
import { keyName } from "../game/controls-help.js";
import { AudioEngine } from "../audio/engine.js";
import { SoundBoard } from "../audio/sounds.js";

// Frames a watcher gets besides the snapshot: each is reduced like the player's own.
const FRAMES = new Set(["step", "moved", "bump", "stepRevised", "speedUpSoon", "speedUp", "crash", "paused", "resumed", "snapshot"]);

export class WatchView {
  state = initialState();
  name = "";
  /** Replays seek: a seek's snapshot is not news to announce. */
  quiet = false;
  #frame = 0;
  #audio = null;
  #sounds = null;

  /** `root` is an <rr-game-view mode="watch"> or mode="replay" (Web/js/game/game-view-element.js). */
  constructor(root, { store, announcer, soundToggle }) {
    this.root = root;
    this.store = store;
    this.announcer = announcer;
    this.playArea = root.querySelector("[data-part='play-area']");
    this.road = new RoadView(root.querySelector("[data-part='road']"));
    this.hud = new HudView(root);
    this.effects = new EffectsView(root);
    this.soundToggle = soundToggle;
    soundToggle.addEventListener("change", () => this.#soundChanged());
    this.playArea.addEventListener("keydown", (event) => this.#key(event));
    store.on("change", ({ settings }) => this.#audio?.configure(settings));
    document.addEventListener("i18n", () => { this.describeKeys(); this.render(true); });
    this.describeKeys();
    this.render(true);
  }

  get soundOn() {
    return this.soundToggle.checked;
  }

  /** A new game to show: `game` is a snapshot as in `started`; `phase` overrides its own. */
  load(game, { name = "", phase } = {}) {
    this.name = name;
    this.state = reduce(initialState(), { type: "snapshot", game });
    if (phase) this.state = { ...this.state, phase };
    this.effects.clearBanner();
    this.render(true);
  }

  /** One forwarded frame; returns false for messages that are not frames. */
  handle(message) {
    if (!FRAMES.has(message.type)) return false;
    const before = this.state;
    // `stepRevised` only says that the `moved` and `step` after it replace that step.
    this.state = reduce(this.state, message);
    if (message.type === "snapshot" && before.phase !== "idle") {
      // A seek or a catch-up: the road changes, the phase stays the page's.
      this.state = { ...this.state, phase: before.phase === "over" ? "paused" : before.phase };
    }
    if (!this.quiet) this.#react(message, before);
    this.render();
    return true;
  }

  setPhase(phase) {
    this.state = { ...this.state, phase };
    if (phase !== "running") this.#audio?.hold();
    else if (this.soundOn) this.#audio?.release();
    this.render();
  }

  end(score) {
    this.#audio?.hold();
    this.state = { ...this.state, phase: "over", score: score ?? this.state.score };
    this.render(true);
  }

  status() {
    return [this.name ? t("watch.watchingName", { name: this.name }) : "", statusText(this.state)].filter(Boolean).join(" ");
  }

  describeKeys() {
    const keys = this.store.settings.controls.keyBindings;
    this.root.querySelector("[data-part='keys-short']").textContent = t("watch.keysShort", {
      status: keyName(keys.announceScore), cue: keyName(keys.repeatCue),
    });
  }

  #key(event) {
    if (event.ctrlKey || event.metaKey || event.altKey || event.repeat) return;
    const keys = this.store.settings.controls.keyBindings;
    if (event.code === keys.announceScore) {
      event.preventDefault();
      this.announcer.sayNow(this.status());
    } else if (event.code === keys.repeatCue && this.soundOn) {
      event.preventDefault();
      const mode = this.store.settings.audioCueMode;
      this.#sounds?.cue(mode === "off" ? "lanePulse" : mode, this.state.safeLanes, this.state.interval);
    }
  }

  #soundChanged() {
    if (this.soundOn) {
      if (!this.#audio) {
        this.#audio = new AudioEngine();
        this.#sounds = new SoundBoard(this.#audio);
        this.#sounds.on("sound", (sound) => this.effects.showSound(sound));
      }
      this.#audio.configure(this.store.settings);
      this.#audio.unlock();  // the checkbox's click is the gesture Web Audio needs
      if (this.state.phase === "running") this.#audio.release();
    } else {
      this.#audio?.hold();
      this.effects.caption.textContent = "";
    }
  }

  #react(message, before) {
    const s = this.store.settings;
    const sound = this.soundOn ? this.#sounds : null;
    const say = (text, options) => { if (s.announcements) this.announcer.say(text, options); };
    const name = this.name;
    switch (message.type) {
      case "step":
        sound?.cue(s.audioCueMode, message.safeLanes ?? [], message.interval);
        // At the watcher's own pace, as in their races (Web/js/game/controller.js).
        if (reachesScoreMark(before.score, message.score, s.scoreAnnouncementEvery)) {
          say(t("watch.sayScore", { name, score: formatNumber(message.score) }), { low: true });
        }
        break;
      case "moved":
        sound?.laneChange(s.laneChangeCue, message.lane, message.safe);
        break;
      case "bump":
        sound?.bump(message.direction);
        this.effects.showBanner(t("banners.bump", { side: laneName(message.direction === "left" ? 0 : 2) }), "bump");
        break;
      case "speedUpSoon":
        sound?.speedUpSoon();
        this.effects.showBanner(t("banners.speedUpSoon", { score: message.atScore }), "speed");
        break;
      case "speedUp":
        sound?.speedUp();
        this.effects.showBanner(t("banners.speedUp"), "speed");
        say(t("watch.saySpeedUp", { name, stage: message.stage }), { low: true });
        break;
      case "crash":
        sound?.crash(message.lane);
        this.effects.showBanner(t("banners.crash"), "crash");
        say(t("watch.sayCrash", { name, lane: laneName(message.lane), score: formatNumber(message.score) }));
        break;
      case "paused":
        this.#audio?.hold();
        say(t(message.reason === "disconnected" ? "watch.sayAway" : "watch.sayPaused", { name }));
        break;
      case "resumed":
        if (this.soundOn) this.#audio?.release();
        say(t("watch.sayResumed", { name }));
        break;
      default:
        break;
    }
  }

  /** Drawing happens once per animation frame, reading the latest state only. */
  render(now = false) {
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
    const onRoad = this.state.grid !== null && this.state.phase !== "idle";
    this.road.render(this.state);
    this.hud.render(this.state);
    this.effects.renderSafeLanes(this.state.safeLanes, onRoad);
    this.playArea.dataset.phase = this.state.phase;
    this.emitDrawn?.();
  }
}
