// The Web Audio graph: one context, made on the first user gesture (no sound before it, and
// the browsers' autoplay rules agree), a bus each for cues and effects with their own volume,
// and tone() that schedules one enveloped, panned note. Gains ramp, so nothing clicks.
const ATTACK = 0.008;

export class AudioEngine {
  context = null;
  #buses = {};
  #volumes = { cue: 0.8, effects: 0.8 };
  #mono = false;
  #held = false;  // paused by the game: stay silent until resumed

  constructor(target = window) {
    const unlock = () => this.unlock();
    for (const name of ["pointerdown", "keydown", "touchend"]) {
      target.addEventListener(name, unlock, { capture: true, passive: true });
    }
  }

  /** Makes (or wakes) the context; must run inside a user gesture the first time. */
  unlock() {
    if (!this.context) {
      const Context = window.AudioContext ?? window.webkitAudioContext;
      if (!Context) return;
      this.context = new Context();
      for (const name of ["cue", "effects"]) {
        const bus = this.context.createGain();
        bus.gain.setValueAtTime(this.#volumes[name], this.context.currentTime);
        bus.connect(this.context.destination);
        this.#buses[name] = bus;
      }
    }
    if (!this.#held && this.context.state === "suspended") this.context.resume();
  }

  get running() {
    return this.context?.state === "running" && !this.#held;
  }

  get now() {
    return this.context ? this.context.currentTime : 0;
  }

  configure({ cueVolume = 80, effectsVolume = 80, mono = false }) {
    this.#mono = mono;
    this.#volumes = { cue: cueVolume / 100, effects: effectsVolume / 100 };
    if (!this.context) return;
    const t = this.context.currentTime;
    for (const [name, bus] of Object.entries(this.#buses)) {
      bus.gain.cancelScheduledValues(t);
      bus.gain.setValueAtTime(bus.gain.value, t);
      bus.gain.linearRampToValueAtTime(this.#volumes[name], t + 0.05);
    }
  }

  /** Pause silences everything (WCAG 2.2.2): the context is suspended until resumed. */
  hold() {
    this.#held = true;
    this.context?.suspend();
  }

  release() {
    this.#held = false;
    this.context?.resume();
  }

  /**
   * One note: `frequency` Hz from `at` (context seconds) for `duration` s on `bus`, panned
   * `pan` (−1 left … +1 right; 0 with mono), optionally gliding to `glideTo` Hz.
   * Returns false when no sound can play yet (before the first gesture, or while paused).
   */
  tone({ frequency, at, duration, pan = 0, bus = "cue", wave = "sine", peak = 0.5, glideTo = null, exact = false }) {
    if (!this.context || this.#held) return false;
    const ctx = this.context;
    // `exact`: the caller clamped `at` already (a chord's notes share one start even if the
    // audio clock moves on while they are scheduled).
    const start = exact ? at : Math.max(at, ctx.currentTime);
    const end = start + duration;
    const oscillator = ctx.createOscillator();
    oscillator.type = wave;
    oscillator.frequency.setValueAtTime(frequency, start);
    if (glideTo) oscillator.frequency.exponentialRampToValueAtTime(glideTo, end);
    const envelope = ctx.createGain();
    envelope.gain.setValueAtTime(0, start);
    envelope.gain.linearRampToValueAtTime(peak, start + ATTACK);
    envelope.gain.setValueAtTime(peak, Math.max(start + ATTACK, end - 0.03));
    envelope.gain.linearRampToValueAtTime(0, end);
    const panner = ctx.createStereoPanner();
    panner.pan.setValueAtTime(this.#mono ? 0 : pan, start);
    oscillator.connect(envelope).connect(panner).connect(this.#buses[bus]);
    oscillator.start(start);
    oscillator.stop(end + 0.02);
    return true;
  }
}
