// The game socket (docs/PROTOCOL.md): /ws with subprotocol retrorapid.v1, hello with the device
// token first, then server messages handed to listeners by their `type`. It reconnects on its
// own and pings so an idle page is never timed out. It sends what the player asked for and
// never decides an outcome: every result comes back from the server.
import { Emitter } from "../app/emitter.js";
import { token, forgetToken } from "./identity.js";

const SUBPROTOCOL = "retrorapid.v1";
const UNAUTHORIZED = 4401;

export class GameSocket extends Emitter {
  #ws = null;
  #retry = 0;
  #waitMs = 0;  // what the server last asked a reconnect to wait (retryAfter), in ms
  #pingTimer = null;
  #reconnectTimer = null;
  #closedByUs = false;
  welcome = null;

  get connected() {
    return this.#ws?.readyState === WebSocket.OPEN && this.welcome !== null;
  }

  async connect() {
    this.#closedByUs = false;
    clearTimeout(this.#reconnectTimer);
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    let deviceToken;
    try {
      deviceToken = await token();
    } catch (error) {
      this.emit("connection", { state: "failed", error });
      this.#scheduleReconnect();
      return;
    }
    const ws = new WebSocket(`${scheme}://${location.host}/ws`, SUBPROTOCOL);
    this.#ws = ws;
    this.emit("connection", { state: "connecting" });
    ws.addEventListener("open", () => ws.send(JSON.stringify({ type: "hello", token: deviceToken, client: "web" })));
    ws.addEventListener("message", (event) => this.#receive(event.data));
    ws.addEventListener("close", (event) => this.#closed(ws, event));
  }

  /** The one entry point for server messages; tests and the tutorial may call it too. */
  handle(message) {
    // A limit refused the hello (too_many_failed_sign_ins): reconnecting sooner is refused too.
    if (message.type === "error" && Number.isInteger(message.retryAfter)) this.#waitMs = message.retryAfter * 1000;
    if (message.type === "welcome") {
      this.welcome = message;
      this.#retry = 0;
      this.#startPings(message.limits?.idleTimeoutSeconds);
      this.emit("connection", { state: "open" });
    }
    this.emit(message.type, message);
    this.emit("message", message);
  }

  send(message) {
    if (!this.connected) return false;
    this.#ws.send(JSON.stringify(message));
    this.emit("sent", message);
    return true;
  }

  start(level, practice = false) { return this.send({ type: "start", level, practice }); }
  move(direction, seenStep) { return this.send({ type: "move", direction, step: seenStep }); }
  pause() { return this.send({ type: "pause" }); }
  resume() { return this.send({ type: "resume" }); }
  quit() { return this.send({ type: "quit" }); }

  close() {
    this.#closedByUs = true;
    clearInterval(this.#pingTimer);
    this.#ws?.close(1000);
  }

  #receive(data) {
    let message;
    try {
      message = JSON.parse(data);
    } catch {
      return;  // The server only sends JSON; anything else is not ours to act on.
    }
    if (message && typeof message.type === "string") this.handle(message);
  }

  #closed(ws, event) {
    if (ws !== this.#ws) return;
    clearInterval(this.#pingTimer);
    this.welcome = null;
    this.emit("connection", { state: "closed", code: event.code });
    if (this.#closedByUs) return;
    if (event.code === UNAUTHORIZED) forgetToken();  // revoked: the next hello uses a new player
    this.#scheduleReconnect();
  }

  #scheduleReconnect() {
    // 0.5 s, 1 s, 2 s … up to 15 s: quick after a blip, gentle on a server that is down; never
    // sooner than a limit said.
    const delay = Math.max(this.#waitMs, Math.min(15000, 500 * 2 ** this.#retry++));
    this.#waitMs = 0;
    this.#reconnectTimer = setTimeout(() => this.connect(), delay);
  }

  #startPings(idleSeconds) {
    clearInterval(this.#pingTimer);
    const every = Math.max(5, Math.floor((idleSeconds ?? 60) / 3)) * 1000;
    this.#pingTimer = setInterval(() => this.send({ type: "ping" }), every);
  }
}
