// Every refusal of a room message (docs/PROTOCOL.md, "Rooms and races") in the player's
// words, with the way on where there is one (watch a racing room, unlock plays, the play page
// for a game already going). Unknown codes fall back on the server's own message.
import { t, formatTime } from "../app/i18n.js";

const KNOWN = new Set(["room_not_found", "room_full", "already_in_room", "race_running", "room_elsewhere",
  "game_in_progress", "too_many_rooms", "shutting_down", "not_in_room", "not_host", "not_ready",
  "already_in_queue", "not_in_queue", "not_started", "bad_message", "offline", "code_empty", "unavailable",
  "rate_limited", "copy_failed"]);

/** The words (and a link, if any) for `error`; `context.code` is the room code it was about. */
export function errorContent(error, context = {}) {
  const parts = [];
  const code = error.code;
  if (code === "no_plays_left") {
    parts.push(t("errors.noPlaysLeft", { time: formatTime(error.resetsAt ?? error.quota?.resetsAt) }));
    parts.push(" ", link(error.unlock ?? "/unlock.html", t("play.unlockLink")));
    return parts;
  }
  if (!KNOWN.has(code)) return [error.message ?? t("errors.generic")];
  const room = context.code ?? "";
  parts.push(t(`race.errors.${code}`, { code: room, node: error.node ?? "", message: error.message ?? "" }));
  if (code === "not_ready" && error.message) parts.push(" ", t("race.serverSays", { message: error.message }));
  if (code === "race_running" && room) parts.push(" ", link(`/watch.html?room=${encodeURIComponent(room)}`, t("race.watchLink")));
  if (code === "game_in_progress") parts.push(" ", link("/", t("race.playPageLink")));
  return parts;
}

function link(href, text) {
  const anchor = document.createElement("a");
  anchor.href = href;
  anchor.textContent = text;
  return anchor;
}

// What each message element shows, so a change of language says it again in the new one
// (the player's language can arrive after a refusal: a link joins at once after load).
const shown = new Map();

/** Shows `error` in the message element `target` (role=status, next to what caused it). */
export function showError(target, error, context) {
  shown.set(target, () => showError(target, error, context));
  target.className = "message bad";
  target.replaceChildren(...errorContent(error, context));
}

/** Shows the string `key` (with `values`) as good news in `target`. */
export function showGood(target, key, values = {}) {
  shown.set(target, () => showGood(target, key, values));
  target.className = "message good";
  target.textContent = t(key, values);
}

/** Shows the string `key` as plain news in `target`, with `extra` nodes after it. */
export function showNote(target, key, values = {}, extra = () => []) {
  shown.set(target, () => showNote(target, key, values, extra));
  target.className = "message";
  target.replaceChildren(t(key, values), ...extra());
}

export function clearMessage(target) {
  shown.delete(target);
  target.className = "message";
  target.textContent = "";
}

document.addEventListener("i18n", () => {
  for (const again of [...shown.values()]) again();
});
