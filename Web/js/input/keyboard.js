// Keys → semantic events: "move" {direction}, "pause", "repeatCue", "status", "help",
// "select" (the one switch) and "confirm" (Enter/Space on the road: start or resume).
// One press, one event: auto-repeat is ignored, so a key held down is one move, not many. Keys
// typed into a form control belong to that control. The switch keys also say when they go down
// and up ("switchDown", "switchUp"), so a hold can pause (Web/js/input/switch-hold.js).
import { Emitter } from "../app/emitter.js";

const FORM_FIELD = "input, select, textarea, [contenteditable='true']";

export class KeyboardInput extends Emitter {
  enabled = true;       // the bound move keys
  letterKeys = true;    // A and D as well
  oneSwitch = false;    // Space/Enter act as the switch
  bindings = {};
  /** Whether a game is on: only then are arrows and the switch keys taken from the page. */
  active = () => false;
  /** Whether the switch steps through buttons (paused, game over): then the switch keys are
   * the switch even on the focused button, which the highlight moved focus to. */
  takesButtons = () => false;
  #down = new Set();  // switch keys whose press was taken as the switch and is not yet released

  constructor(target = window) {
    super();
    target.addEventListener("keydown", (event) => this.#keydown(event));
    target.addEventListener("keyup", (event) => this.#keyup(event));
    // A key released while the page has no focus never sends keyup: the press is over.
    window.addEventListener("blur", () => {
      for (const code of this.#down) this.emit("switchUp", { source: "keyboard", key: code });
      this.#down.clear();
    });
  }

  #keydown(event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.target instanceof Element && event.target.closest(FORM_FIELD)) return;
    const action = this.#action(event.code);
    if (!action) return;
    const asSwitch = action.kind === "select";
    if (!(asSwitch && this.takesButtons())) {
      // Outside a game the keys act only while the road has focus (WCAG 2.1.4: single-letter
      // keys are remappable, and otherwise live only on the focused game area); the one
      // switch (Space, Enter) anywhere on the page, so a player with only a switch can start
      // from the page as it loads, before anything has focus.
      const inGame = this.active();
      const onRoad = event.target instanceof Element && event.target.closest("[data-part='play-area']");
      if (!inGame && !onRoad && !asSwitch) return;
      // Enter and Space on a button or link keep their usual meaning.
      const onButtonOrLink = event.target instanceof Element && event.target.closest("button, a");
      if ((action.kind === "confirm" || asSwitch) && onButtonOrLink) return;
    }
    event.preventDefault();  // no scrolling under a moving car, no second click on a button
    if (event.repeat) return;
    if (asSwitch) {
      this.#down.add(event.code);
      this.emit("switchDown", { source: "keyboard", key: event.code });
    }
    this.emit(action.kind, action.detail);
  }

  #keyup(event) {
    if (!this.#down.delete(event.code)) return;
    // Space clicks a focused button on keyup: this press was the switch's, not the button's.
    event.preventDefault();
    this.emit("switchUp", { source: "keyboard", key: event.code });
  }

  #action(code) {
    const b = this.bindings;
    if (this.enabled && code === b.left) return { kind: "move", detail: { direction: "left", source: "keyboard" } };
    if (this.enabled && code === b.right) return { kind: "move", detail: { direction: "right", source: "keyboard" } };
    if (this.enabled && this.letterKeys && code === "KeyA") return { kind: "move", detail: { direction: "left", source: "keyboard" } };
    if (this.enabled && this.letterKeys && code === "KeyD") return { kind: "move", detail: { direction: "right", source: "keyboard" } };
    if (code === b.pause) return { kind: "pause" };
    if (code === b.repeatCue) return { kind: "repeatCue" };
    if (code === b.announceScore) return { kind: "status" };
    if (code === this.helpKey) return { kind: "help" };
    if (this.oneSwitch && (code === "Space" || code === "Enter")) return { kind: "select", detail: { source: "keyboard" } };
    if (code === "Enter" || code === "Space") return { kind: "confirm" };
    return null;
  }

  /** H opens the controls, unless the player bound H to something else; then the slash key. */
  get helpKey() {
    return Object.values(this.bindings).includes("KeyH") ? "Slash" : "KeyH";
  }
}
