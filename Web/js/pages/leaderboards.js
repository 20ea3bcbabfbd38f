// Leaderboards: a level and a period (today, this week, all time; UTC), the top a page at a
// time, the lines around this player with their rank, and when the board starts afresh.
import { startPage, pageReady } from "../app/page.js";
import { t, formatNumber, formatTime } from "../app/i18n.js";
import * as api from "../net/api.js";

const { store } = await startPage();
const topBody = document.querySelector("#top-table tbody");
const meBody = document.querySelector("#me-table tbody");
const moreButton = document.getElementById("top-more");
const status = document.getElementById("board-status");
let nextCursor = null;
let myId = null;

const choice = () => ({
  level: document.querySelector("input[name='board-level']:checked")?.value ?? "fast",
  period: document.querySelector("input[name='board-period']:checked")?.value ?? "today",
});

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
  return tr;
}

async function loadTop(append = false) {
  const { level, period } = choice();
  const page = await api.leaderboard(level, period, { limit: 10, cursor: append ? nextCursor : undefined });
  if (!append) topBody.replaceChildren();
  topBody.append(...page.entries.map(row));
  nextCursor = page.nextCursor ?? null;
  moreButton.hidden = !nextCursor;
  document.getElementById("top-empty").hidden = topBody.children.length > 0;
  const labels = { level: t(`levels.${level}`), period: t(`periods.${period}`), total: formatNumber(page.total) };
  document.getElementById("top-caption").textContent = t("boards.topCaption", labels);
  document.getElementById("board-resets").textContent = page.resetsAt
    ? t("boards.resetsAt", { time: formatTime(page.resetsAt) })
    : t("boards.neverResets");
  return page;
}

async function loadMe() {
  const { level, period } = choice();
  const around = await api.aroundMe(level, period, 3);
  meBody.replaceChildren(...around.entries.map(row));
  document.getElementById("me-caption").textContent = t("boards.meCaption", { level: t(`levels.${level}`), period: t(`periods.${period}`) });
  document.getElementById("me-summary").textContent = around.me
    ? t("boards.myRank", { rank: formatNumber(around.me.rank), total: formatNumber(around.total), score: formatNumber(around.me.score) })
    : t("boards.noScore");
}

async function load() {
  status.className = "message";
  try {
    await Promise.all([loadTop(), loadMe()]);
    const { level, period } = choice();
    status.textContent = t("boards.loaded", { level: t(`levels.${level}`), period: t(`periods.${period}`) });
  } catch (error) {
    status.className = "message bad";
    status.textContent = t("boards.failed", { message: error.message });
  }
}

document.querySelector(`input[name='board-level'][value='${store.settings.speedLevel}']`).checked = true;
document.querySelector("input[name='board-period'][value='today']").checked = true;
document.getElementById("board-choice").addEventListener("change", load);
document.getElementById("board-choice").addEventListener("submit", (event) => event.preventDefault());
moreButton.addEventListener("click", () => loadTop(true).catch((error) => {
  status.className = "message bad";
  status.textContent = t("boards.failed", { message: error.message });
}));
document.addEventListener("i18n", load);

try {
  myId = (await api.me()).player.id;
} catch {
  myId = null;  // the public top still shows
}
await load();
pageReady();
