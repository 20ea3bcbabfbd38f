// All inputs at once, each one switchable (settings.controls), re-emitted as one stream of
// semantic events: "move" {direction, source}, "pause", "repeatCue", "status", "help",
// "confirm". The cool-down applies to moves from every source; the one switch drives the scanner.
import { Emitter } from "../app/emitter.js";
import { KeyboardInput } from "./keyboard.js";
import { TapInput } from "./tap.js";
import { SwipeInput } from "./swipe.js";
import { WheelInput } from "./wheel.js";
import { GamepadInput } from "./gamepad.js";
import { SwitchScanner } from "./switch-scan.js";
import { Cooldown } from "./cooldown.js";

export class InputHub extends Emitter {
  constructor(surface, { active }) {
    super();
    this.keyboard = new KeyboardInput(window);
    this.tap = new TapInput(surface);
    this.swipe = new SwipeInput(surface);
    this.wheel = new WheelInput(surface);
    this.gamepad = new GamepadInput();
    this.scanner = new SwitchScanner();
    this.cooldown = new Cooldown();
    this.keyboard.active = active;
    this.wheel.active = active;

    for (const source of [this.keyboard, this.tap, this.swipe, this.wheel, this.gamepad, this.scanner]) {
      source.on("move", (detail) => {
        if (this.cooldown.allow()) this.emit("move", detail);
      });
    }
    for (const source of [this.keyboard, this.tap, this.gamepad]) {
      source.on("select", () => {
        if (this.cooldown.allow()) this.scanner.select();
      });
    }
    for (const kind of ["pause", "repeatCue", "status", "help", "confirm"]) {
      this.keyboard.on(kind, (detail) => this.emit(kind, detail));
      this.gamepad.on(kind, (detail) => this.emit(kind, detail));
    }
    this.scanner.on("scan", (detail) => this.emit("scan", detail));
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
    if (!controls.oneSwitch) this.scanner.stop();
    else if (restart) this.scanner.start();
  }
}
