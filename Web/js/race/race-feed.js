// The socket as the race's GameController sees it (Web/js/game/controller.js): the same
// sends (move, pause, resume, quit), and the game's own messages. A race's `started` comes at
// the countdown's start, but the road only runs from the deadline (a move before it is refused
// `not_started`), so it is held back until the deadline or the first `step`, whichever comes
// first: the controller then starts the road, its keys and its cues exactly when the race does.
// Refusals of the room's own messages are the page's to show, not the game's.
import { Emitter } from "../app/emitter.js";

export const ROOM_MESSAGES = new Set(["openRoom", "joinRoom", "ready", "startRace", "leaveRoom", "quickRace", "leaveQueue"]);
// The game's own frames (docs/PROTOCOL.md, "Server → client"); the room's and the race's
// messages (room, standings, watchers…) leave a held start waiting.
const GAME_MESSAGES = new Set(["step", "moved", "bump", "stepRevised", "speedUpSoon", "speedUp", "crash", "gameOver",
  "paused", "resumed", "snapshot", "detached"]);
// A `started` held with no countdown seen: long enough for the countdown to arrive after it.
const HOLD_WITHOUT_COUNTDOWN_MS = 15000;

export class RaceFeed extends Emitter {
  #socket;
  #held = null;
  #deadline = null;  // performance.now() at which the race starts, from the last countdown
  #timer = null;

  constructor(socket) {
    super();
    this.#socket = socket;
    socket.on("message", (message) => this.#receive(message));
  }

  /** Whether a race's `started` waits for the deadline. */
  get holding() {
    return this.#held !== null;
  }

  start(level, practice = false) { return this.#socket.start(level, practice); }
  move(direction, seenStep) { return this.#socket.move(direction, seenStep); }
  pause() { return this.#socket.pause(); }
  resume() { return this.#socket.resume(); }
  quit() { return this.#socket.quit(); }

  #receive(message) {
    switch (message.type) {
      case "countdown":
        this.#deadline = performance.now() + Math.max(0, Number(message.startsInMs) || 0);
        if (this.#held) this.#schedule();
        return;  // the page's, not the game's
      case "started":
        if (message.game?.race && this.#waitFor()) {
          this.#held = message;
          this.#schedule();
          return;
        }
        break;
      case "error":
        if (ROOM_MESSAGES.has(message.inReplyTo)) return;
        break;
      default:
        // Anything of the game's own (its first step) releases a held start before it.
        if (this.#held && GAME_MESSAGES.has(message.type)) this.release();
    }
    this.emit("message", message);
  }

  /** Hands the held `started` to the controller now. */
  release() {
    clearTimeout(this.#timer);
    this.#timer = null;
    const held = this.#held;
    this.#held = null;
    this.#deadline = null;
    if (held) {
      this.emit("message", held);
      this.emit("released", held);
    }
  }

  #waitFor() {
    return this.#deadline === null || this.#deadline > performance.now();
  }

  #schedule() {
    clearTimeout(this.#timer);
    const wait = this.#deadline === null ? HOLD_WITHOUT_COUNTDOWN_MS : Math.max(0, this.#deadline - performance.now());
    this.#timer = setTimeout(() => this.release(), wait);
  }
}
