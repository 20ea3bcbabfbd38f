// The HTTP routes of playing together (docs/API.md): the daily road, its board for a day, your
// recent games and a stored game's summary. Same rules as Web/js/net/api.js (JSON, a refusal
// is an ApiError with the server's code); a file of its own so that module stays as it is.
import { ApiError } from "./api.js";
import { token } from "./identity.js";

const BASE = "/api/v1";

async function get(path, { signedIn = true } = {}) {
  const headers = { Accept: "application/json" };
  if (signedIn) headers.Authorization = `Bearer ${await token()}`;
  const reply = await fetch(BASE + path, { headers, cache: "no-store" });
  const text = await reply.text();
  const data = text ? JSON.parse(text) : null;
  if (!reply.ok) throw new ApiError(reply.status, data);
  return data;
}

/** `{day, level, resetsAt, scoredAttempt: null | {gameId, score, rank}}` for today (UTC). */
export const daily = (level) => get(`/daily/${encodeURIComponent(level)}`);

/** The daily board of `day` (YYYY-MM-DD; today when absent), a page at a time. */
export function dailyBoard(level, { day, limit = 10, cursor } = {}) {
  const query = new URLSearchParams({ limit: String(limit) });
  if (day) query.set("day", day);
  if (cursor) query.set("cursor", cursor);
  return get(`/leaderboards/${encodeURIComponent(level)}/daily?${query}`, { signedIn: false });
}

export function dailyAroundMe(level, { day, neighbours = 3 } = {}) {
  const query = new URLSearchParams({ neighbours: String(neighbours) });
  if (day) query.set("day", day);
  return get(`/leaderboards/${encodeURIComponent(level)}/daily/around-me?${query}`);
}

/** Your recent games, newest first; `before` is the last gameId of the previous page. */
export function myGames({ limit = 10, before } = {}) {
  const query = new URLSearchParams({ limit: String(limit) });
  if (before) query.set("before", before);
  return get(`/me/games?${query}`);
}

export const gameSummary = (gameId) => get(`/games/${encodeURIComponent(gameId)}`, { signedIn: false });

/** A race room as anyone with its code sees it (`state`: lobby, countdown, racing, finished). */
export const roomInfo = (code) => get(`/rooms/${encodeURIComponent(code)}`, { signedIn: false });
