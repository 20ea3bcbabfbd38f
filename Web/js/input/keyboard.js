// Keys → semantic events: "move" {direction}, "pause", "repeatCue", "status", "help",
// "select" (the one switch) and "confirm" (Enter/Space on the road: start or resume).
// One press, one event: auto-repeat is ignored (ACCESSIBILITY #11). Keys typed into a form
// control belong to that control.
import { Emitter } from "../app/emitter.js";

const FORM_FIELD = "input, select, textarea, [contenteditable='true']";

export class KeyboardInput extends Emitter {
  enabled = true;       // the bound move keys
  letterKeys = true;    // A and D as well
  oneSwitch = false;    // Space/Enter act as the switch
  bindings = {};
  /** Whether a game is on: only then are arrows and the switch keys taken from the page. */
  active = () => false;

  constructor(target = window) {
    super();
    target.addEventListener("keydown", (event) => this.#keydown(event));
  }

  #keydown(event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.target instanceof Element && event.target.closest(FORM_FIELD)) return;
    const action = this.#action(event.code);
    if (!action) return;
    // Outside a game the keys act only while the road has focus (WCAG 2.1.4: single-letter
    // keys are remappable, and otherwise live only on the focused game area).
    const inGame = this.active();
    const onRoad = event.target instanceof Element && event.target.closest("[data-part='play-area']");
    if (!inGame && !onRoad) return;
    // Enter and Space on a button or link keep their usual meaning.
    const onButtonOrLink = event.target instanceof Element && event.target.closest("button, a");
    if ((action.kind === "confirm" || action.kind === "select") && onButtonOrLink) return;
    event.preventDefault();  // no scrolling under a moving car
    if (event.repeat) return;
    this.emit(action.kind, action.detail);
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
