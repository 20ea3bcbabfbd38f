// The countdown before a race: a whole second at a time from the server's `startsInMs`, shown
// as a number and heard as a short tone on each second (higher and longer at the start), on
// the effects bus, so the player's effects volume and mono setting apply and a paused or
// silent engine plays nothing. Events: "tick" {seconds} (3, 2, 1), "go".
import { Emitter } from "../app/emitter.js";

const TICK_HZ = 660;
const GO_HZ = 990;

export class Countdown extends Emitter {
  #timer = null;
  #deadline = 0;
  #shown = null;

  constructor(audio) {
    super();
    this.audio = audio;
  }

  get running() {
    return this.#timer !== null;
  }

  /** Seconds left, rounded up (what is on screen). */
  get seconds() {
    return Math.max(0, Math.ceil((this.#deadline - performance.now()) / 1000));
  }

  start(startsInMs) {
    this.stop();
    this.#deadline = performance.now() + Math.max(0, startsInMs);
    this.#shown = null;
    this.#tick();
  }

  stop() {
    clearTimeout(this.#timer);
    this.#timer = null;
  }

  #tick() {
    const left = this.#deadline - performance.now();
    if (left <= 0) {
      this.#timer = null;
      this.#tone(GO_HZ, 0.3);
      this.emit("go");
      return;
    }
    const seconds = Math.ceil(left / 1000);
    if (seconds !== this.#shown) {
      this.#shown = seconds;
      this.#tone(TICK_HZ, 0.09);
      this.emit("tick", { seconds });
    }
    // Wake at the next whole second before the deadline (or the deadline itself).
    const untilNext = left - (seconds - 1) * 1000;
    this.#timer = setTimeout(() => this.#tick(), Math.max(10, untilNext));
  }

  #tone(frequency, duration) {
    this.audio?.tone({ frequency, at: this.audio.now + 0.005, duration, bus: "effects", wave: "triangle", peak: 0.35 });
  }
}
