// All inputs at once, each one switchable (settings.controls), re-emitted as one stream of
// semantic events: "move" {direction, source}, "pause", "repeatCue", "status", "help",
// "confirm", "switch", "holdStarted", "switchHold". The cool-down applies to moves from every source; the one
// switch drives the scanner (switchMode "scan") or is passed on as "switch" (a dodge, in the
// controller); while a game is paused or over it drives the menu scan over that panel's
// buttons; held during a race it is also "switchHold" (the controller pauses).
import { Emitter } from "../app/emitter.js";
import { KeyboardInput } from "./keyboard.js";
import { TapInput } from "./tap.js";
import { SwipeInput } from "./swipe.js";
import { WheelInput } from "./wheel.js";
import { GamepadInput } from "./gamepad.js";
import { SwitchScanner } from "./switch-scan.js";
import { MenuScanner } from "./menu-scan.js";
import { SwitchHold } from "./switch-hold.js";
import { Cooldown } from "./cooldown.js";

export class InputHub extends Emitter {
  #holdCounts = false;  // the press now down began during a race, so holding it may pause

  constructor(surface, { active, racing = () => false }) {
    super();
    this.keyboard = new KeyboardInput(window);
    this.tap = new TapInput(surface);
    this.swipe = new SwipeInput(surface);
    this.wheel = new WheelInput(surface);
    this.gamepad = new GamepadInput();
    this.scanner = new SwitchScanner();
    this.menu = new MenuScanner();
    this.cooldown = new Cooldown();
    this.keyboard.active = active;
    this.keyboard.takesButtons = () => this.menu.running;
    this.wheel.active = active;
    this.racing = racing;

    for (const source of [this.keyboard, this.tap, this.swipe, this.wheel, this.gamepad, this.scanner]) {
      source.on("move", (detail) => {
        if (this.cooldown.allow()) this.emit("move", detail);
      });
    }
    // The hold: only a press that began in a race pauses it, so a press that resumes a game
    // (on the menu's Resume) and is held on does not pause it again straight away.
    this.hold = new SwitchHold(() => {
      if (this.#holdCounts && this.racing()) this.emit("switchHold");
      else this.hold.held = false;  // nothing happened: the release still counts as a press
    });
    for (const source of [this.keyboard, this.tap, this.gamepad]) {
      source.on("switchDown", ({ key }) => {
        this.#holdCounts = this.racing();
        this.hold.down(`${source.constructor.name}:${key}`);
        if (this.holdingInRace) this.emit("holdStarted");
      });
      source.on("switchUp", ({ key }) => this.hold.up(`${source.constructor.name}:${key}`));
    }
    // The one switch: the menu's highlighted button while paused or after a game; the scan's
    // choice while the scan runs; otherwise "switch", which the controller turns into a dodge
    // during a race (it knows the lane and the cue), or a start or resume outside one, so the
    // switch alone plays. A tap acts on release: one held into a pause was the pause alone.
    for (const source of [this.keyboard, this.tap, this.gamepad]) {
      source.on("select", (detail) => {
        if (source === this.tap && this.hold.held) return;
        if (!this.cooldown.allow()) return;
        if (this.menu.running) this.menu.select();
        else if (this.scanning && this.scanner.running) this.scanner.select();
        else this.emit("switch", { source: detail?.source ?? "switch" });
      });
    }
    for (const kind of ["pause", "repeatCue", "status", "help", "confirm"]) {
      this.keyboard.on(kind, (detail) => this.emit(kind, detail));
      this.gamepad.on(kind, (detail) => this.emit(kind, detail));
    }
    this.scanner.on("scan", (detail) => this.emit("scan", detail));
  }

  /** A press of the one switch that began in a race is down and may yet become a pause. */
  get holdingInRace() {
    return Boolean(this.oneSwitch) && this.#holdCounts && this.hold.counting;
  }

  /** Whether the timed scan runs: one-switch mode with the "scan" scheme. */
  get scanning() {
    return Boolean(this.oneSwitch) && this.switchMode === "scan";
  }

  configure(controls) {
    this.keyboard.enabled = controls.keyboard;
    this.keyboard.letterKeys = controls.letterKeys;
    this.keyboard.bindings = controls.keyBindings;
    this.keyboard.oneSwitch = controls.oneSwitch;
    this.tap.enabled = controls.touch;
    this.tap.oneSwitch = controls.oneSwitch;
    this.swipe.enabled = controls.swipe && !controls.oneSwitch;
    this.wheel.enabled = controls.wheel;
    this.gamepad.enabled = controls.gamepad;
    this.gamepad.oneSwitch = controls.oneSwitch;
    this.cooldown.ms = controls.inputCooldownMs;
    const restart = this.scanner.running && this.scanner.intervalMs !== controls.scanIntervalMs;
    this.scanner.intervalMs = controls.scanIntervalMs;
    this.oneSwitch = controls.oneSwitch;
    this.switchMode = controls.switchMode ?? "dodge";
    if (!this.scanning) this.scanner.stop();
    else if (restart) this.scanner.start();
    if (!this.oneSwitch) {
      this.menu.stop();
      this.hold.up();
    }
  }
}
