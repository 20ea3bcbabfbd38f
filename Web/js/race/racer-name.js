// A racer's name in words: their display name, "you" beside the player's own, and a stand-in
// for a racer without one (the seat number, counted from 1).
import { t } from "../app/i18n.js";

export function racerName(racer) {
  const name = typeof racer?.name === "string" ? racer.name.trim() : "";
  return name || t("race.seatName", { seat: (racer?.seat ?? 0) + 1 });
}

/** The name, marked "(you)" for the player's own seat. */
export function racerLabel(racer, you) {
  return racer.seat === you ? t("race.youName", { name: racerName(racer) }) : racerName(racer);
}

/** "Ada, Bo and Cy" in the page's language. */
export function nameList(names) {
  try {
    return new Intl.ListFormat(document.documentElement.lang || undefined, { type: "conjunction" }).format(names);
  } catch {
    return names.join(", ");
  }
}
