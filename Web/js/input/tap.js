// Tapping (or clicking) the left or right half of the road is a move that way (ACCESSIBILITY
// #6). It acts on release, so a press can still be cancelled by sliding off (WCAG 2.5.2);
// a press that travels is a swipe, not a tap. In one-switch mode a tap anywhere is the switch;
// it says when it goes down and up ("switchDown", "switchUp"), so holding it can pause, and a
// tap held that long is the pause alone (the hub drops its release: Web/js/input/hub.js).
import { Emitter } from "../app/emitter.js";

const MAX_TRAVEL = 12;

export class TapInput extends Emitter {
  enabled = true;
  oneSwitch = false;
  #down = null;

  constructor(surface) {
    super();
    surface.addEventListener("pointerdown", (event) => {
      if (!event.isPrimary) return;
      this.#down = { x: event.clientX, y: event.clientY, id: event.pointerId };
      if (this.oneSwitch) this.emit("switchDown", { source: "tap", key: event.pointerId });
    });
    surface.addEventListener("pointercancel", () => this.#end());
    surface.addEventListener("pointermove", (event) => {
      const down = this.#down;
      if (down && down.id === event.pointerId && Math.hypot(event.clientX - down.x, event.clientY - down.y) > MAX_TRAVEL) this.#end();
    });
    // A long press on a touch screen would open the context menu over the road.
    surface.addEventListener("contextmenu", (event) => { if (this.oneSwitch) event.preventDefault(); });
    surface.addEventListener("pointerup", (event) => {
      const down = this.#down;
      if (!down || down.id !== event.pointerId) return;
      if (Math.hypot(event.clientX - down.x, event.clientY - down.y) > MAX_TRAVEL) {
        this.#end();
        return;
      }
      if (this.oneSwitch) {
        this.emit("select", { source: "tap" });
        this.#end();
        return;
      }
      this.#down = null;
      if (!this.enabled) return;
      const box = surface.getBoundingClientRect();
      const direction = event.clientX < box.left + box.width / 2 ? "left" : "right";
      this.emit("move", { direction, source: "tap" });
    });
  }

  /** The press is over, or no longer a tap (it travelled, or the browser took it). */
  #end() {
    const down = this.#down;
    this.#down = null;
    if (down && this.oneSwitch) this.emit("switchUp", { source: "tap", key: down.id });
  }
}
