// Leaderboards: a level and a period (today, this week, all time; UTC), the top a page at a
// time, the lines around this player with their rank, and when the board starts afresh.
import { startPage, pageReady } from "../app/page.js";
import { t, formatNumber, formatTime } from "../app/i18n.js";
import * as api from "../net/api.js";
import * as playTogether from "../net/play-together-api.js";
import { RecentGames } from "../watch/recent-games.js";
import { replayLink } from "../watch/watch-target.js";

const { store } = await startPage();
const topBody = document.querySelector("#top-table tbody");
const meBody = document.querySelector("#me-table tbody");
const moreButton = document.getElementById("top-more");
const status = document.getElementById("board-status");
let nextCursor = null;
let myId = null;

const dayPicker = document.getElementById("board-day");
const todayUTC = () => new Date().toISOString().slice(0, 10);

const choice = () => ({
  level: document.querySelector("input[name='board-level']:checked")?.value ?? "fast",
  period: document.querySelector("input[name='board-period']:checked")?.value ?? "today",
  day: dayPicker.value || todayUTC(),
});

/** "Today", "This week", … and for the daily board "Today's road, 2026-12-01". */
function periodName(period, day) {
  return period === "daily" ? t("daily.boardOn", { day }) : t(`periods.${period}`);
}

/** The daily board's page or the other periods' (the same shape). */
function fetchTop(level, period, day, options) {
  return period === "daily" ? playTogether.dailyBoard(level, { day, ...options }) : api.leaderboard(level, period, options);
}

function fetchAround(level, period, day) {
  return period === "daily" ? playTogether.dailyAroundMe(level, { day, neighbours: 3 }) : api.aroundMe(level, period, 3);
}

/** A row's replay: a link, or why not yet (today's road is hidden from others until the day ends). */
function replayCell(entry, name) {
  const td = document.createElement("td");
  const { period, day } = choice();
  if (!entry.gameId) {
    td.textContent = "—";
  } else if (period === "daily" && day === todayUTC() && entry.playerId !== myId) {
    td.textContent = t("daily.replayLater");
  } else {
    const link = document.createElement("a");
    link.href = replayLink(entry.gameId);
    link.textContent = t("replay.link");
    link.setAttribute("aria-label", t("replay.linkLabel", { name, score: formatNumber(entry.score) }));
    td.append(link);
  }
  return td;
}

function row(entry) {
  const tr = document.createElement("tr");
  if (entry.playerId === myId) tr.className = "me";
  const name = entry.playerId === myId ? t("boards.you", { name: entry.displayName }) : entry.displayName;
  for (const [text, cls] of [[formatNumber(entry.rank), "number"], [name, "name"], [formatNumber(entry.score), "number"], [formatTime(entry.achievedAt), "when"]]) {
    const td = document.createElement("td");
    td.textContent = text;
    if (cls) td.className = cls;
    tr.append(td);
  }
  tr.append(replayCell(entry, entry.displayName));
  return tr;
}

async function loadTop(append = false) {
  const { level, period, day } = choice();
  const page = await fetchTop(level, period, day, { limit: 10, cursor: append ? nextCursor : undefined });
  if (!append) topBody.replaceChildren();
  topBody.append(...page.entries.map(row));
  nextCursor = page.nextCursor ?? null;
  moreButton.hidden = !nextCursor;
  document.getElementById("top-empty").hidden = topBody.children.length > 0;
  const labels = { level: t(`levels.${level}`), period: periodName(period, page.day ?? day), total: formatNumber(page.total) };
  document.getElementById("top-caption").textContent = t("boards.topCaption", labels);
  document.getElementById("board-resets").textContent = page.resetsAt
    ? t("boards.resetsAt", { time: formatTime(page.resetsAt) })
    : t("boards.neverResets");
  return page;
}

async function loadMe() {
  const { level, period, day } = choice();
  const around = await fetchAround(level, period, day);
  meBody.replaceChildren(...around.entries.map(row));
  document.getElementById("me-caption").textContent = t("boards.meCaption", { level: t(`levels.${level}`), period: periodName(period, day) });
  document.getElementById("me-summary").textContent = around.me
    ? t("boards.myRank", { rank: formatNumber(around.me.rank), total: formatNumber(around.total), score: formatNumber(around.me.score) })
    : t("boards.noScore");
}

async function load() {
  status.className = "message";
  try {
    const { level, period, day } = choice();
    document.getElementById("board-day-field").hidden = period !== "daily";
    await Promise.all([loadTop(), loadMe()]);
    status.textContent = t("boards.loaded", { level: t(`levels.${level}`), period: periodName(period, day) });
  } catch (error) {
    status.className = "message bad";
    status.textContent = t("boards.failed", { message: error.message });
  }
}

document.querySelector(`input[name='board-level'][value='${store.settings.speedLevel}']`).checked = true;
document.querySelector("input[name='board-period'][value='today']").checked = true;
document.getElementById("board-choice").addEventListener("change", load);
document.getElementById("board-choice").addEventListener("submit", (event) => event.preventDefault());
// The next page: focus goes to its first row (the button may be gone, and a screen reader
// would not know the table grew).
moreButton.addEventListener("click", async () => {
  const before = topBody.children.length;
  try {
    await loadTop(true);
    if (topBody.children.length > before) (topBody.children[before].querySelector("a") ?? topBody.closest(".table-wrap")).focus();
  } catch (error) {
    status.className = "message bad";
    status.textContent = t("boards.failed", { message: error.message });
  }
});
document.addEventListener("i18n", load);
// The daily board's day: today (UTC) unless a past day is picked; never a day to come.
dayPicker.max = todayUTC();
dayPicker.value = todayUTC();
const recent = new RecentGames(document.getElementById("recent"));
document.addEventListener("i18n", () => recent.render());

try {
  myId = (await api.me()).player.id;
} catch {
  myId = null;  // the public top still shows
}
await Promise.all([load(), recent.load()]);
pageReady();
