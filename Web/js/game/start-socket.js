// The game socket as a GameController (Web/js/game/controller.js) sees it, with its own way
// to start a game and a filter on what reaches it. The play page starts on the chosen road
// (`road: "daily"`); the replay page starts a ghost race (`raceGhost`) and lets the
// controller see only that race's messages, not the replay's frames before it. Everything
// else goes to the real socket (Web/js/net/socket.js) unchanged.
export class StartSocket {
  #socket;
  #start;
  #pass;

  /** `start(level, practice)` sends the start; `pass(message)` returns the message the
   * controller should see (possibly rewritten), or null to keep it from the controller. */
  constructor(socket, { start, pass = (message) => message }) {
    this.#socket = socket;
    this.#start = start;
    this.#pass = pass;
  }

  get connected() {
    return this.#socket.connected;
  }

  get welcome() {
    return this.#socket.welcome;
  }

  on(name, listener) {
    if (name !== "message") return this.#socket.on(name, listener);
    return this.#socket.on(name, (message) => {
      const passed = this.#pass(message);
      if (passed) listener(passed);
    });
  }

  start(level, practice = false) { return this.#start(level, practice); }
  send(message) { return this.#socket.send(message); }
  move(direction, seenStep) { return this.#socket.move(direction, seenStep); }
  pause() { return this.#socket.pause(); }
  resume() { return this.#socket.resume(); }
  quit() { return this.#socket.quit(); }
}
