// The overview: this node's live figures and today's counts, refreshed on request (and every
// minute while the page is shown), never by moving anything on the page.
import { announce, api, clearError, el, errorText, ready, showError, signedIn } from "./console.js";

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
    ["Game connections", node.gameConnections],
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
  return true;
}

document.getElementById("refresh").addEventListener("click", async () => {
  if (await load()) announce("Figures refreshed.");
});

await load();
ready();
setInterval(() => { if (!document.hidden) load(); }, 60_000);
