// Tapping (or clicking) the left or right half of the road is a move that way (ACCESSIBILITY
// #6). It acts on release, so a press can still be cancelled by sliding off (WCAG 2.5.2);
// a press that travels is a swipe, not a tap. In one-switch mode a tap anywhere is the switch.
import { Emitter } from "../app/emitter.js";

const MAX_TRAVEL = 12;

export class TapInput extends Emitter {
  enabled = true;
  oneSwitch = false;
  #down = null;

  constructor(surface) {
    super();
    surface.addEventListener("pointerdown", (event) => {
      if (event.isPrimary) this.#down = { x: event.clientX, y: event.clientY, id: event.pointerId };
    });
    surface.addEventListener("pointercancel", () => { this.#down = null; });
    surface.addEventListener("pointerup", (event) => {
      const down = this.#down;
      this.#down = null;
      if (!down || down.id !== event.pointerId) return;
      if (Math.hypot(event.clientX - down.x, event.clientY - down.y) > MAX_TRAVEL) return;
      if (this.oneSwitch) {
        this.emit("select", { source: "tap" });
        return;
      }
      if (!this.enabled) return;
      const box = surface.getBoundingClientRect();
      const direction = event.clientX < box.left + box.width / 2 ? "left" : "right";
      this.emit("move", { direction, source: "tap" });
    });
  }
}
