// A replay's controls: Play/Pause, one step back and forward, and a labelled slider over the
// game's steps (arrow keys a step, Page Up/Down ten, Home/End the ends: the native range
// keys). Each asks the server (`replayControl`, docs/PROTOCOL.md); what is shown follows the
// server's `replayState` and frames, never the request.
import { t, formatNumber } from "../app/i18n.js";
import { Emitter } from "../app/emitter.js";

export class ReplayControls extends Emitter {
  steps = 0;
  step = 0;
  playing = false;
  ended = false;
  #dragging = false;

  constructor(root) {
    super();
    this.playButton = root.querySelector("#replay-play");
    this.back = root.querySelector("#replay-back");
    this.forward = root.querySelector("#replay-forward");
    this.slider = root.querySelector("#replay-seek");
    this.position = root.querySelector("#replay-position");
    this.playButton.addEventListener("click", () => this.emit("control", { action: this.playing ? "pause" : "play" }));
    this.back.addEventListener("click", () => this.#seek(this.step - 1));
    this.forward.addEventListener("click", () => this.#seek(this.step + 1));
    // A drag seeks once, where it is let go; keys seek at every press (both fire "change").
    this.slider.addEventListener("pointerdown", () => { this.#dragging = true; });
    this.slider.addEventListener("input", () => this.#showPosition(Number(this.slider.value)));
    this.slider.addEventListener("change", () => {
      this.#dragging = false;
      this.#seek(Number(this.slider.value));
    });
    document.addEventListener("i18n", () => this.render());
  }

  load({ steps, step, playing }) {
    this.steps = steps ?? 0;
    this.step = step ?? 0;
    this.playing = Boolean(playing);
    this.ended = false;
    this.slider.max = String(this.steps);
    this.render();
  }

  /** The replay reached `step` (a frame or a replayState). */
  at(step) {
    if (Number.isInteger(step)) this.step = Math.max(0, Math.min(this.steps, step));
    this.render();
  }

  state({ step, playing, ended }) {
    this.playing = Boolean(playing) && !ended;
    this.ended = Boolean(ended);
    this.at(step);
  }

  describe() {
    return t(this.ended ? "replay.positionEnded" : this.playing ? "replay.positionPlaying" : "replay.positionPaused", {
      step: formatNumber(this.step), steps: formatNumber(this.steps),
    });
  }

  render() {
    this.playButton.textContent = t(this.playing ? "replay.pause" : "replay.play");
    const focused = document.activeElement;
    this.back.disabled = this.step <= 0;
    this.forward.disabled = this.step >= this.steps;
    // A step button that reaches its end under focus would drop focus to the page's start: it
    // goes to the other step button, or the slider when both are at an end.
    if ((focused === this.back || focused === this.forward) && focused.disabled) {
      const other = focused === this.back ? this.forward : this.back;
      (other.disabled ? this.slider : other).focus();
    }
    // While it plays under a screen reader's focus, the slider moves every ten steps only, so
    // its value is not read out at every step.
    const onSlider = document.activeElement === this.slider;
    if (!this.#dragging && (!onSlider || !this.playing || this.step % 10 === 0)) this.slider.value = String(this.step);
    this.slider.setAttribute("aria-valuetext", t("replay.valueText", { step: formatNumber(Number(this.slider.value)), steps: formatNumber(this.steps) }));
    this.#showPosition(Number(this.slider.value));
  }

  #showPosition(step) {
    this.position.textContent = t("replay.position", { step: formatNumber(step), steps: formatNumber(this.steps) });
  }

  #seek(step) {
    const target = Math.max(0, Math.min(this.steps, Math.round(step)));
    this.emit("control", { action: "seek", step: target });
  }
}
