// Words for what the road shows, for its text alternative and the status key.
import { t, formatNumber } from "../app/i18n.js";

export const laneName = (lane) => t(`lanes.${["left", "middle", "right"][lane] ?? "middle"}`);

export function laneList(lanes) {
  if (!lanes || lanes.length === 0) return t("lanes.none");
  return new Intl.ListFormat(document.documentElement.lang || "en", { type: "conjunction" })
    .format([...lanes].sort().map(laneName));
}

/** "You are in the middle lane. Nearest cars: left lane 2 rows ahead. Safe next: left, middle." */
export function describeRoad(state) {
  if (!state.grid) return t("road.empty");
  const playerRow = state.grid.length - 1;
  const nearest = [0, 1, 2].map((lane) => {
    for (let row = playerRow; row >= 0; row--) if (state.grid[row][lane]) return playerRow - row;
    return null;
  });
  const ahead = nearest
    .map((distance, lane) => (distance === null ? null : t("road.carAhead", { lane: laneName(lane), rows: distance })))
    .filter(Boolean);
  return [
    t("road.youAre", { lane: laneName(state.lane) }),
    ahead.length ? t("road.cars", { list: ahead.join("; ") }) : t("road.noCars"),
    t("road.safe", { lanes: laneList(state.safeLanes) }),
  ].join(" ");
}

export function levelName(level) {
  return level ? t(`levels.${level}`) : "";
}

export function speedText(state) {
  if (!state.interval) return "—";
  const perSecond = (1000 / state.interval).toFixed(1);
  return t("play.speedValue", { level: levelName(state.level), steps: formatNumber(Number(perSecond)) });
}

export function statusText(state) {
  if (state.phase === "running" || state.phase === "paused") {
    return t("say.status", {
      score: state.score, lane: laneName(state.lane), speed: speedText(state),
      state: t(`phases.${state.phase}`), safe: laneList(state.safeLanes),
    });
  }
  return t("say.statusIdle", { state: t(`phases.${state.phase}`) });
}

/** Whether a score going from `before` to `score` reaches a new multiple of `every` (the
 * player's `scoreAnnouncementEvery`): the moment to say it. A step can pass two cars, so the
 * test is a multiple crossed, not hit. 0 never says it: the score is then heard only when the
 * player asks (the status key). */
export function reachesScoreMark(before, score, every) {
  return every > 0 && score > 0 && Math.floor(score / every) > Math.floor(before / every);
}
