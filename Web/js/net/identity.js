// Who this browser plays as: a device token, made on the first visit (no passwords), kept in
// local storage and sent only in headers and the socket's hello, never in a URL.
import { read, write, remove } from "../app/storage.js";

const KEY = "retrorapid.token";
let pending = null;

/** "Firefox on Linux": what the devices list calls this browser. */
export function deviceLabel() {
  const agent = navigator.userAgent;
  const browser = /Firefox\//.test(agent) ? "Firefox" : /Edg\//.test(agent) ? "Edge"
    : /Chrom(e|ium)\//.test(agent) ? "Chromium" : /Safari\//.test(agent) ? "Safari" : "Browser";
  const system = /Android/.test(agent) ? "Android" : /iPhone|iPad/.test(agent) ? "iOS"
    : /Mac OS X/.test(agent) ? "macOS" : /Windows/.test(agent) ? "Windows" : /Linux/.test(agent) ? "Linux" : "";
  return system ? `${browser} on ${system}` : browser;
}

// When the server refused a new player (429, too many new players from this network or on the
// server): no new request before this time, so the socket's reconnects and every API call in
// the meantime do not ask again for nothing.
let notBefore = 0;

/** The refusal of a new player by a rate limit: `retryAfter` is the whole seconds left. */
function limitedError(message) {
  const error = new Error(message);
  error.code = "rate_limited";
  error.newPlayerLimited = true;
  error.retryAfter = Math.max(1, Math.ceil((notBefore - Date.now()) / 1000));
  return error;
}

/** Seconds until a refused new player may be asked for again; 0 when it may now. */
export function newPlayerWait() {
  return Math.max(0, Math.ceil((notBefore - Date.now()) / 1000));
}

async function createPlayer() {
  if (Date.now() < notBefore) throw limitedError("Too many new players: waiting for Retry-After.");
  const reply = await fetch("/api/v1/players", {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json" },
    body: JSON.stringify({ deviceLabel: deviceLabel() }),
  });
  const body = await reply.json().catch(() => null);
  if (reply.status === 429) {
    const seconds = Number.parseInt(reply.headers.get("Retry-After") ?? "", 10);
    notBefore = Date.now() + (Number.isFinite(seconds) && seconds > 0 ? seconds : 60) * 1000;
    const error = limitedError(body?.error?.message ?? "HTTP 429");
    document.dispatchEvent(new CustomEvent("identity", { detail: { limited: error.retryAfter } }));
    throw error;
  }
  if (!reply.ok) {
    const error = new Error(body?.error?.message ?? `HTTP ${reply.status}`);
    error.code = body?.error?.code ?? "http_" + reply.status;
    throw error;
  }
  write(KEY, body.token);
  document.dispatchEvent(new CustomEvent("identity", { detail: { created: true } }));
  return body.token;
}

/** The device token, creating a player the first time (one request even if asked twice). */
export async function token() {
  const stored = read(KEY);
  if (stored) return stored;
  pending ??= createPlayer().finally(() => { pending = null; });
  return pending;
}

export function hasToken() {
  return Boolean(read(KEY));
}

/** After claiming a link code this device signs in as the other player. */
export function replaceToken(value) {
  write(KEY, value);
}

/** The server no longer knows this token (revoked, or a new database): forget it. */
export function forgetToken() {
  remove(KEY);
}
