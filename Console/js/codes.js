// The codes page: every code with its redemptions and state; an admin creates and disables.
import { announce, api, clearError, el, errorText, fillTable, isAdmin, ready, showError, signedIn } from "./console.js";

const errorBox = document.getElementById("codes-error");
const form = document.getElementById("create");
const created = document.getElementById("created");

await signedIn();

async function load() {
  const answer = await api("GET", "/api/codes");
  if (answer.status !== 200) {
    showError(errorBox, errorText(answer));
    return;
  }
  fillTable(document.getElementById("codes-table"), answer.body.codes, (code) => {
    let action = el("td");
    if (isAdmin() && !code.disabledAt) {
      const button = el("button", { type: "button", className: "danger" }, "Disable");
      button.setAttribute("aria-label", `Disable code ${code.grouped}`);
      button.addEventListener("click", () => disable(code));
      action = el("td", {}, button);
    }
    const redeemed = `${code.redemptions}${code.maxRedemptions == null ? "" : ` of ${code.maxRedemptions}`}`;
    return [el("td", {}, code.grouped), el("td", {}, code.kind), el("td", {}, code.window),
            el("td", { className: "number" }, redeemed), el("td", {}, code.status), action];
  }, "No code yet.");
}

async function disable(code) {
  if (!confirm(`Disable code ${code.grouped}? It redeems nothing from now on; its redemptions stand.`)) return;
  clearError(errorBox);
  const answer = await api("POST", `/api/codes/${encodeURIComponent(code.code)}/disable`);
  if (answer.status !== 200) {
    showError(errorBox, errorText(answer));
    return;
  }
  await load();
  announce(answer.body.changed ? `Code ${code.grouped} disabled.` : `Code ${code.grouped} was already disabled.`);
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  clearError(errorBox);
  created.hidden = true;
  const fields = form.elements;
  const body = {};
  if (fields.which.value === "random") body.random = true;
  else {
    body.code = fields.code.value;
    if (fields.force.checked) body.force = true;
  }
  if (fields.kind.value === "unlock") body.unlock = true;
  else {
    body.discount = fields.discount.value.trim();
    body.currency = fields.currency.value.trim().toUpperCase();
  }
  if (fields.expires.value) body.expiresAt = `${fields.expires.value.length === 16 ? `${fields.expires.value}:00` : fields.expires.value}Z`;
  if (fields.cap.value) body.maxRedemptions = Number(fields.cap.value);
  const answer = await api("POST", "/api/codes", body);
  if (answer.status !== 201) {
    showError(errorBox, errorText(answer));
    return;
  }
  created.textContent = `Created ${answer.body.grouped}: ${answer.body.kind}, ${answer.body.window}. Give it out as ${answer.body.grouped}.`;
  created.hidden = false;
  created.focus();
  form.reset();
  await load();
});

await load();
ready();
