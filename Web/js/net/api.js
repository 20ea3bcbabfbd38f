// The HTTP API (docs/API.md, docs/openapi.json): one function per call, JSON in and out.
// Every refusal becomes an ApiError carrying the server's code, message, field and body, so
// pages can explain it; this module never decides what a refusal means for the player.
import { token, replaceToken, forgetToken } from "./identity.js";

const BASE = "/api/v1";

export class ApiError extends Error {
  constructor(status, body) {
    const detail = body?.error ?? {};
    super(detail.message ?? `HTTP ${status}`);
    this.status = status;
    this.code = detail.code ?? "http_" + status;
    this.field = detail.field;
    this.body = body;
  }
}

async function call(method, path, { body, headers = {}, signedIn = true, retried = false } = {}) {
  const init = { method, headers: { Accept: "application/json", ...headers }, cache: "no-store" };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  if (signedIn) init.headers.Authorization = `Bearer ${await token()}`;
  const reply = await fetch(BASE + path, init);
  const text = await reply.text();
  const data = text ? JSON.parse(text) : null;
  if (reply.status === 401 && signedIn && !retried) {
    // The token was revoked or the server's database is new: this browser starts afresh as a
    // new player (pages tell the player, and how to link back from the Devices page).
    forgetToken();
    document.dispatchEvent(new CustomEvent("identity", { detail: { lost: true } }));
    return call(method, path, { body, headers, signedIn, retried: true });
  }
  if (!reply.ok) throw new ApiError(reply.status, data);
  return { data, etag: reply.headers.get("ETag") };
}

const json = async (promise) => (await promise).data;

export const createPlayer = (deviceLabel) =>
  json(call("POST", "/players", { body: { deviceLabel }, signedIn: false }));
export const me = () => json(call("GET", "/me"));
export const setDisplayName = (displayName) => json(call("PATCH", "/me", { body: { displayName } }));
export const quota = () => json(call("GET", "/quota"));
export const devices = () => json(call("GET", "/devices"));
export const revokeDevice = (id) => json(call("DELETE", `/devices/${encodeURIComponent(id)}`));
export const createLinkCode = () => json(call("POST", "/link-codes"));
export const price = () => json(call("GET", "/price"));
export const redeemCode = (code) => json(call("POST", "/codes/redeem", { body: { code } }));
export const createOrder = () => json(call("POST", "/orders"));
export const order = (id) => json(call("GET", `/orders/${encodeURIComponent(id)}`));
export const orders = () => json(call("GET", "/orders"));
export const cancelOrder = (id) => json(call("POST", `/orders/${encodeURIComponent(id)}/cancel`));

/** Joins this device to the player who made `code`; from then on it signs in as them. */
export async function claimLinkCode(code, deviceLabel) {
  const signedIn = await json(call("POST", "/link-codes/claim", { body: { code, deviceLabel }, signedIn: false }));
  replaceToken(signedIn.token);
  return signedIn;
}

export const settings = () => json(call("GET", "/settings"));

/** Changes some settings, based on `version`; a 412 ApiError carries `body.current`. */
/** Where players report an accessibility barrier: `{accessibility: "https://…" | "mailto:…" | null}`. */
export const contact = () => json(call("GET", "/contact", { signedIn: false }));

export const patchSettings = (patch, version) =>
  json(call("PATCH", "/settings", { body: patch, headers: { "If-Match": `"${version}"` } }));

export function leaderboard(level, period, { limit = 10, cursor } = {}) {
  const query = new URLSearchParams({ limit: String(limit) });
  if (cursor) query.set("cursor", cursor);
  return json(call("GET", `/leaderboards/${level}/${period}?${query}`, { signedIn: false }));
}

export const aroundMe = (level, period, neighbours = 3) =>
  json(call("GET", `/leaderboards/${level}/${period}/around-me?neighbours=${neighbours}`));
