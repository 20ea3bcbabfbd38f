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
//
// A node may also be reached straight, without the site's front relaying every frame
// (docs/OPERATIONS.md, "Game connections straight to the node"): its welcome, or a refusal
// naming it, carries `gameUrl`. A connection that came through the front moves there at once
// (its welcome is not the pages' to see), and a refusal's node is reached there. A straight
// connection that closes before its welcome (the node is gone, or a firewall stands between)
// sends the socket back through the front for a while, where everything works as before.
import { Emitter } from "../app/emitter.js";
import { token, forgetToken } from "./identity.js";

const SUBPROTOCOL = "retrorapid.v1";
const UNAUTHORIZED = 4401;
// After a straight connection to a game URL failed, the front is used this long instead.
const UNREACHABLE_MS = 5 * 60 * 1000;

/** A node's game URL from the server, or null for anything a page should not connect to:
 * ws: only on a page that is not https: itself, and nothing but an address and a path. */
export function gameURL(text) {
  if (typeof text !== "string" || text.length > 200) return null;
  let url;
  try {
    url = new URL(text);
  } catch {
    return null;
  }
  const allowed = url.protocol === "wss:" || (url.protocol === "ws:" && location.protocol !== "https:");
  if (!allowed || url.username || url.password || url.search || url.hash) return null;
  return url.href;
}

export class GameSocket extends Emitter {
  #ws = null;
  #retry = 0;
  #waitMs = 0;  // what the server last asked a reconnect to wait (retryAfter), in ms
  #pingTimer = null;
  #reconnectTimer = null;
  #closedByUs = false;
  #node = null;                // the node to ask nginx for (`/ws?node=`), once one was named
  #direct = null;              // a node's game URL to connect to straight, once one was given
  #connectedDirect = false;    // whether the current connection is a straight one
  #unreachable = new Map();    // game URL -> until when it is passed over (it failed)
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
    let ws;
    try {
      ws = new WebSocket(this.#direct ?? `${scheme}://${location.host}/ws${query}`, SUBPROTOCOL);
    } catch (error) {
      // A game URL the page may not open (its Content-Security-Policy leaves it out, or the
      // browser refuses its port) throws here: the front instead, at once.
      if (this.#direct === null) throw error;
      this.#passOver();
      return;
    }
    this.#ws = ws;
    this.#connectedDirect = this.#direct !== null;
    this.emit("connection", { state: "connecting" });
    ws.addEventListener("open", () => ws.send(JSON.stringify({ type: "hello", token: deviceToken, client: "web" })));
    // A connection left for another node may still deliver: only the current one is heard.
    ws.addEventListener("message", (event) => { if (ws === this.#ws) this.#receive(event.data); });
    ws.addEventListener("close", (event) => this.#closed(ws, event));
    // A straight connection that fails before its welcome goes through the front at once.
    // Chrome reports a socket its Content-Security-Policy blocks with `error` alone, no
    // `close`, so the error is enough.
    ws.addEventListener("error", () => { if (ws === this.#ws && this.#straightFailed()) this.#passOver(); });
  }

  /** Whether the current connection was a straight one that ended before its welcome (and
   * not because the page closed it). */
  #straightFailed() {
    return this.#connectedDirect && this.welcome === null && !this.#closedByUs;
  }

  /** The game URL just tried is passed over for a while; the front instead, at once. */
  #passOver() {
    this.#unreachable.set(this.#direct, Date.now() + UNREACHABLE_MS);
    this.#direct = null;
    this.#retry = 0;
    this.#reconnectNow();
  }

  /** The one entry point for server messages; tests and the tutorial may call it too. */
  handle(message) {
    // A limit refused the hello (too_many_failed_sign_ins): reconnecting sooner is refused too.
    if (message.type === "error" && Number.isInteger(message.retryAfter)) this.#waitMs = message.retryAfter * 1000;
    if (message.type === "error" && typeof message.node === "string" && message.node !== "" && this.#follow(message)) return;
    if (message.type === "welcome") {
      if (this.#moveStraight(message)) return;
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

  /** Moves a connection that came through the front to the node's own game URL its welcome
   * gives: true when it does (the welcome is then not the pages' to see). A straight
   * connection's welcome is taken as it is, so two nodes naming each other cannot bounce it. */
  #moveStraight(welcome) {
    const target = this.#reachable(gameURL(welcome.gameUrl));
    if (target === null || this.#connectedDirect) return false;
    this.#direct = target;
    if (typeof welcome.node === "string") this.#node = welcome.node;
    this.#reconnectNow();
    return true;
  }

  /** The URL, unless a straight connection to it failed lately; else null. */
  #reachable(url) {
    if (url === null || (this.#unreachable.get(url) ?? 0) > Date.now()) return null;
    return url;
  }

  /** Leaves the current connection for a new one at once: not a drop, so its close neither
   * backs off nor tells the pages. */
  #reconnectNow() {
    const old = this.#ws;
    this.#ws = null;
    this.welcome = null;
    clearInterval(this.#pingTimer);
    clearTimeout(this.#reconnectTimer);
    old?.close(1000);
    this.connect();
  }

  /** Follows a refusal that names the node holding what was asked for: true when it does
   * (the refusal is then not the pages' to see), false when the message it answers is
   * unknown or was already sent again once (the pages get the refusal as any other). */
  #follow(error) {
    const refused = this.#lastSent.get(error.inReplyTo);
    if (refused === undefined || this.#followed.has(refused)) return false;
    this.#followed.add(refused);
    this.#node = error.node;
    this.#direct = this.#reachable(gameURL(error.gameUrl));
    this.#resend = refused;
    this.#reconnectNow();
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
    if (this.#straightFailed()) {
      // The node could not be reached straight (closed without `error`, as after a refused
      // hello): through the front, to the same node if it answers there.
      this.#passOver();
      return;
    }
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
