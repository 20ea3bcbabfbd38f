// The game socket (docs/PROTOCOL.md): /ws with subprotocol retrorapid.v1, hello with the device
// token first, then server messages handed to listeners by their `type`. It reconnects on its
// own and pings so an idle page is never timed out. It sends what the player asked for and
// never decides an outcome: every result comes back from the server.
//
// Behind a cluster (docs/OPERATIONS.md, "Scale out") a room, a race's games and a watched game
// live on one node. A refusal that names that node (an `error` with `node`: room_elsewhere,
// watch_elsewhere, game_elsewhere) is followed here, so pages never see it: the socket
// connects again to /ws?node=<node>, which nginx sends to that node, says hello, and sends the
// refused message again, once. Later reconnects ask for the same node while it answers.
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
  #node = null;                // the node to ask nginx for (`/ws?node=`), once one was named
  #lastSent = new Map();       // type -> the last message of that type sent, to send again
  #followed = new WeakSet();   // messages already sent again on a named node: never twice
  #resend = null;              // the refused message, sent again after the next welcome
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
    const query = this.#node === null ? "" : `?node=${encodeURIComponent(this.#node)}`;
    const ws = new WebSocket(`${scheme}://${location.host}/ws${query}`, SUBPROTOCOL);
    this.#ws = ws;
    this.emit("connection", { state: "connecting" });
    ws.addEventListener("open", () => ws.send(JSON.stringify({ type: "hello", token: deviceToken, client: "web" })));
    // A connection left for another node may still deliver: only the current one is heard.
    ws.addEventListener("message", (event) => { if (ws === this.#ws) this.#receive(event.data); });
    ws.addEventListener("close", (event) => this.#closed(ws, event));
  }

  /** The one entry point for server messages; tests and the tutorial may call it too. */
  handle(message) {
    // A limit refused the hello (too_many_failed_sign_ins): reconnecting sooner is refused too.
    if (message.type === "error" && Number.isInteger(message.retryAfter)) this.#waitMs = message.retryAfter * 1000;
    if (message.type === "error" && typeof message.node === "string" && message.node !== "" && this.#follow(message)) return;
    if (message.type === "welcome") {
      this.welcome = message;
      this.#retry = 0;
      // Asked for a node that is gone (nginx gave another) or a server that is no node: any
      // node will do from now on.
      if (this.#node !== null && message.node !== this.#node) this.#node = null;
      this.#startPings(message.limits?.idleTimeoutSeconds);
      this.emit("connection", { state: "open" });
      // The refused message goes first, before anything the pages send on welcome.
      const resend = this.#resend;
      this.#resend = null;
      if (resend !== null) this.send(resend);
    }
    this.emit(message.type, message);
    this.emit("message", message);
  }

  send(message) {
    if (!this.connected) return false;
    this.#ws.send(JSON.stringify(message));
    this.#lastSent.set(message.type, message);
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

  /** Follows a refusal that names the node holding what was asked for: true when it does
   * (the refusal is then not the pages' to see), false when the message it answers is
   * unknown or was already sent again once (the pages get the refusal as any other). */
  #follow(error) {
    const refused = this.#lastSent.get(error.inReplyTo);
    if (refused === undefined || this.#followed.has(refused)) return false;
    this.#followed.add(refused);
    this.#node = error.node;
    this.#resend = refused;
    // Not a drop: the old connection's close neither backs off nor tells the pages.
    const old = this.#ws;
    this.#ws = null;
    this.welcome = null;
    clearInterval(this.#pingTimer);
    clearTimeout(this.#reconnectTimer);
    old?.close(1000);
    this.connect();
    return true;
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
