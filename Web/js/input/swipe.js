// A horizontal swipe across the road is a move that way; tapping is the single-pointer
// alternative (WCAG 2.5.1). Vertical drags are left to the page so it can still scroll.
import { Emitter } from "../app/emitter.js";

const MIN_TRAVEL = 30;

export class SwipeInput extends Emitter {
  enabled = true;
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
      if (!this.enabled || !down || down.id !== event.pointerId) return;
      const dx = event.clientX - down.x;
      const dy = event.clientY - down.y;
      if (Math.abs(dx) < MIN_TRAVEL || Math.abs(dx) < Math.abs(dy) * 1.5) return;
      this.emit("move", { direction: dx < 0 ? "left" : "right", source: "swipe" });
    });
  }
}
