// The overview: this node's live figures and today's counts, refreshed on request (and every
// minute while the page is shown), never by moving anything on the page.
import { barChart } from "./chart.js";
import { announce, api, clearError, el, errorText, fillTable, ready, showError, signedIn, timeText } from "./console.js";

const errorBox = document.getElementById("overview-error");

await signedIn();

function facts(list, pairs) {
  document.getElementById(list).replaceChildren(...pairs.flatMap(([term, value]) => [el("dt", {}, term), el("dd", {}, String(value))]));
}

async function load() {
  const answer = await api("GET", "/api/overview");
  if (answer.status !== 200) {
    showError(errorBox, errorText(answer));
    return false;
  }
  clearError(errorBox);
  const { node, today } = answer.body;
  facts("node-facts", [
    ["Node", node.id],
    ["Games running", node.gamesRunning],
    ["Game connections (players online)", node.gameConnections],
    ["Race rooms open", node.raceRooms],
    ["Connections watching a game", node.watchers],
    ["Connections open (HTTP and game)", node.connectionsOpen],
    ["Games ended since it started", node.gamesEndedSinceStart],
    ["Jobs waiting for the database", node.storageQueue],
  ]);
  document.getElementById("today-heading").textContent = `Today (${today.day}, UTC)`;
  facts("today-facts", [
    ["New players", today.newPlayers],
    ["Games finished", today.gamesFinished],
    ["Free plays used", today.playsUsed],
    ["Orders paid", today.ordersPaid],
  ]);
  const alone = answer.body.cluster.length === 0;
  document.getElementById("cluster-alone").hidden = !alone;
  document.getElementById("cluster-region").hidden = alone;
  fillTable(document.getElementById("cluster-table"), answer.body.cluster, (other) => [
    el("td", {}, other.id), el("td", {}, timeText(other.startedAt)), el("td", {}, timeText(other.lastHeartbeat)),
    el("td", { className: "number" }, String(other.gamesHeld)),
  ], "No node has registered.");
  const { lastHour, lastDay } = answer.body;
  chart("hour-chart", lastHour.map((minute) => minute.gamesRunning), "Games running each minute of the last hour");
  fillTable(document.getElementById("hour-table"), lastHour.slice().reverse(), (minute) => [
    el("td", {}, clock(minute.at)), el("td", { className: "number" }, String(minute.gamesRunning)),
    el("td", { className: "number" }, String(minute.gameConnections)), el("td", { className: "number" }, String(minute.gamesEnded)),
  ], "Nothing sampled yet.");
  chart("day-chart", lastDay.map((hour) => hour.gamesEnded), "Games ended each hour of the last day");
  fillTable(document.getElementById("day-table"), lastDay.slice().reverse(), (hour) => [
    el("td", {}, clock(hour.at)), el("td", { className: "number" }, String(hour.mostGamesRunning)),
    el("td", { className: "number" }, String(hour.gamesEnded)),
  ], "Nothing sampled yet.");
  return true;
}

/** "14:05" in UTC. */
function clock(iso) {
  return iso.slice(11, 16);
}

/** Puts a fresh chart in the figure, after its caption. */
function chart(figureID, values, name) {
  const figure = document.getElementById(figureID);
  figure.querySelector("svg")?.remove();
  figure.prepend(barChart(values, name));
}

document.getElementById("refresh").addEventListener("click", async () => {
  if (await load()) announce("Figures refreshed.");
});

await load();
ready();
setInterval(() => { if (!document.hidden) load(); }, 60_000);
