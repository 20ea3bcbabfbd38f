// A gamepad through the Gamepad API (standard mapping): d-pad, left stick and shoulder
// buttons move; A is the one switch (or start/resume); Start pauses; Y speaks the status.
// Every button is a simple press: one event on the way down, nothing while held; only the
// one switch also says when it is released, so holding it can pause (Web/js/input/switch-hold.js).
import { Emitter } from "../app/emitter.js";

const BUTTONS = {
  14: { kind: "move", detail: { direction: "left", source: "gamepad" } },   // d-pad left
  15: { kind: "move", detail: { direction: "right", source: "gamepad" } },  // d-pad right
  4: { kind: "move", detail: { direction: "left", source: "gamepad" } },    // left shoulder
  5: { kind: "move", detail: { direction: "right", source: "gamepad" } },   // right shoulder
  9: { kind: "pause" },                                                     // Start
  3: { kind: "status" },                                                    // Y
  0: { kind: "confirm" },                                                   // A
};
const STICK_ON = 0.6;   // past this the stick counts as pushed
const STICK_OFF = 0.3;  // back within this it is centred again (hysteresis: no chatter)

export class GamepadInput extends Emitter {
  enabled = true;
  oneSwitch = false;
  #pressed = new Map();  // "pad:button" → bool
  #stick = new Map();    // pad → -1, 0, 1
  #polling = false;

  constructor() {
    super();
    // A pad shows up after its first button press; poll only while one is connected.
    window.addEventListener("gamepadconnected", () => this.#startPolling());
    if (this.#pads().length) this.#startPolling();
  }

  #pads() {
    return navigator.getGamepads ? [...navigator.getGamepads()].filter(Boolean) : [];
  }

  #startPolling() {
    if (this.#polling) return;
    this.#polling = true;
    const poll = () => {
      const pads = this.#pads();
      if (pads.length === 0) {
        this.#polling = false;
        return;
      }
      if (this.enabled) for (const pad of pads) this.#read(pad);
      requestAnimationFrame(poll);
    };
    requestAnimationFrame(poll);
  }

  #read(pad) {
    pad.buttons.forEach((button, index) => {
      const key = `${pad.index}:${index}`;
      const down = button.pressed || button.value > 0.5;
      const was = this.#pressed.get(key) ?? false;
      if (down && !was) this.#press(index, key);
      if (!down && was && index === 0 && this.oneSwitch) this.emit("switchUp", { source: "gamepad", key });
      this.#pressed.set(key, down);
    });
    const x = pad.axes[0] ?? 0;
    const was = this.#stick.get(pad.index) ?? 0;
    const now = x <= -STICK_ON ? -1 : x >= STICK_ON ? 1 : Math.abs(x) < STICK_OFF ? 0 : was;
    if (now !== 0 && now !== was) this.emit("move", { direction: now < 0 ? "left" : "right", source: "gamepad" });
    this.#stick.set(pad.index, now);
  }

  #press(index, key) {
    const action = BUTTONS[index];
    if (!action) return;
    if (index === 0 && this.oneSwitch) {
      this.emit("switchDown", { source: "gamepad", key });
      this.emit("select", { source: "gamepad" });
    } else this.emit(action.kind, action.detail);
  }
}
