// What changed in the lobby between two `room` messages, in words to say: who joined or left,
// who became ready or not, a new host, and, for the host, that the race can start.
import { t } from "../app/i18n.js";
import { racerName } from "./racer-name.js";
import { startProblem, isHost } from "./room-view.js";

export function roomNews(before, after) {
  if (!before || before.code !== after.code) return [];
  const news = [];
  const old = new Map((before.racers ?? []).map((racer) => [racer.seat, racer]));
  const now = new Map((after.racers ?? []).map((racer) => [racer.seat, racer]));
  for (const [seat, racer] of now) {
    const was = old.get(seat);
    if (!was) { if (seat !== after.you) news.push(t("race.sayJoined", { name: racerName(racer) })); continue; }
    if (was.ready !== racer.ready) {
      if (seat === after.you) news.push(racer.ready ? t("race.sayYouReady") : t("race.sayYouNotReady"));
      else news.push(racer.ready ? t("race.sayReady", { name: racerName(racer) }) : t("race.sayNotReady", { name: racerName(racer) }));
    }
  }
  for (const [seat, racer] of old) if (!now.has(seat)) news.push(t("race.sayLeft", { name: racerName(racer) }));
  if (isHost(after) && !isHost(before)) news.push(t("race.sayYouHost"));
  if (isHost(after) && after.state === "lobby" && startProblem(after) === null && startProblem(before) !== null) {
    news.push(t("race.sayCanStart"));
  }
  return news;
}
