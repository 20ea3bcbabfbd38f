// The mouse wheel or a trackpad scroll in place of the watch's Digital Crown: enough travel
// one way is one move; the rest of that gesture (trackpads keep scrolling by inertia) is
// ignored until the wheel has been still for a moment.
import { Emitter } from "../app/emitter.js";

const THRESHOLD = 60;   // pixels of scroll for one move
const QUIET_MS = 180;   // stillness that ends a gesture

export class WheelInput extends Emitter {
  enabled = true;
  active = () => false;
  #travel = 0;
  #spent = false;
  #quietTimer = null;

  constructor(surface) {
    super();
    surface.addEventListener("wheel", (event) => this.#wheel(event), { passive: false });
  }

  #wheel(event) {
    if (!this.enabled || !this.active()) return;
    event.preventDefault();  // the road, not the page, takes the scroll during a game
    clearTimeout(this.#quietTimer);
    this.#quietTimer = setTimeout(() => { this.#travel = 0; this.#spent = false; }, QUIET_MS);
    if (this.#spent) return;
    const scale = event.deltaMode === 1 ? 20 : event.deltaMode === 2 ? 400 : 1;
    // Horizontal scroll wins when there is one; down or right means right, like a crown turned forward.
    const delta = (Math.abs(event.deltaX) > Math.abs(event.deltaY) ? event.deltaX : event.deltaY) * scale;
    this.#travel += delta;
    if (Math.abs(this.#travel) >= THRESHOLD) {
      this.emit("move", { direction: this.#travel < 0 ? "left" : "right", source: "wheel" });
      this.#spent = true;
    }
  }
}
