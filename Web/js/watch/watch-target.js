// What a watch page is asked to show, from its address (?game=ID, ?room=CODE, &seat=N) or from
// what a person typed (a room code, a game ID or a whole watch link), and the words and links
// the watch and replay pages share.
import { t } from "../app/i18n.js";

const ROOM_CODE = /^[A-Za-z0-9]{4,8}$/;
const GAME_ID = /^[A-Za-z0-9_-]{9,64}$/;

/** `{gameId}` or `{room, seat?}` or null. Takes URLSearchParams or typed text. */
export function watchTarget(source) {
  if (typeof source === "string") {
    const text = source.trim();
    if (!text) return null;
    if (text.includes("?")) {
      try {
        return watchTarget(new URL(text, location.origin).searchParams);
      } catch {
        return null;
      }
    }
    const code = text.replace(/[\s-]/g, "");
    if (ROOM_CODE.test(code)) return { room: code.toUpperCase() };
    return GAME_ID.test(text) ? { gameId: text } : null;
  }
  const game = source.get("game");
  if (game) return { gameId: game };
  const room = source.get("room");
  if (!room) return null;
  const seat = Number.parseInt(source.get("seat") ?? "", 10);
  return Number.isInteger(seat) && seat >= 0 ? { room: room.replace(/[\s-]/g, "").toUpperCase(), seat } : { room: room.replace(/[\s-]/g, "").toUpperCase() };
}

export const replayLink = (gameId) => `/replay.html?game=${encodeURIComponent(gameId)}`;
export const watchLink = (gameId) => `/watch.html?game=${encodeURIComponent(gameId)}`;

/** "a crash", "the player ended it", … for a game's end reason. */
export function endReason(reason) {
  const key = `watch.reasons.${reason}`;
  const text = t(key);
  return text === key ? t("watch.reasons.other") : text;
}
